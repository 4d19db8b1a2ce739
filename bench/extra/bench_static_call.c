/* SPDX-License-Identifier: MIT */
/*
 * bench_static_call.c - the benchmark of doc/BENCHMARKS-HISTORY.md's historical
 * "[6/10] Static calls before patched sites": a static call (then a load of
 * the key's target and an indirect call; since patched sites, the site of
 * arch/x86_64_static_call.h: see e2_calls.c) against what a user would
 * write instead:
 * a direct call (the goal of patched call sites), a function pointer in a
 * global (an ops table's slot), a switch on a mode variable, and a static
 * key choosing between two direct calls. Each variant calls a target in
 * another translation unit (sc_targets.c) N times in a dependency chain
 * (x = f(x)); variants interleaved, the starting one rotated each round;
 * medians with 95% CIs; Mann-Whitney of each against the direct call. The
 * target never changes during a measurement: this is the steady state,
 * perfectly predicted, not the cost of an update.
 */
#include <stdint.h>

#include <switchyard.h>

#include "stats.h"

#define N 10000000
#define ROUNDS 21

long sc_target_a(long x);
long sc_target_b(long x);

DEFINE_STATIC_CALL(bench_sc, sc_target_a);
DEFINE_STATIC_KEY_FALSE(bench_key);
static long (*bench_fp)(long) = sc_target_a;
static int bench_mode;

#define BENCHFN __attribute__((noinline, aligned(64))) static long

BENCHFN v_direct(long x)
{
	for (long i = 0; i < N; i++)
		x = sc_target_a(x);
	return x;
}

BENCHFN v_static_call(long x)
{
	for (long i = 0; i < N; i++)
		x = static_call(bench_sc)(x);
	return x;
}

/* relaxed atomic: loaded every call, as a slot that may change would be */
BENCHFN v_pointer(long x)
{
	for (long i = 0; i < N; i++)
		x = __atomic_load_n(&bench_fp, __ATOMIC_RELAXED)(x);
	return x;
}

BENCHFN v_switch(long x)
{
	for (long i = 0; i < N; i++) {
		switch (__atomic_load_n(&bench_mode, __ATOMIC_RELAXED)) {
		case 0:
			x = sc_target_a(x);
			break;
		default:
			x = sc_target_b(x);
			break;
		}
	}
	return x;
}

BENCHFN v_static_key(long x)
{
	for (long i = 0; i < N; i++)
		x = static_branch_unlikely(&bench_key) ? sc_target_b(x)
						       : sc_target_a(x);
	return x;
}

#define NV 5
static const char *names[NV] = { "direct call", "static_call (today)",
				 "function pointer", "switch on a mode",
				 "static key + direct calls" };

int main(void)
{
	long (*const f[NV])(long) = { v_direct, v_static_call, v_pointer,
				      v_switch, v_static_key };
	static double s[NV][ROUNDS];

	bench_interleave(NV, ROUNDS, f, N, &s[0][0]);
	printf("== one call per iteration, x = f(x) (ns per call)\n");
	for (int v = 0; v < NV; v++) {
		char what[64];

		snprintf(what, sizeof(what), "  %s", names[v]);
		bench_print(what, bench_summarize(s[v], ROUNDS), 1, "ns");
	}
	for (int v = 1; v < NV; v++) {
		double z = bench_mann_whitney_z(s[v], ROUNDS, s[0], ROUNDS);

		printf("  %s %s %s (Mann-Whitney z = %.2f)\n", names[v],
		       bench_verdict(z), names[0], z);
	}
	return 0;
}
