/* SPDX-License-Identifier: MIT */
/*
 * flip_sites.h - keys with 1, 100, 1,000 and 10,000 sites for
 * peers_flip.c: functions of 100 static_branch_unlikely() sites each, so
 * that a thread can run every site of a key in a loop.
 */
#include <switchyard.h>

DEFINE_STATIC_KEY_FALSE(fk1);
DEFINE_STATIC_KEY_FALSE(fk100);
DEFINE_STATIC_KEY_FALSE(fk1000);
DEFINE_STATIC_KEY_FALSE(fk10000);
volatile int flip_sink;

#define FS(key) if (static_branch_unlikely(&key)) flip_sink++;
#define FS10(key) FS(key) FS(key) FS(key) FS(key) FS(key) FS(key) FS(key) \
	FS(key) FS(key) FS(key)
#define FS100(key) FS10(key) FS10(key) FS10(key) FS10(key) FS10(key) \
	FS10(key) FS10(key) FS10(key) FS10(key) FS10(key)
#define FN100(name, key) __attribute__((noinline)) static void name(void) { FS100(key) }

__attribute__((noinline)) static void f1_0(void) { FS(fk1) }
FN100(f100_0, fk100)
#define FN10(p, key) FN100(p##0, key) FN100(p##1, key) FN100(p##2, key) \
	FN100(p##3, key) FN100(p##4, key) FN100(p##5, key) FN100(p##6, key) \
	FN100(p##7, key) FN100(p##8, key) FN100(p##9, key)
FN10(f1000_, fk1000)
FN10(f10000_0, fk10000) FN10(f10000_1, fk10000) FN10(f10000_2, fk10000)
FN10(f10000_3, fk10000) FN10(f10000_4, fk10000) FN10(f10000_5, fk10000)
FN10(f10000_6, fk10000) FN10(f10000_7, fk10000) FN10(f10000_8, fk10000)
FN10(f10000_9, fk10000)

#define P10(p) p##0, p##1, p##2, p##3, p##4, p##5, p##6, p##7, p##8, p##9
static void (*const flip_fns[])(void) = {
	f1_0, f100_0, P10(f1000_),
	P10(f10000_0), P10(f10000_1), P10(f10000_2), P10(f10000_3),
	P10(f10000_4), P10(f10000_5), P10(f10000_6), P10(f10000_7),
	P10(f10000_8), P10(f10000_9),
};
