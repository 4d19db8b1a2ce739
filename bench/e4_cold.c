/* SPDX-License-Identifier: MIT */
/*
 * e4_cold.c - seed 003's copies called with a cold instruction cache (E4
 * of the suite). Warm loops (e4_memcpy.c) hold every contender's code
 * in L1I and its branches in the predictor; a program that copies now
 * and then does not. Here every copy follows a walk through 64 KiB of
 * other code (1,024 taken jumps, one per 64-byte line: twice a 32 KiB
 * L1I, so the copy routine's lines are evicted and come back from L2),
 * so each call pays for the code it has to fetch:
 *
 *   evict      the walk alone (the floor to subtract)
 *   sy_memcpy  walk + switchyard_memcpy (the flavour chosen for this CPU)
 *   glibc      walk + glibc's memcpy (the IFUNC's choice for this CPU)
 *   rep        walk + the rep movsb strategy alone (the least code)
 *
 * at sizes 16, 64, 256, 1024 and 4096 bytes, aligned, the same source and
 * destination (data warm: only the code is cold). Contenders are called
 * through a volatile pointer, in batches of 256 (walk + copy) pairs,
 * interleaved round by round with the first rotated. A sample is ns per
 * (walk + copy); the harness subtracts the walk's median. What that
 * leaves is the cold part of a call: the walk is bound by instruction
 * fetch from L2 and leaves the execution units idle, so a copy's
 * execution (measured warm by e4_memcpy.c) overlaps the next walk's
 * fetch, while the fetch of its own code, after the walk, cannot
 * overlap anything (a fence does not change that: LFENCE holds back
 * execution, not fetch; tried, no difference). The walk also displaces
 * some of the branch predictor's targets: a cold call is cold there
 * too, as in a program.
 *
 *   e4_cold [ROUNDS]         default 41; SY_BENCH_RAW=FILE for sybench.py
 *   e4_cold callgrind        200 (walk + copy) pairs in a function
 *                            v_<contender>_<size> of their own, for
 *                            valgrind's instruction and I1 counts
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard.h>

#include "perfctr.h"
#include "stats.h"

#define BATCH 256
#define NSIZES 5

/*
 * The walk: 1,024 cache lines, each starting with a 2-byte jump to the
 * next; never written, so no self-modifying code is involved. The lines
 * map to every set of a 64 KiB or smaller L1I, twice at 32 KiB.
 */
#if defined(__x86_64__)
#define E4_JUMP "jmp 1f\n"
#define E4_FILL ".balign 64, 0xcc\n"	/* int3: never run */
#define E4_RET "ret\n"
#elif defined(__aarch64__)
#define E4_JUMP "b 1f\n"
#define E4_FILL ".balign 64\n"
#define E4_RET "ret\n"
#else
#error "e4_cold: the code walk is written for x86-64 and AArch64"
#endif
__asm__(".pushsection .text.e4_walk, \"ax\", @progbits\n"
	".balign 64\n"
	".globl e4_walk\n"
	".type e4_walk, @function\n"
	"e4_walk:\n"
	".rept 1024\n"
	E4_JUMP
	E4_FILL
	"1:\n"
	".endr\n"
	E4_RET
	".size e4_walk, . - e4_walk\n"
	".popsection\n");
void e4_walk(void);

enum { V_EVICT, V_SY, V_LIBC, V_REP, NV };
static const char *const vname[NV] = { "evict", "sy_memcpy", "glibc", "rep" };
static const unsigned sizes[NSIZES] = { 16, 64, 256, 1024, 4096 };

static switchyard_memcpy_fn fn[NV];
static unsigned char *src, *dst;
static struct bench_perf pc;	/* the perf lane: slot size * NV + contender */

static void *no_copy(void *d, const void *s, size_t n)
{
	(void)s;
	(void)n;
	return d;
}

/* one batch; slot and round say where its counters go (-1: nowhere) */
static __attribute__((noinline)) double batch(switchyard_memcpy_fn f,
					      unsigned n, int slot, int round)
{
	switchyard_memcpy_fn volatile fv = f;
	double t0;

	bench_perf_start(&pc);
	t0 = bench_now_ns();
	for (int i = 0; i < BATCH; i++) {
		e4_walk();
		fv(dst, src, n);
	}
	t0 = (bench_now_ns() - t0) / BATCH;
	bench_perf_stop(&pc, slot, round, BATCH);
	return t0;
}

/*
 * callgrind mode: one function per contender and size, named for the
 * annotation (v_<contender>_<size>), each running K (walk + copy) pairs.
 */
#define CG_FN(v, name, n)						\
	__attribute__((noinline)) void v_##name##_##n(int k);		\
	__attribute__((noinline)) void v_##name##_##n(int k)		\
	{								\
		switchyard_memcpy_fn volatile fv = fn[v];		\
		for (int i = 0; i < k; i++) {				\
			e4_walk();					\
			fv(dst, src, n);				\
		}							\
	}
#define CG_SIZES(v, name)						\
	CG_FN(v, name, 16) CG_FN(v, name, 64) CG_FN(v, name, 256)	\
	CG_FN(v, name, 1024) CG_FN(v, name, 4096)
CG_SIZES(V_EVICT, evict)
CG_SIZES(V_SY, sy_memcpy)
CG_SIZES(V_LIBC, glibc)
CG_SIZES(V_REP, rep)
#define CG_RUN(name, k)							\
	do {								\
		v_##name##_16(k);					\
		v_##name##_64(k);					\
		v_##name##_256(k);					\
		v_##name##_1024(k);					\
		v_##name##_4096(k);					\
	} while (0)

static int check(void)
{
	/* every contender copies what it is asked to, walk or not */
	for (int v = V_SY; v < NV; v++)
		for (int i = 0; i < NSIZES; i++) {
			memset(dst, 0, 4096 + 64);
			e4_walk();
			fn[v](dst, src, sizes[i]);
			if (memcmp(dst, src, sizes[i]) || dst[sizes[i]]) {
				fprintf(stderr, "e4_cold: %s copied %u bytes "
					"wrong\n", vname[v], sizes[i]);
				return 1;
			}
		}
	return 0;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 41;
	double *s;

	fn[V_EVICT] = no_copy;
	fn[V_SY] = switchyard_memcpy;
	fn[V_LIBC] = memcpy;	/* the implementation glibc's IFUNC chose */
	fn[V_REP] = switchyard_memcpy_get_strategy(SWITCHYARD_MEMCPY_REP_MOVSB);
	src = aligned_alloc(64, 4096 + 64);
	dst = aligned_alloc(64, 4096 + 64);
	if (!src || !dst || !fn[V_REP])
		return 1;
	for (int i = 0; i < 4096 + 64; i++)
		src[i] = (unsigned char)(i * 7 + 1);
	if (check())
		return 1;
	if (argc > 1 && !strcmp(argv[1], "callgrind")) {
		enum { K = 200 };

		CG_RUN(evict, K);
		CG_RUN(sy_memcpy, K);
		CG_RUN(glibc, K);
		CG_RUN(rep, K);
		printf("ran each loop %d times\n", K);
		return 0;
	}
	if (rounds < 5)
		rounds = 5;
	s = malloc(sizeof(*s) * NV * NSIZES * (size_t)rounds);
	if (!s)
		return 1;
	bench_perf_open(&pc, NV * NSIZES, rounds);
	uint64_t rng = 0x853c49e6748fea9bull;
	/* warm-up: a few batches of everything, not recorded */
	for (int w = 0; w < 3; w++)
		for (int v = 0; v < NV; v++)
			batch(fn[v], 256, -1, -1);
	for (int r = 0; r < rounds; r++) {
		int ord[NV * NSIZES];

		/* a new order each round (Fisher-Yates, fixed seed): in a
		 * fixed cyclic order each point had the same predecessor,
		 * which biased two identical functions apart (e4_memcpy.c) */
		for (int k = 0; k < NV * NSIZES; k++)
			ord[k] = k;
		for (int k = NV * NSIZES - 1; k > 0; k--) {
			int m, t;

			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			m = (int)(rng % (uint64_t)(k + 1));
			t = ord[k];
			ord[k] = ord[m];
			ord[m] = t;
		}
		for (int k = 0; k < NV * NSIZES; k++) {
			int j = ord[k];
			int v = j % NV, i = j / NV;

			s[(size_t)j * rounds + r] = batch(fn[v], sizes[i], j, r);
		}
	}
	printf("# ns per (64 KiB code walk + copy), medians [95%% CI], "
	       "%d rounds of %d\n", rounds, BATCH);
	for (int i = 0; i < NSIZES; i++) {
		char loop[32];

		snprintf(loop, sizeof(loop), "cold %u", sizes[i]);
		for (int v = 0; v < NV; v++) {
			const double *x = s + (size_t)(i * NV + v) * rounds;
			struct bench_summary m = bench_summarize(x, rounds);

			printf("%-10s %-10s %8.2f [%.2f, %.2f]\n", loop,
			       vname[v], m.median, m.lo, m.hi);
			bench_raw(loop, vname[v], "ns/(walk+copy)", x, rounds);
			bench_perf_raw(&pc, i * NV + v, loop, vname[v],
				       "ns/(walk+copy)");
		}
	}
	bench_perf_close(&pc);
	free(s);
	return 0;
}
