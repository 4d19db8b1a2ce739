/* SPDX-License-Identifier: MIT */
/* libfar.c - a key and one site of it, mapped far from the executable's
 * code (a shared library), so that a change of the key writes two chunks. */
#include <switchyard.h>

DEFINE_STATIC_KEY_FALSE(far_key);

__attribute__((noinline)) int far_site(void)
{
	if (static_branch_unlikely(&far_key))
		return 1;
	return 0;
}
