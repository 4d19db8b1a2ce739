/* SPDX-License-Identifier: MIT */
/*
 * sc_call_targets.c - call targets of bench_sc_call.c and bench_sc_update.c
 * that live in the executable, in their own translation unit so that no
 * call is inlined or specialised.
 */
#include "sc_call.h"

long sc_tgt_a(long x)
{
	return x * 3 + 1;
}

long sc_tgt_b(long x)
{
	return x * 5 + 1;
}

long (*sc_fp)(long) = sc_tgt_a;

/* Function multiversioning: gcc and clang make sc_clones_tgt a GNU ifunc
 * whose resolver picks a clone by the CPU it runs on; "default" runs on any
 * x86-64 (no CPU feature assumed). Both clones are the same lea. */
#if SC_HAVE_CLONES
__attribute__((target_clones("avx2", "default"))) long sc_clones_tgt(long x)
{
	return x * 3 + 1;
}
#endif
