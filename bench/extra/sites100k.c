/* SPDX-License-Identifier: MIT */
/*
 * sites100k.c - a shared object with 100,000 jump label sites over 64 keys
 * (1,000 functions of 100 sites), for the registration benchmark. With
 * SWITCHYARD_NO_PATCHING the same code is 100,000 flag checks: the
 * baseline that isolates what registration costs.
 */
#include <switchyard.h>

DEFINE_STATIC_KEY_ARRAY_FALSE(bench_keys, 64);
volatile int bench_sink;

__attribute__((noinline)) void bench_hit(int n) { bench_sink += n; }

#define SITE(n) if (static_branch_unlikely(&bench_keys[(n) & 63])) bench_hit(n);
#define S10(b) SITE((b)+0) SITE((b)+1) SITE((b)+2) SITE((b)+3) SITE((b)+4) \
	SITE((b)+5) SITE((b)+6) SITE((b)+7) SITE((b)+8) SITE((b)+9)
#define S100(b) S10((b)+0) S10((b)+10) S10((b)+20) S10((b)+30) S10((b)+40) \
	S10((b)+50) S10((b)+60) S10((b)+70) S10((b)+80) S10((b)+90)
#define FN(i) void bench_fn##i(void); void bench_fn##i(void) { S100(i * 100) }
#define FN10(i) FN(i##0) FN(i##1) FN(i##2) FN(i##3) FN(i##4) FN(i##5) \
	FN(i##6) FN(i##7) FN(i##8) FN(i##9)
#define FN100(i) FN10(i##0) FN10(i##1) FN10(i##2) FN10(i##3) FN10(i##4) \
	FN10(i##5) FN10(i##6) FN10(i##7) FN10(i##8) FN10(i##9)

FN100(1) FN100(2) FN100(3) FN100(4) FN100(5)
FN100(6) FN100(7) FN100(8) FN100(9) FN100(10)

/* Calls every function once: 100,000 site executions. */
void bench_run_all(void);
void bench_run_all(void)
{
#define C(i) bench_fn##i();
#define C10(i) C(i##0) C(i##1) C(i##2) C(i##3) C(i##4) C(i##5) C(i##6) C(i##7) C(i##8) C(i##9)
#define C100(i) C10(i##0) C10(i##1) C10(i##2) C10(i##3) C10(i##4) C10(i##5) C10(i##6) C10(i##7) C10(i##8) C10(i##9)
	C100(1) C100(2) C100(3) C100(4) C100(5) C100(6) C100(7) C100(8) C100(9) C100(10)
}
