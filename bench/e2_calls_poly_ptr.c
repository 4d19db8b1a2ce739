/* SPDX-License-Identifier: MIT */
/*
 * e2_calls_poly_ptr.c - the indirect variants of e2_calls_poly: the same
 * 512 functions through the ops table in use (POLY_PTR: one implementation,
 * every slot monomorphic) and through the polymorphic object (POLY_OBJ: a
 * random one of 4 implementations per function called). Built once per way
 * of compiling an indirect call (bench/CMakeLists.txt), so that the
 * variants differ only in that:
 *
 *   (plain)              vp, vq    call *%reg
 *   POLY_RETPOLINE       vr, vqr   the compiler's retpoline thunk
 *   POLY_CFI             vc, vqc   clang -fsanitize=cfi-icall: the target
 *                                  checked against the type's jump table
 *   POLY_CFI_OFF         vp, vq    the same clang build with the check
 *                                  off for these functions (their calls
 *                                  still reach the targets through the
 *                                  jump table's entries: what CFI makes
 *                                  of every address-taken function)
 */
#include "sc_call_poly.h"

#if defined(POLY_RETPOLINE)
#define POLY_P vr
#define POLY_Q vqr
#define POLY_ATTR
#elif defined(POLY_CFI)
#define POLY_P vc
#define POLY_Q vqc
#define POLY_ATTR
#elif defined(POLY_CFI_OFF)
#define POLY_P vp
#define POLY_Q vq
#define POLY_ATTR __attribute__((no_sanitize("cfi-icall")))
#else
#define POLY_P vp
#define POLY_Q vq
#define POLY_ATTR
#endif

#define POLY_CAT_(a, b) a##b
#define POLY_CAT(a, b) POLY_CAT_(a, b)
#define POLY_FN_X(V, CALL, a, b, c) POLY_ATTR POLY_FN(V, CALL, a, b, c)

#define POLY_FN_P(a, b, c) POLY_FN_X(POLY_P, POLY_PTR, a, b, c)
#define POLY_FN_Q(a, b, c) POLY_FN_X(POLY_Q, POLY_OBJ, a, b, c)
POLY_L3(POLY_FN_P)
POLY_L3(POLY_FN_Q)

#define POLY_REF_P(a, b, c) POLY_CAT(POLY_P, _##a##b##c),
#define POLY_REF_Q(a, b, c) POLY_CAT(POLY_Q, _##a##b##c),
const poly_site_fn POLY_CAT(POLY_P, _table)[POLY_NF] = { POLY_L3(POLY_REF_P) };
const poly_site_fn POLY_CAT(POLY_Q, _table)[POLY_NF] = { POLY_L3(POLY_REF_Q) };
