/* SPDX-License-Identifier: MIT */
/* names_dup_b.c - the other file-local key k (names_dup_a.c says why). */
#include <switchyard.h>

static DEFINE_STATIC_KEY_FALSE(k);

int dup_b(void);

__attribute__((noinline)) int dup_b(void)
{
	return static_branch_unlikely(&k) ? 1 : 0;
}
