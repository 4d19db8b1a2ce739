/* SPDX-License-Identifier: MIT */
/*
 * libmany.c - opened with dlopen: 4,000 sites of a key of its own, which
 * nobody enables (so every site must fall through), and the table of the
 * functions holding them. Registering it takes a while: long enough for
 * signals and other threads to land in the middle.
 */
#include "many_sites.h"

#define MANY_API __attribute__((visibility("default")))
#define MANY_SITES 4000

MANY_API DEFINE_STATIC_KEY_FALSE(many_key);

#define FN(n) SY_SITE_FN(static, many_##n, many_key)
#define PTR(n) many_##n,
SY_N1000(FN, 1) SY_N1000(FN, 2) SY_N1000(FN, 3) SY_N1000(FN, 4)

MANY_API int (*const many_tab[MANY_SITES])(void) = {
	SY_N1000(PTR, 1) SY_N1000(PTR, 2) SY_N1000(PTR, 3) SY_N1000(PTR, 4)
};
