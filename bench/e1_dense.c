/* SPDX-License-Identifier: MIT */
/*
 * e1_dense.c - seed 001 where it matters (E1 of the suite): a workload
 * dense in disabled tracepoints, under instruction-cache, data-cache and
 * branch-predictor pressure. 512 small functions per variant, each with 4
 * disabled tracepoints (each its own key, or its own flag on a cache line
 * of its own, as the kernel's tracepoints are: 2,048 flags, 128 KiB of
 * lines, more than an L1D holds) around a little work, called through a
 * table in a random order (the text of a variant, ~40-90 KiB, is larger
 * than a 32 KiB L1I; the calls are indirect and unpredictable), with a
 * 16 MiB buffer swept before every round (cold caches):
 *
 *   none   no tracepoint (the floor)
 *   flags  `if (flag[i])`: a load (a cache line each), a test, a branch
 *   keys   `if (static_branch_unlikely(&key[i]))`: one TEST
 *
 * Rounds interleave the variants, the first rotated each round; a sample
 * is ns per call. SY_BENCH_RAW=FILE dumps the samples for sybench.py.
 * "e1_dense callgrind [CALLS]" is the deterministic lane's run (sybench.py
 * runs it under valgrind --tool=callgrind with the cache and branch
 * simulations): each variant once through its driver v_none, v_flags,
 * v_keys (the names callgrind_annotate attributes the calls to), after a
 * warm-up outside them, no sweep.
 *
 *   e1_dense [ROUNDS [CALLS [FUNCS [DATA_MIB]]]]
 *
 * ROUNDS 41, CALLS 200000; FUNCS (default 512) calls only the first
 * FUNCS functions (32: the text fits the L1I, the warm control); DATA_MIB
 * (default 0) reads a random cache line of a buffer that large with every
 * call, outside the call's dependency chain, as the application's own
 * working set would, evicting the flags' lines from the caches.
 *   e1_dense callgrind [CALLS]     default 20000
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard.h>

#include "perfctr.h"
#include "stats.h"

#define NF 512
#define NK (NF * 4)
#define NV 3

DEFINE_STATIC_KEY_ARRAY_FALSE(dk, NK);
static struct {
	volatile int on;
	char pad[60];
} __attribute__((aligned(64))) df[NK];
static unsigned long fired;

__attribute__((noinline, cold)) static void trace(int i)
{
	__atomic_add_fetch(&fired, (unsigned long)i + 1, __ATOMIC_RELAXED);
}

#define TPN(n) (void)0
#define TPF(n)                                                                 \
	do {                                                                   \
		if (__builtin_expect(df[n].on, 0))                             \
			trace(n);                                              \
	} while (0)
#define TPK(n)                                                                 \
	do {                                                                   \
		if (static_branch_unlikely(&dk[n]))                            \
			trace(n);                                              \
	} while (0)

/* one function: 4 tracepoints of kind TP around a little dependent work;
 * id is a 3-digit token (000..777), used in names and, read as octal
 * (0##id: 0..511), as a
 * constant: tracepoint id * 4 + k of 2,048 */
#define FN(V, TP, id)                                                          \
	__attribute__((noinline)) static uint32_t V##_##id(uint32_t x)        \
	{                                                                      \
		TP(0##id##u * 4u + 0);                                            \
		x = x * 33u + id##u;                                           \
		TP(0##id##u * 4u + 1);                                            \
		x ^= x >> 7;                                                   \
		TP(0##id##u * 4u + 2);                                            \
		x = x * 17u + 1u;                                              \
		TP(0##id##u * 4u + 3);                                            \
		return x;                                                      \
	}
#define L1(M, a) M(a##0) M(a##1) M(a##2) M(a##3) M(a##4) M(a##5) M(a##6) M(a##7)
#define L2(M, a) L1(M, a##0) L1(M, a##1) L1(M, a##2) L1(M, a##3)               \
	L1(M, a##4) L1(M, a##5) L1(M, a##6) L1(M, a##7)
#define L3(M) L2(M, 0) L2(M, 1) L2(M, 2) L2(M, 3) L2(M, 4) L2(M, 5) L2(M, 6)   \
	L2(M, 7)

#define FN_NONE(id) FN(vn, TPN, id)
#define FN_FLAGS(id) FN(vf, TPF, id)
#define FN_KEYS(id) FN(vk, TPK, id)
L3(FN_NONE)
L3(FN_FLAGS)
L3(FN_KEYS)

#define REF_NONE(id) vn_##id,
#define REF_FLAGS(id) vf_##id,
#define REF_KEYS(id) vk_##id,
static uint32_t (*const table[NV][NF])(uint32_t) = {
	{ L3(REF_NONE) }, { L3(REF_FLAGS) }, { L3(REF_KEYS) },
};

#define SWEEP (16u << 20)

/* The callgrind lane's drivers: one function per variant, so that its
 * calls (inclusive costs) are attributed to the variant by name. Not
 * used by the timed rounds, which stay as they were measured. */
#define DRIVER(name, v)                                                        \
	__attribute__((noinline)) static uint32_t name(const uint16_t *seq,   \
						       long calls, uint32_t x) \
	{                                                                      \
		for (long i = 0; i < calls; i++)                               \
			x = table[v][seq[i]](x);                               \
		return x;                                                      \
	}
DRIVER(v_none, 0)
DRIVER(v_flags, 1)
DRIVER(v_keys, 2)
static uint32_t (*const driver[NV])(const uint16_t *, long, uint32_t) = {
	v_none, v_flags, v_keys,
};

/* Steady state for the simulated caches and predictors: each variant
 * warmed just before its driver runs (the others' text would have
 * evicted it), by calls outside the drivers. No 16 MiB sweep here: it
 * cools the data side, and the lane's figures are the I1 misses and the
 * mispredicts of the calls (the flags' loads hit D1 in this run). */
static int run_callgrind(const uint16_t *seq, long calls)
{
	uint32_t x = 1;

	for (int v = 0; v < NV; v++) {
		for (long i = 0; i < calls / 4; i++)
			x = table[v][seq[i]](x);
		x = driver[v](seq, calls, x);
	}
	printf("ran each loop %ld times (result %u)\n", calls, x);
	if (fired) {
		fprintf(stderr, "e1_dense: a disabled tracepoint fired\n");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const names[NV] = {
		"no tracepoint", "4 flag checks per function",
		"4 static keys per function",
	};
	int cg = argc > 1 && !strcmp(argv[1], "callgrind");
	int rounds = cg ? 3 : argc > 1 ? atoi(argv[1]) : 41;
	long calls = argc > 2 ? atol(argv[2]) : cg ? 20000 : 200000;
	int nf = argc > 3 && !cg ? atoi(argv[3]) : NF;
	long data_mib = argc > 4 && !cg ? atol(argv[4]) : 0;
	size_t data_lines = (size_t)(data_mib > 0 ? data_mib : 0) << 14;
	volatile uint8_t *data = NULL;
	uint32_t *didx = NULL;
	uint64_t acc = 0;
	char loop[96];
	double *s = malloc(sizeof(*s) * NV * (size_t)(rounds > 0 ? rounds : 1));
	uint16_t *seq = malloc(sizeof(*seq) * (size_t)(calls > 0 ? calls : 1));
	volatile uint8_t *sweep = malloc(SWEEP);
	uint64_t r = 0x9e3779b97f4a7c15ull;
	uint32_t x = 1, sink = 0;
	struct bench_perf pc;

	if (data_lines) {
		data = malloc(data_lines * 64);
		didx = malloc(sizeof(*didx) * (size_t)(calls > 0 ? calls : 1));
	}
	if (rounds < 3 || calls < 1 || nf < 1 || nf > NF || !s || !seq ||
	    !sweep || (data_lines && (!data || !didx))) {
		fprintf(stderr, "usage: e1_dense [ROUNDS>=3 [CALLS>=1 "
			"[FUNCS 1..%d [DATA_MIB]]]] | callgrind [CALLS>=1]\n",
			NF);
		return 2;
	}
	if (data)
		memset((void *)data, 1, data_lines * 64);
	for (long i = 0; i < calls; i++) {
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		seq[i] = (uint16_t)(r % (unsigned)nf);
		if (didx)
			didx[i] = (uint32_t)((r >> 20) % data_lines);
	}
	if (cg) {
		int ret = run_callgrind(seq, calls);

		free(s);
		free(seq);
		free((void *)sweep);
		return ret;
	}
	for (int v = 0; v < NV; v++)	/* warm up (the sites, the table) */
		for (long i = 0; i < calls / 10; i++)
			x = table[v][seq[i]](x);
	/* the perf lane (SY_BENCH_RAW and counters): the same batches */
	bench_perf_open(&pc, NV, rounds);
	for (int rd = 0; rd < rounds; rd++)
		for (int k = 0; k < NV; k++) {
			int v = (rd + k) % NV;
			double t0;

			for (size_t i = 0; i < SWEEP; i += 64)	/* cold */
				sweep[i]++;
			bench_perf_start(&pc);
			t0 = bench_now_ns();
			/*
			 * The application's data: one line per call, its
			 * address known ahead (not on x's chain), its value
			 * summed apart, so the loads overlap each other and
			 * the calls, and only evict.
			 */
			if (data)
				for (long i = 0; i < calls; i++) {
					acc += data[(size_t)didx[i] * 64];
					x = table[v][seq[i]](x);
				}
			else
				for (long i = 0; i < calls; i++)
					x = table[v][seq[i]](x);
			s[v * rounds + rd] = (bench_now_ns() - t0) / (double)calls;
			bench_perf_stop(&pc, v, rd, (double)calls);
		}
	sink = x + (uint32_t)acc;
	snprintf(loop, sizeof(loop), "dense: %d functions%s", nf,
		 data ? ", a random data line per call" : "");
	printf("seed 001 under pressure: ns per call, %d rounds of %ld calls "
	       "in a random order over %d functions%s, caches swept before "
	       "each round (result %u)\n", rounds, calls, nf,
	       data ? " reading a random line of the data per call" : "",
	       sink);
	for (int v = 0; v < NV; v++) {
		struct bench_summary q = bench_summarize(s + v * rounds,
							 (size_t)rounds);

		printf("  %-28s %7.3f [%7.3f, %7.3f]\n", names[v], q.median,
		       q.lo, q.hi);
		bench_raw(loop, names[v], "ns/call",
			  s + v * rounds, rounds);
		bench_perf_raw(&pc, v, loop, names[v], "ns/call");
	}
	bench_perf_close(&pc);
	free(s);
	free(seq);
	free((void *)sweep);
	free((void *)data);
	free(didx);
	if (fired) {
		fprintf(stderr, "e1_dense: a disabled tracepoint fired\n");
		return 1;
	}
	return 0;
}
