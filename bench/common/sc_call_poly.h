/* SPDX-License-Identifier: MIT */
/*
 * sc_call_poly.h - what the translation units of e2_calls_poly share: the
 * geometry, the targets, the ops tables, and the macros that write the
 * call-site functions.
 *
 * POLY_NF functions per variant, named <variant>_<abc> with abc three
 * octal digits (000..777), each making POLY_NS = 4 calls in a dependent
 * chain (a little work between them). Call j of function abc goes to
 * target index pq, two octal digits taken from abc: cb, ba, ac, ca, so
 * that each of the POLY_NT = 64 targets has 32 call sites and the first
 * functions already reach many targets. POLY_NI = 4 implementations of
 * the 64 targets exist (x * 3, 5 or 9 + pq, and x * 3 + pq + 64: each a
 * lea or two), all linked in and reachable through poly_impl[], so that
 * no compiler or linker can prove which one a pointer holds.
 */
#ifndef SY_BENCH_SC_CALL_POLY_H
#define SY_BENCH_SC_CALL_POLY_H

#define POLY_NF 512
#define POLY_NS 4
#define POLY_NT 64
#define POLY_NI 4

typedef unsigned long (*poly_fn)(unsigned long);

/* An ops table, as paravirt_ops: one slot per target index. */
struct poly_ops {
	poly_fn f[POLY_NT];
};

/* The 4 implementations (sc_call_poly_targets.c) */
extern const struct poly_ops poly_impl[POLY_NI];
/* The ops table in use: poly_impl[poly_choice], copied at start-up */
extern struct poly_ops poly_ops;
/* The polymorphic variant's object: the driver points it at a random
 * implementation before every function it calls */
extern const struct poly_ops *poly_cur;

/* Octal digits: every pq of the targets, every abc of the functions */
#define POLY_D1(M, p) M(p, 0) M(p, 1) M(p, 2) M(p, 3) M(p, 4) M(p, 5)        \
	M(p, 6) M(p, 7)
#define POLY_T2(M) POLY_D1(M, 0) POLY_D1(M, 1) POLY_D1(M, 2) POLY_D1(M, 3)   \
	POLY_D1(M, 4) POLY_D1(M, 5) POLY_D1(M, 6) POLY_D1(M, 7)
#define POLY_L1(M, a, b) M(a, b, 0) M(a, b, 1) M(a, b, 2) M(a, b, 3)          \
	M(a, b, 4) M(a, b, 5) M(a, b, 6) M(a, b, 7)
#define POLY_L2(M, a) POLY_L1(M, a, 0) POLY_L1(M, a, 1) POLY_L1(M, a, 2)      \
	POLY_L1(M, a, 3) POLY_L1(M, a, 4) POLY_L1(M, a, 5) POLY_L1(M, a, 6)  \
	POLY_L1(M, a, 7)
#define POLY_L3(M) POLY_L2(M, 0) POLY_L2(M, 1) POLY_L2(M, 2) POLY_L2(M, 3)   \
	POLY_L2(M, 4) POLY_L2(M, 5) POLY_L2(M, 6) POLY_L2(M, 7)

/* The targets: poly_t<k>_<pq>, k the implementation */
#define POLY_DECL_T(p, q)                                                      \
	unsigned long poly_t0_##p##q(unsigned long x);                         \
	unsigned long poly_t1_##p##q(unsigned long x);                         \
	unsigned long poly_t2_##p##q(unsigned long x);                         \
	unsigned long poly_t3_##p##q(unsigned long x);
POLY_T2(POLY_DECL_T)

/*
 * A function of variant V: 4 dependent calls, CALL(p, q) naming what is
 * called for target index pq. Not inlined into its caller (the driver
 * reaches it through a table), nor cloned: each is one function with its
 * own 4 call sites.
 */
#if defined(__clang__)
#define POLY_FN_ATTR __attribute__((noinline))
#else
#define POLY_FN_ATTR __attribute__((noinline, noclone))
#endif
#define POLY_FN(V, CALL, a, b, c)                                              \
	POLY_FN_ATTR unsigned long V##_##a##b##c(unsigned long x)              \
	{                                                                      \
		x = CALL(c, b)(x);                                             \
		x += 0##a##b##c##u;                                            \
		x = CALL(b, a)(x);                                             \
		x ^= x >> 7;                                                   \
		x = CALL(a, c)(x);                                             \
		x += 1;                                                        \
		x = CALL(c, a)(x);                                             \
		return x;                                                      \
	}

/* the ops table's slot pq, loaded at every call (relaxed: an ops table
 * that may be re-pointed), and the polymorphic object's */
#define POLY_PTR(p, q) __atomic_load_n(&poly_ops.f[0##p##q], __ATOMIC_RELAXED)
#define POLY_OBJ(p, q) poly_cur->f[0##p##q]

/* The indirect variants' function tables, one translation unit each
 * (e2_calls_poly_ptr.c, built once per way of compiling its calls) */
typedef unsigned long (*poly_site_fn)(unsigned long);
extern const poly_site_fn vp_table[POLY_NF], vq_table[POLY_NF];
extern const poly_site_fn vr_table[POLY_NF], vqr_table[POLY_NF];
extern const poly_site_fn vc_table[POLY_NF], vqc_table[POLY_NF];

#endif /* SY_BENCH_SC_CALL_POLY_H */
