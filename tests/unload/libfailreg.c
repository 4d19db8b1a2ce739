/* SPDX-License-Identifier: MIT */
/*
 * libfailreg.c - opened with dlopen: one site of failreg_key, a key that
 * the executable defines (and exports).
 */
#include <switchyard.h>

extern struct static_key_false failreg_key;

__attribute__((visibility("default"))) int failreg_lib_site(void)
{
	return static_branch_unlikely(&failreg_key);
}

/*
 * And a key of its own that nobody changes: while the table is stale its
 * site holds the jump the compiler emitted; the first change of any key
 * that succeeds must bring it to the disabled form.
 */
DEFINE_STATIC_KEY_FALSE(failreg_own);

__attribute__((visibility("default"))) int failreg_own_site(void)
{
	return static_branch_unlikely(&failreg_own);
}
