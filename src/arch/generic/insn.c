/* SPDX-License-Identifier: MIT */
/*
 * arch/generic/insn.c - no alternatives here: the header keeps every
 * ALTERNATIVE's original instructions and tests features at run time, so
 * no record is ever registered and these are never reached.
 */
#include <errno.h>
#include <string.h>

#include "../../internal.h"

int sy_arch_code_move(uint8_t *buf, const uint8_t *from, size_t len,
		      uintptr_t to)
{
	(void)buf;
	(void)from;
	(void)len;
	(void)to;
	return -ENOSYS;
}

void sy_arch_nop_fill(uint8_t *buf, size_t len)
{
	memset(buf, 0, len);
}
