/* SPDX-License-Identifier: MIT */
/*
 * libinter.c - opened with dlopen: 1,000 sites of two keys that alternate,
 * inter_a inter_b inter_a inter_b ..., so that the site table is not in key
 * order and the registry has to index it (some 4 bytes per site).
 * inter_tab_a[] / inter_tab_b[] list the functions holding each key's 500
 * sites.
 */
#include "many_sites.h"

#define INTER_API __attribute__((visibility("default")))

INTER_API DEFINE_STATIC_KEY_FALSE(inter_a);
INTER_API DEFINE_STATIC_KEY_FALSE(inter_b);

/* a site of inter_a, then one of inter_b: 2 x 500 */
#define PAIR(n) SY_SITE_FN(static, ia_##n, inter_a) SY_SITE_FN(static, ib_##n, inter_b)
#define PTR_A(n) ia_##n,
#define PTR_B(n) ib_##n,
SY_N100(PAIR, 1) SY_N100(PAIR, 2) SY_N100(PAIR, 3) SY_N100(PAIR, 4)
SY_N100(PAIR, 5)

INTER_API int (*const inter_tab_a[500])(void) = {
	SY_N100(PTR_A, 1) SY_N100(PTR_A, 2) SY_N100(PTR_A, 3)
	SY_N100(PTR_A, 4) SY_N100(PTR_A, 5)
};
INTER_API int (*const inter_tab_b[500])(void) = {
	SY_N100(PTR_B, 1) SY_N100(PTR_B, 2) SY_N100(PTR_B, 3)
	SY_N100(PTR_B, 4) SY_N100(PTR_B, 5)
};
