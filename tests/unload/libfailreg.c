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
