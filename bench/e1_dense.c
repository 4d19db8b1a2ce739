/* SPDX-License-Identifier: MIT */
/*
 * e1_dense.c - seed 001 where it matters (E1 of the suite): a workload
 * dense in disabled tracepoints, under instruction-cache, data-cache and
 * branch-predictor pressure. 512 small functions per variant, each with 4
 * disabled tracepoints (of 64 keys, or 64 flags each on its own cache
 * line, as independent subsystems' would be) around a little work, called
 * through a table in a random order (the text of a variant, ~40-90 KiB,
 * is larger than a 32 KiB L1I; the calls are indirect and unpredictable),
 * with a 16 MiB buffer swept before every round (cold caches):
 *
 *   none   no tracepoint (the floor)
 *   flags  `if (flag[i])`: a load (a cache line each), a test, a branch
 *   keys   `if (static_branch_unlikely(&key[i]))`: one TEST
 *
 * Rounds interleave the variants, the first rotated each round; a sample
 * is ns per call. SY_BENCH_RAW=FILE dumps the samples for sybench.py.
 *
 *   e1_dense [ROUNDS [CALLS]]      defaults 41 and 200000
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard.h>

#include "perfctr.h"
#include "stats.h"

#define NK 64
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
		if (__builtin_expect(df[(n) % NK].on, 0))                      \
			trace(n);                                              \
	} while (0)
#define TPK(n)                                                                 \
	do {                                                                   \
		if (static_branch_unlikely(&dk[(n) % NK]))                     \
			trace(n);                                              \
	} while (0)

/* one function: 4 tracepoints of kind TP around a little dependent work;
 * id is an octal-looking token (000..777), only used in names and as a
 * constant */
#define FN(V, TP, id)                                                          \
	__attribute__((noinline)) static uint32_t V##_##id(uint32_t x)        \
	{                                                                      \
		TP(id##u * 7u + 0);                                            \
		x = x * 33u + id##u;                                           \
		TP(id##u * 7u + 1);                                            \
		x ^= x >> 7;                                                   \
		TP(id##u * 7u + 2);                                            \
		x = x * 17u + 1u;                                              \
		TP(id##u * 7u + 3);                                            \
		return x;                                                      \
	}
#define L1(M, a) M(a##0) M(a##1) M(a##2) M(a##3) M(a##4) M(a##5) M(a##6) M(a##7)
#define L2(M, a) L1(M, a##0) L1(M, a##1) L1(M, a##2) L1(M, a##3)               \
	L1(M, a##4) L1(M, a##5) L1(M, a##6) L1(M, a##7)
#define L3(M) L2(M, 0) L2(M, 1) L2(M, 2) L2(M, 3) L2(M, 4) L2(M, 5) L2(M, 6)   \
	L2(M, 7)
#define NF 512

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

int main(int argc, char **argv)
{
	static const char *const names[NV] = {
		"no tracepoint", "4 flag checks per function",
		"4 static keys per function",
	};
	int rounds = argc > 1 ? atoi(argv[1]) : 41;
	long calls = argc > 2 ? atol(argv[2]) : 200000;
	double *s = malloc(sizeof(*s) * NV * (size_t)(rounds > 0 ? rounds : 1));
	uint16_t *seq = malloc(sizeof(*seq) * (size_t)(calls > 0 ? calls : 1));
	volatile uint8_t *sweep = malloc(SWEEP);
	uint64_t r = 0x9e3779b97f4a7c15ull;
	uint32_t x = 1, sink = 0;
	struct bench_perf pc;

	if (rounds < 3 || calls < 1 || !s || !seq || !sweep) {
		fprintf(stderr, "usage: e1_dense [ROUNDS>=3 [CALLS>=1]]\n");
		return 2;
	}
	for (long i = 0; i < calls; i++) {
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		seq[i] = (uint16_t)(r % NF);
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
			for (long i = 0; i < calls; i++)
				x = table[v][seq[i]](x);
			s[v * rounds + rd] = (bench_now_ns() - t0) / (double)calls;
			bench_perf_stop(&pc, v, rd, (double)calls);
		}
	sink = x;
	printf("seed 001 under pressure: ns per call, %d rounds of %ld calls "
	       "in a random order over %d functions, caches swept before each "
	       "round (result %u)\n", rounds, calls, NF, sink);
	for (int v = 0; v < NV; v++) {
		struct bench_summary q = bench_summarize(s + v * rounds,
							 (size_t)rounds);

		printf("  %-28s %7.3f [%7.3f, %7.3f]\n", names[v], q.median,
		       q.lo, q.hi);
		bench_raw("dense tracepoints, cold", names[v], "ns/call",
			  s + v * rounds, rounds);
		bench_perf_raw(&pc, v, "dense tracepoints, cold", names[v],
			       "ns/call");
	}
	bench_perf_close(&pc);
	free(s);
	free(seq);
	free((void *)sweep);
	if (fired) {
		fprintf(stderr, "e1_dense: a disabled tracepoint fired\n");
		return 1;
	}
	return 0;
}
