/* SPDX-License-Identifier: MIT */
/*
 * peers_sites.c - the C side of the suite's PEERS disabled-site cost: a
 * loop calling a non-inlined function with 8 disabled sites between small
 * steps of dependent work, per call, as
 *
 *   none   the same work, no site (the floor)
 *   flags  `if (flag[i])`: 8 volatile ints, each on its own cache line
 *          (as independent subsystems' flags would be; bench/e1_dense.c)
 *   keys   `if (static_branch_unlikely(&key[i]))`: 8 switchyard keys
 *
 * The Rust side (bench/peers/rust-static-keys/src/sites.rs) runs the same
 * function, the same loop and the same protocol with an AtomicBool flag
 * (Relaxed) and the static-keys crate, so that the suite can put them
 * next to each other.
 *
 * Two loops, both warm (one function, the same 8 predicted-not-taken
 * branches over and over, the flags in L1: the best case for a flag; the
 * workload where caches and predictors are under pressure is E1's,
 * bench/e1_dense.c):
 *
 *   dependent calls    x = f(x): latency-bound. The sites are off the
 *                      critical path, so an out-of-order core hides them
 *                      in the chain's shadow: expect no difference.
 *   independent calls  sum += f(i): the calls overlap, throughput-bound,
 *                      so the instructions the sites add (a load, a test
 *                      and a branch per flag; a NOP per key) take issue
 *                      slots the work would use.
 *
 * Rounds interleave the variants, the first rotated each round; a sample
 * is ns per call. SY_BENCH_RAW=FILE dumps the samples for sybench.py,
 * and with them the perf lane's (bench/common/perfctr.h): this thread's
 * counters around each timed batch, per call.
 * Self-checks: no site fired while disabled; all three functions compute
 * the same value; after enabling, every site of the flags and the keys
 * fires once per call, and none after disabling again.
 *
 *   peers_sites [ROUNDS [CALLS]]      defaults 31 and 1000000
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <switchyard.h>

#include "perfctr.h"
#include "stats.h"

#define NS 8
#define NV 3		/* variants per loop */

DEFINE_STATIC_KEY_ARRAY_FALSE(pk, NS);
static struct {
	volatile int on;
	char pad[60];
} __attribute__((aligned(64))) pf[NS];
static unsigned long fired;
static long calls;

/* what an enabled site does: out of line, never reached while disabled */
__attribute__((noinline, cold)) static void hit(int i)
{
	(void)i;
	__atomic_add_fetch(&fired, 1, __ATOMIC_RELAXED);
}

/* a step of dependent work between two sites: the same in sites.rs */
#define WORK(i)                                                                \
	do {                                                                   \
		x = x * 33u + (i);                                             \
		x ^= x >> 7;                                                   \
	} while (0)
#define SN(i) (void)0
#define SF(i)                                                                  \
	do {                                                                   \
		if (__builtin_expect(pf[i].on, 0))                             \
			hit(i);                                                \
	} while (0)
#define SK(i)                                                                  \
	do {                                                                   \
		if (static_branch_unlikely(&pk[i]))                            \
			hit(i);                                                \
	} while (0)
#define BODY(S)                                                                \
	S(0); WORK(0u); S(1); WORK(1u); S(2); WORK(2u); S(3); WORK(3u);        \
	S(4); WORK(4u); S(5); WORK(5u); S(6); WORK(6u); S(7); WORK(7u);

/*
 * noipa: no clone specialised for the loop's arguments, no assumption in
 * the caller about what the function reads or clobbers - the loop calls
 * the function nm -S measures, as the Rust side calls its #[no_mangle] one.
 * (gcc's attribute; clang has none: noinline alone there, the suite's
 * figures come from gcc builds.)
 */
#if defined(__GNUC__) && !defined(__clang__)
#define PEER_FN __attribute__((noipa))
#else
#define PEER_FN __attribute__((noinline))
#endif
PEER_FN uint32_t peer_sites_none(uint32_t x)
{
	BODY(SN)
	return x;
}

PEER_FN uint32_t peer_sites_flags(uint32_t x)
{
	BODY(SF)
	return x;
}

PEER_FN uint32_t peer_sites_keys(uint32_t x)
{
	BODY(SK)
	return x;
}

#define LOOP(name, fn)                                                         \
	static long name(long r)                                               \
	{                                                                      \
		uint32_t x = (uint32_t)r;                                      \
		for (long i = 0; i < calls; i++)                               \
			x = fn(x);                                             \
		return (long)x;                                                \
	}
#define ILOOP(name, fn)                                                        \
	static long name(long r)                                               \
	{                                                                      \
		uint32_t sum = (uint32_t)r;                                    \
		for (long i = 0; i < calls; i++)                               \
			sum += fn((uint32_t)i);                                \
		return (long)sum;                                              \
	}
LOOP(loop_none, peer_sites_none)
LOOP(loop_flags, peer_sites_flags)
LOOP(loop_keys, peer_sites_keys)
ILOOP(iloop_none, peer_sites_none)
ILOOP(iloop_flags, peer_sites_flags)
ILOOP(iloop_keys, peer_sites_keys)

static int check(const char *what, unsigned long want)
{
	if (fired == want)
		return 0;
	fprintf(stderr, "peers_sites: %s: %lu sites fired, want %lu\n", what,
		fired, want);
	return 1;
}

/*
 * bench_interleave() (stats.h) with the perf lane: the counters enabled
 * around each batch, inside the clock's readings. A warm-up (rounds
 * counted but not kept: keep 0) runs the same code, so the measured
 * rounds find the counters' path warm too.
 */
static void interleave(struct bench_perf *pc, int nv, int rounds,
		       long (*const *f)(long), long n, double *s, int keep)
{
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < nv; k++) {
			int v = (r + k) % nv;
			double t0;
			volatile long sink;

			bench_perf_start(pc);
			t0 = bench_now_ns();
			sink = f[v](r);
			s[v * rounds + r] = (bench_now_ns() - t0) / (double)n;
			bench_perf_stop(pc, v, keep ? r : -1, (double)n);
			(void)sink;
		}
}

int main(int argc, char **argv)
{
	static const char *const names[NV] = {
		"no site", "8 flag checks (volatile int, own cache line)",
		"8 switchyard static_branch_unlikely",
	};
	static const char *const modes[2] = {
		"dependent calls, C", "independent calls, C",
	};
	static long (*const loops[2 * NV])(long) = {
		loop_none, loop_flags, loop_keys,
		iloop_none, iloop_flags, iloop_keys,
	};
	int rounds = argc > 1 ? atoi(argv[1]) : 31;
	struct bench_perf pc;
	double *s;
	int bad = 0;

	calls = argc > 2 ? atol(argv[2]) : 1000000;
	s = malloc(sizeof(*s) * 2 * NV * (size_t)(rounds > 0 ? rounds : 1));
	if (rounds < 3 || calls < 1 || !s) {
		fprintf(stderr, "usage: peers_sites [ROUNDS>=3 [CALLS>=1]]\n");
		return 2;
	}
	/* warm-up: one untimed round of every loop, then all six in turn */
	bench_perf_open(&pc, 2 * NV, rounds);
	interleave(&pc, 2 * NV, 1, loops, calls, s, 0);
	interleave(&pc, 2 * NV, rounds, loops, calls, s, 1);
	printf("disabled sites, warm loops: ns per call of a function with 8 "
	       "sites, %d rounds of %ld calls\n", rounds, calls);
	for (int v = 0; v < 2 * NV; v++) {
		struct bench_summary q = bench_summarize(s + v * rounds,
							 (size_t)rounds);

		printf("  %-20s %-44s %7.3f [%7.3f, %7.3f]\n", modes[v / NV],
		       names[v % NV], q.median, q.lo, q.hi);
		bench_raw(modes[v / NV], names[v % NV], "ns/call",
			  s + v * rounds, rounds);
		bench_perf_raw(&pc, v, modes[v / NV], names[v % NV],
			       "ns/call");
	}
	bench_perf_close(&pc);
	free(s);

	bad |= check("disabled, after the rounds", 0);
	if (peer_sites_none(12345) != peer_sites_flags(12345) ||
	    peer_sites_none(12345) != peer_sites_keys(12345)) {
		fprintf(stderr, "peers_sites: the variants compute different "
			"values\n");
		bad = 1;
	}
	/* enabled, every site fires once per call; disabled again, none */
	for (int i = 0; i < NS; i++) {
		pf[i].on = 1;
		if (static_branch_enable(&pk[i])) {
			fprintf(stderr, "peers_sites: enable failed\n");
			return 1;
		}
	}
	peer_sites_flags(1);
	bad |= check("flags enabled", NS);
	peer_sites_keys(1);
	bad |= check("keys enabled", 2 * NS);
	for (int i = 0; i < NS; i++) {
		pf[i].on = 0;
		if (static_branch_disable(&pk[i])) {
			fprintf(stderr, "peers_sites: disable failed\n");
			return 1;
		}
	}
	peer_sites_flags(1);
	peer_sites_keys(1);
	bad |= check("disabled again", 2 * NS);
	return bad;
}
