/* SPDX-License-Identifier: MIT */
/*
 * e2_calls_poly.c - E2 in the regime static calls exist for: many call
 * sites, many targets, a random order, an ops table with several
 * implementations alive, hardened builds. Seed 002's ops table (pv_ops)
 * is a table of function pointers on a hot path, filled once at start-up
 * with one of several implementations compiled in; e2_calls measures one
 * call in a warm chain, where the predictor always knows the target.
 * Here, as e1_dense does for keys: POLY_NF = 512 functions per variant,
 * each with 4 dependent calls (2,048 call sites, 64 targets, 32 sites
 * each; sc_call_poly.h), called through a table in a random order, so
 * that the text of a variant and its branch targets exceed what the
 * front end and the predictors hold. The variants differ only in how the
 * 4 calls are made:
 *
 *   inline      the target's arithmetic inlined: no call (the floor: the
 *               dispatch and the work between the calls)
 *   direct      call poly_t0_pq
 *   static      static_call(poly_sc_pq): a patched site
 *   pointer     the ops table's slot, loaded at each call: one
 *               implementation, every slot monomorphic
 *   retpoline   the same built with retpolines (Spectre v2 hardening)
 *   poly        a polymorphic site: the slot of a random implementation
 *               of 4 per function called (an object's ops, as a VFS's
 *               f_op): what no static call can replace
 *   poly retpoline
 * and, in e2_calls_poly_cfi (this file built by clang with -flto
 * -fvisibility=hidden -fsanitize=cfi-icall, where the toolchain can:
 * POLY_CFI_BUILD), instead of the retpolines:
 *   pointer, CFI      the slot's call checked by cfi-icall
 *   poly, CFI
 * (the unchecked pointer there still goes through the jump table CFI
 * makes of every address-taken function; so does a static call site,
 * whose target's address is the jump table's entry).
 *
 * The implementation in use is poly_impl[poly_choice], a volatile 0: the
 * compiler cannot see which, the result is that of direct calls, and the
 * program checks it (every monomorphic variant must return the direct
 * variant's value after each batch; the polymorphic ones their own value
 * of the first round).
 *
 * Rounds interleave the variants, the first rotated each round; a sample
 * is ns per call: a batch's time over CALLS x 4. It includes a quarter of
 * the dispatch (an indirect call through the table, mispredicted) and of
 * the work: the inline variant's time; a variant's cost per call is its
 * difference from it. SY_BENCH_RAW=FILE dumps the samples for the suite.
 *
 *   e2_calls_poly [ROUNDS [CALLS [FUNCS]]]     41, 100000, 512
 *       FUNCS: only the first FUNCS functions are called (32: the warm
 *       control, the text and the predictors' entries fit)
 *   e2_calls_poly callgrind [CALLS]     the deterministic lane: each
 *       variant once through its driver v_<variant> after a warm-up
 *   e2_calls_poly sites     the static call sites' states (patched, the
 *       target each calls) and their detours' bytes
 *   e2_calls_poly icount [K]   instructions per call of each variant on
 *       the patched path, single-stepped (seeds.h: valgrind runs the static
 *       call sites' detour, this counts the patched site): (count(2K) -
 *       count(K)) / 4K over K random functions (default 200)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <switchyard.h>

#include "perfctr.h"
#include "seeds.h"
#include "stats.h"
#include "sc_call.h"
#include "sc_call_poly.h"

#if defined(__clang__)
/* the driver's dispatch is not a variant: never checked */
#define POLY_NOCFI __attribute__((no_sanitize("cfi-icall")))
#else
#define POLY_NOCFI
#endif

static volatile int poly_choice;	/* 0, unknown to the compiler */

/* ---- the variants of this translation unit ----------------------------- */

/* the floor: each target's arithmetic, inlined (implementation 0) */
#define POLY_INL_T(p, q)                                                       \
	static inline __attribute__((always_inline)) unsigned long             \
	poly_i_##p##q(unsigned long x)                                         \
	{                                                                      \
		return x * 3 + 0##p##q##u;                                     \
	}
POLY_T2(POLY_INL_T)
#define POLY_INLINE(p, q) poly_i_##p##q
#define POLY_DIRECT(p, q) poly_t0_##p##q
#define POLY_STATIC(p, q) static_call(poly_sc_##p##q)

/* 64 static call keys, one per target index, each with 32 sites */
#define POLY_KEY(p, q) DEFINE_STATIC_CALL(poly_sc_##p##q, poly_t0_##p##q);
POLY_T2(POLY_KEY)

#define POLY_FN_N(a, b, c) POLY_FN(vn, POLY_INLINE, a, b, c)
#define POLY_FN_D(a, b, c) POLY_FN(vd, POLY_DIRECT, a, b, c)
#define POLY_FN_S(a, b, c) POLY_FN(vs, POLY_STATIC, a, b, c)
POLY_L3(POLY_FN_N)
POLY_L3(POLY_FN_D)
POLY_L3(POLY_FN_S)
#define POLY_REF_N(a, b, c) vn_##a##b##c,
#define POLY_REF_D(a, b, c) vd_##a##b##c,
#define POLY_REF_S(a, b, c) vs_##a##b##c,
static const poly_site_fn vn_table[POLY_NF] = { POLY_L3(POLY_REF_N) };
static const poly_site_fn vd_table[POLY_NF] = { POLY_L3(POLY_REF_D) };
static const poly_site_fn vs_table[POLY_NF] = { POLY_L3(POLY_REF_S) };

/* ---- the drivers: one function per variant (callgrind's names) -------- */

#define DRIVER(name, table)                                                    \
	__attribute__((noinline)) POLY_NOCFI static unsigned long name(        \
		const uint16_t *seq, const uint8_t *imp, long calls)           \
	{                                                                      \
		unsigned long x = 1;                                           \
		for (long i = 0; i < calls; i++) {                             \
			poly_cur = &poly_impl[imp[i]];                         \
			x = table[seq[i]](x);                                  \
		}                                                              \
		return x;                                                      \
	}
DRIVER(v_inline, vn_table)
DRIVER(v_direct, vd_table)
DRIVER(v_static, vs_table)
DRIVER(v_pointer, vp_table)
DRIVER(v_poly, vq_table)
#ifdef POLY_CFI_BUILD
DRIVER(v_pointer_cfi, vc_table)
DRIVER(v_poly_cfi, vqc_table)
#else
DRIVER(v_retpoline, vr_table)
DRIVER(v_poly_retpoline, vqr_table)
#endif

typedef unsigned long (*driver_fn)(const uint16_t *, const uint8_t *, long);
struct variant {
	const char *name;
	driver_fn f;
	const poly_site_fn *table;
	int mono;		/* computes the direct variant's result */
};

static const struct variant variants[] = {
	{ "inline (no call)", v_inline, vn_table, 1 },
	{ "direct call", v_direct, vd_table, 1 },
	{ "static call", v_static, vs_table, 1 },
	{ "pointer (ops table, one implementation)", v_pointer, vp_table,
	  1 },
#ifdef POLY_CFI_BUILD
	{ "pointer, cfi-icall", v_pointer_cfi, vc_table, 1 },
	{ "polymorphic pointer (4 implementations)", v_poly, vq_table,
	  0 },
	{ "polymorphic pointer, cfi-icall", v_poly_cfi, vqc_table,
	  0 },
#else
	{ "pointer, retpoline", v_retpoline, vr_table, 1 },
	{ "polymorphic pointer (4 implementations)", v_poly, vq_table,
	  0 },
	{ "polymorphic pointer, retpoline", v_poly_retpoline,
	  vqr_table, 0 },
#endif
};
#define NV (int)(sizeof(variants) / sizeof(variants[0]))
#define V_DIRECT 1

/* the static call sites of vs_000 and what they call: 4 patched sites
 * calling their key's target, or the state found */
/* the body of a function: with cfi-icall, a function's address is its
 * jump table entry, `jmp <name>.cfi` */
static const unsigned char *poly_body(const void *fn)
{
	const unsigned char *p = (const unsigned char *)fn;

	return p[0] == 0xe9 ? p + 5 + sc_rel32(p + 1) : p;
}

static int print_sites(void)
{
	const unsigned char *body = poly_body((const void *)vs_000);
	const unsigned char *p = body;
	const void *want = (const void *)poly_impl[poly_choice].f[000];
	const unsigned char *last = NULL;
	int patched = 0;

	for (int k = 0; k < POLY_NS; k++) {
		struct sc_site s = sc_find_site(p, 512);
		const unsigned char *d = (const unsigned char *)s.calls;

		if (s.state == SC_NONE)
			break;
		printf("  site %d of vs_000 at +%td: %s", k, s.guard - body,
		       s.state == SC_PARKED ? "parked (detour)" :
		       s.stub ? "patched, calls a stub to" :
		       s.calls ? "patched, calls" : "patched, no call");
		if (d)
			printf(" %s%s", d == want ? "its target" : "another "
			       "address", d[0] == 0xe9 || d[0] == 0xeb ?
			       ", whose first instruction is a jmp (a CFI "
			       "jump table's entry)" : "");
		printf("\n");
		patched += s.state == SC_PATCHED && d == want;
		/* the detours of a function's sites follow each other: the
		 * distance between two is one detour's bytes (its code, the
		 * offset and signature words before it, the padding) */
		if (k) {
			const unsigned char *det = s.guard + 5 +
						   sc_rel32(s.guard + 1);

			printf("  detour bytes per site: %td\n", det - last);
		}
		last = s.guard + 5 + sc_rel32(s.guard + 1);
		p = s.guard + 10;
	}
	return patched;
}

/* callgrind: each variant once through its driver, after a warm-up
 * outside it (the simulated caches and predictors, each variant just
 * before its run); valgrind has no rseq: the static call sites run their
 * detour there, as the suite's note says */
POLY_NOCFI static int run_callgrind(const uint16_t *seq, const uint8_t *imp,
				    long calls)
{
	unsigned long x = 0;

	for (int v = 0; v < NV; v++) {
		for (long i = 0; i < calls / 4; i++) {
			poly_cur = &poly_impl[imp[i]];
			x = variants[v].table[seq[i]](x);
		}
		x += variants[v].f(seq, imp, calls);
	}
	printf("ran each loop %ld times (result %lu): %ld functions of %d "
	       "calls\n", calls * POLY_NS, x, calls, POLY_NS);
	return 0;
}

/* the single-stepped count: variant icount_v over the first k entries of
 * the random sequence */
static int icount_v;
static const uint16_t *icount_seq;
static const uint8_t *icount_imp;

POLY_NOCFI static long icount_run(long k)
{
	return (long)variants[icount_v].f(icount_seq, icount_imp, k);
}

static int run_icount(const uint16_t *seq, const uint8_t *imp, long k)
{
	icount_seq = seq;
	icount_imp = imp;
	for (icount_v = 0; icount_v < NV; icount_v++) {
		double n = seed_icount(icount_run, k);

		if (n < 0) {
			printf("icount: single-stepping failed (ptrace)\n");
			return 77;
		}
		printf("icount %s: %.2f instructions per call\n",
		       variants[icount_v].name, n / POLY_NS);
	}
	return 0;
}

POLY_NOCFI int main(int argc, char **argv)
{
	int cg = argc > 1 && !strcmp(argv[1], "callgrind");
	int ic = argc > 1 && !strcmp(argv[1], "icount");
	int rounds = cg || ic ? 3 : argc > 1 ? atoi(argv[1]) : 41;
	long calls = argc > 2 ? atol(argv[2]) : cg ? 20000 : ic ? 200 : 100000;
	int nf = argc > 3 && !cg && !ic ? atoi(argv[3]) : POLY_NF;
	double *s = malloc(sizeof(*s) * NV * (size_t)(rounds > 0 ? rounds : 1));
	uint16_t *seq = malloc(sizeof(*seq) * (size_t)(calls > 0 ? calls : 1));
	uint8_t *imp = malloc((size_t)(calls > 0 ? calls : 1));
	unsigned long want[NV] = { 0 }, got;
	uint64_t r = 0x9e3779b97f4a7c15ull;
	struct bench_perf pc;
	char loop[96];
	int bad = 0;

	if (argc > 1 && !strcmp(argv[1], "sites")) {
		/* states, not a check: a process that cannot patch (no rseq)
		 * runs the detours, and the suite says so */
		poly_ops = poly_impl[poly_choice];
		printf("%d of %d sites of vs_000 patched to their target\n",
		       print_sites(), POLY_NS);
		return 0;
	}
	if (rounds < 3 || calls < 1 || nf < 1 || nf > POLY_NF || !s || !seq ||
	    !imp) {
		fprintf(stderr, "usage: e2_calls_poly [ROUNDS>=3 [CALLS>=1 "
			"[FUNCS 1..%d]]] | callgrind [CALLS>=1] | icount "
			"[K>=1] | sites\n", POLY_NF);
		return 2;
	}
	/* the implementation in use, as a program picks it at start-up */
	poly_ops = poly_impl[poly_choice];
	if (poly_choice) {
#define POLY_UPDATE(p, q)                                                      \
		static_call_update(poly_sc_##p##q,                             \
				   poly_impl[poly_choice].f[0##p##q]);
		POLY_T2(POLY_UPDATE)
	}
	for (long i = 0; i < calls; i++) {
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		seq[i] = (uint16_t)(r % (unsigned)nf);
		imp[i] = (uint8_t)((r >> 32) % POLY_NI);
	}
	if (cg)
		return run_callgrind(seq, imp, calls);
	if (ic) {
		/* the sequence must hold 2K entries */
		long k = calls;

		free(seq);
		free(imp);
		seq = malloc(sizeof(*seq) * (size_t)(2 * k));
		imp = malloc((size_t)(2 * k));
		if (!seq || !imp)
			return 1;
		for (long i = 0; i < 2 * k; i++) {
			r ^= r << 13;
			r ^= r >> 7;
			r ^= r << 17;
			seq[i] = (uint16_t)(r % POLY_NF);
			imp[i] = (uint8_t)((r >> 32) % POLY_NI);
		}
		return run_icount(seq, imp, k);
	}
	for (int v = 0; v < NV; v++)	/* warm up, and each one's result */
		want[v] = variants[v].f(seq, imp, calls);
	for (int v = 0; v < NV; v++)
		if (variants[v].mono && want[v] != want[V_DIRECT]) {
			printf("FAIL: %s returns %lu, direct calls %lu\n",
			       variants[v].name, want[v], want[V_DIRECT]);
			bad = 1;
		}
	bench_perf_open(&pc, NV, rounds);
	for (int rd = 0; rd < rounds; rd++)
		for (int k = 0; k < NV; k++) {
			int v = (rd + k) % NV;
			double t0;

			bench_perf_start(&pc);
			t0 = bench_now_ns();
			got = variants[v].f(seq, imp, calls);
			s[v * rounds + rd] = (bench_now_ns() - t0) /
					     (double)(calls * POLY_NS);
			bench_perf_stop(&pc, v, rd, (double)(calls * POLY_NS));
			if (got != want[v] && !bad) {
				printf("FAIL: %s returns %lu in round %d, %lu "
				       "before\n", variants[v].name, got, rd,
				       want[v]);
				bad = 1;
			}
		}
	snprintf(loop, sizeof(loop), "%d functions x %d calls, random order",
		 nf, POLY_NS);
	printf("E2 polymorphic%s: ns per call, %d rounds of %ld functions "
	       "(x %d calls) in a random order over %d functions, 64 targets\n",
#ifdef POLY_CFI_BUILD
	       " (clang, -fsanitize=cfi-icall)",
#else
	       "",
#endif
	       rounds, calls, POLY_NS, nf);
	for (int v = 0; v < NV; v++) {
		struct bench_summary q = bench_summarize(s + v * rounds,
							 (size_t)rounds);

		printf("  %-44s %7.3f [%7.3f, %7.3f]\n", variants[v].name,
		       q.median, q.lo, q.hi);
		bench_raw(loop, variants[v].name, "ns/call", s + v * rounds,
			  rounds);
		bench_perf_raw(&pc, v, loop, variants[v].name, "ns/call");
	}
	bench_perf_close(&pc);
	printf("static call sites:\n");
	if (print_sites() != POLY_NS) {
		/* a process that cannot patch (no rseq) measured detours */
		printf("  (not every site patched: the static call rows "
		       "measured the detour)\n");
	}
	free(s);
	free(seq);
	free(imp);
	return bad;
}
