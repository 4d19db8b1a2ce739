/* SPDX-License-Identifier: MIT */
/*
 * arch/generic/jump_label.c - architectures without jump label support:
 * the header compiles every static_branch_*() to load + test + branch, so
 * no site is ever registered and these are never reached with one.
 */
#include <errno.h>

#include "../../internal.h"

int sy_arch_jump_decode(uintptr_t code, uintptr_t target, unsigned *len)
{
	(void)code;
	(void)target;
	*len = 0;
	return -ENOSYS;
}

void sy_arch_jump_encode(uintptr_t code, uintptr_t target, unsigned len,
			 bool jump, uint8_t *out)
{
	(void)code;
	(void)target;
	(void)len;
	(void)jump;
	(void)out;
}

int sy_arch_sync_cores(void)
{
	return 0;
}
