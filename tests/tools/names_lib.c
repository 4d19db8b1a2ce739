/* SPDX-License-Identifier: MIT */
/*
 * names_lib.c - two keys of a library, defined in one order, or (NM_V2:
 * the "upgrade" test_names_live.sh renames over the loaded file) in the
 * other, so that each name sits where the other's key was.
 */
#include <switchyard.h>

#ifndef NM_V2
DEFINE_STATIC_KEY_FALSE(nm_alpha);
DEFINE_STATIC_KEY_FALSE(nm_beta);
#else
DEFINE_STATIC_KEY_FALSE(nm_beta);
DEFINE_STATIC_KEY_FALSE(nm_alpha);
#endif

int nm_alpha_on(void);
int nm_beta_on(void);

int nm_alpha_on(void)
{
	return static_branch_unlikely(&nm_alpha) ? 1 : 0;
}

int nm_beta_on(void)
{
	return static_branch_unlikely(&nm_beta) ? 1 : 0;
}
