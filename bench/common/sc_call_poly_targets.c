/* SPDX-License-Identifier: MIT */
/*
 * sc_call_poly_targets.c - the targets of e2_calls_poly: 4 implementations
 * of 64 functions, in a translation unit of their own so that no call is
 * inlined (noinline too, for the clang build's link-time optimisation),
 * and their ops tables.
 */
#include "sc_call_poly.h"

#define POLY_ONE(k, m, add, p, q)                                              \
	__attribute__((noinline)) unsigned long                                \
	poly_t##k##_##p##q(unsigned long x)                                    \
	{                                                                      \
		return x * m + 0##p##q##u + add;                               \
	}
#define POLY_DEF_T(p, q) POLY_ONE(0, 3, 0, p, q) POLY_ONE(1, 5, 0, p, q)      \
	POLY_ONE(2, 9, 0, p, q) POLY_ONE(3, 3, 64, p, q)
POLY_T2(POLY_DEF_T)

#define POLY_REF0(p, q) poly_t0_##p##q,
#define POLY_REF1(p, q) poly_t1_##p##q,
#define POLY_REF2(p, q) poly_t2_##p##q,
#define POLY_REF3(p, q) poly_t3_##p##q,
const struct poly_ops poly_impl[POLY_NI] = {
	{ { POLY_T2(POLY_REF0) } },
	{ { POLY_T2(POLY_REF1) } },
	{ { POLY_T2(POLY_REF2) } },
	{ { POLY_T2(POLY_REF3) } },
};

struct poly_ops poly_ops;
const struct poly_ops *poly_cur = &poly_impl[0];
