/* SPDX-License-Identifier: MIT */
/*
 * gdb_sc.c - a static call site for tests/gdb/check_gdb_sc.sh: gdb's `next`
 * over the site line must step over the call (patched: single steps inside
 * the rseq section restart at the detour's abort entry; parked: the guard
 * calls the detour), and a backtrace from the target must name outer() and
 * main(). The program checks that the target ran exactly once.
 */
#include <stdio.h>

#include <switchyard.h>

volatile int hits;

__attribute__((noinline)) long sc_target(long x)
{
	hits++;
	return x + 1;
}

DEFINE_STATIC_CALL(gsc, sc_target);

__attribute__((noinline)) long outer(long x)
{
	long r;

	r = static_call(gsc)(x);	/* SITE */
	r += 100;			/* AFTER */
	return r;
}

int main(void)
{
	long r = outer(1);

	printf("gdb_sc: result %ld, %d call(s)\n", r, hits);
	return !(r == 102 && hits == 1);
}
