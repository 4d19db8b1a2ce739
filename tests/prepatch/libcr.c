/* SPDX-License-Identifier: MIT */
/*
 * libcr.c - a library exporting a TRUE key that cr_prog refers to from
 * its own code: the executable gets a copy of the key (R_X86_64_COPY),
 * whose state comes from this library at load time (test_prepatch_files.sh
 * copyreloc).
 */
#include <switchyard.h>

__attribute__((visibility("default"))) DEFINE_STATIC_KEY_TRUE(cr_on);

__attribute__((visibility("default"))) int cr_lib_f(void)
{
	return static_branch_likely(&cr_on);
}
