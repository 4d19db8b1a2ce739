/* SPDX-License-Identifier: MIT */
/* arch/generic/sync.c - nothing to synchronise: no site is ever patched. */
#include "../../internal.h"

int sy_arch_sync_cores(void)
{
	return 0;
}
