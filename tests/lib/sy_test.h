/* SPDX-License-Identifier: MIT */
/*
 * sy_test.h - a minimal test harness shared by the C and C++ tests.
 * CHECK() records a failure and goes on; the program exits 1 if any check
 * failed, 77 (ctest SKIP_RETURN_CODE) from SKIP().
 */
#ifndef SY_TEST_H
#define SY_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard.h>

#include "sy_check.h"

/* ---- the site table of this executable ---------------------------------- */

struct sy_test_entry {
	int code;
	int target;
	unsigned long key;
};

#if defined(SY__ARCH_HAVE_JUMP_LABEL)
#define SY_TEST_HAVE_SITES 1
#ifdef __cplusplus
extern "C" {
#endif
extern struct sy_test_entry __start_sy_jump_entries[]
	__attribute__((visibility("hidden")));
extern struct sy_test_entry __stop_sy_jump_entries[]
	__attribute__((visibility("hidden")));
#ifdef __cplusplus
}
#endif

static inline const unsigned char *sy_test_code(const struct sy_test_entry *e)
{
	return (const unsigned char *)&e->code + e->code;
}

static inline const unsigned char *sy_test_target(const struct sy_test_entry *e)
{
	return (const unsigned char *)&e->target + e->target;
}

#if defined(__aarch64__)
/*
 * 1 if the site is a B to its target, 0 if it is a NOP (d503201f), -1 if
 * it holds anything else. The word read once (a thread may flip it).
 */
static inline int sy_test_site_jumps(const struct sy_test_entry *e)
{
	const unsigned char *p = sy_test_code(e);
	unsigned w = __atomic_load_n((const unsigned *)(const void *)p,
				     __ATOMIC_RELAXED);
	long d = (long)(sy_test_target(e) - p);

	if (w == 0xd503201fu)
		return 0;
	if (w == (0x14000000u | ((unsigned)(d >> 2) & 0x03ffffffu)))
		return 1;
	return -1;
}
#else
/*
 * 1 if the site jumps to its target (JMP8 eb rel8, JMP32 e9 rel32), 0 if it
 * falls through (TEST8 a8 rel8, TEST32 a9 rel32, the same rel), -1 if it
 * holds anything else.
 */
static inline int sy_test_site_jumps(const struct sy_test_entry *e)
{
	const unsigned char *p = sy_test_code(e);
	/* The opcode read once: a thread may flip it meanwhile, and at -O0
	 * each p[0] was a new read (a Debug build's runners saw a site
	 * "in neither form", TEST for one comparison, JMP for the next).
	 * The displacement is the same in both forms. */
	unsigned char op = __atomic_load_n(p, __ATOMIC_RELAXED);
	int rel;

	if ((op == 0xeb || op == 0xa8) &&
	    p + 2 + (signed char)p[1] == sy_test_target(e))
		return op == 0xeb;
	memcpy(&rel, p + 1, 4);
	if ((op == 0xe9 || op == 0xa9) && p + 5 + rel == sy_test_target(e))
		return op == 0xe9;
	return -1;
}
#endif

/*
 * Check that every site of key holds the form its state asks for (JMP iff
 * enabled != branch bit). Returns the number of sites of the key.
 */
static inline int sy_test_check_sites(struct static_key *key)
{
	int n = 0;

	for (struct sy_test_entry *e = __start_sy_jump_entries;
	     e < __stop_sy_jump_entries; e++) {
		if ((e->key & ~3ul) != (unsigned long)key)
			continue;
		n++;
		int want = static_key_enabled(key) != (int)(e->key & 1);
		int got = sy_test_site_jumps(e);
		if (got != want) {
			sy_test_failures++;
			fprintf(stderr, "site %p of key %p: jumps=%d, want %d\n",
				(const void *)sy_test_code(e), (void *)key, got,
				want);
		}
		sy_test_checks++;
	}
	return n;
}
#else
#define SY_TEST_HAVE_SITES 0
static inline int sy_test_check_sites(struct static_key *key)
{
	(void)key;
	return 0;
}
#endif

/* ---- capturing the log ------------------------------------------------- */

/* Sized for messages that name a deep checkout's paths, whole. */
static int sy_test_log_count __attribute__((unused));
static char sy_test_log_last[4096] __attribute__((unused));
static char sy_test_log_all[65536] __attribute__((unused));	/* every line */

static inline void sy_test_log(enum switchyard_log_level level, const char *msg,
			void *arg)
{
	size_t n = strlen(sy_test_log_all);

	(void)level;
	(void)arg;
	sy_test_log_count++;
	snprintf(sy_test_log_last, sizeof(sy_test_log_last), "%s", msg);
	snprintf(sy_test_log_all + n, sizeof(sy_test_log_all) - n, "%s\n", msg);
}

#endif /* SY_TEST_H */
