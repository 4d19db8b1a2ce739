/* SPDX-License-Identifier: MIT */
/*
 * fastpath.c - functions identical but for a disabled site or a flag check,
 * each called CALLS times; run under callgrind by check_fastpath.sh, which
 * compares instructions per call.
 */
#include <switchyard.h>

#define CALLS 1000

DEFINE_STATIC_KEY_FALSE(fp_key);
volatile int fp_flag;
volatile int fp_sink;

__attribute__((noinline)) void fp_slow(int x) { fp_sink = x; }

__attribute__((noinline)) int fp_plain(int x)
{
	return x + 1;
}

__attribute__((noinline)) int fp_site(int x)
{
	if (static_branch_unlikely(&fp_key))
		fp_slow(x);
	return x + 1;
}

__attribute__((noinline)) int fp_flagcheck(int x)
{
	if (__builtin_expect(fp_flag, 0))
		fp_slow(x);
	return x + 1;
}

int main(void)
{
	int s = 0;

	for (int i = 0; i < CALLS; i++) {
		s += fp_plain(i);
		s += fp_site(i);
		s += fp_flagcheck(i);
	}
	return s == 3 * (CALLS * (CALLS + 1) / 2) ? 0 : 1;
}
