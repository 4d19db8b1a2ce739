/* SPDX-License-Identifier: MIT */
/*
 * arch/generic/memcpy_arch.c - switchyard_memcpy() where there is no copy
 * code of our own: every strategy is the C library's memcpy(), which is
 * tuned for its architecture already (switchyard_memcpy resolves to it:
 * memcpy.c). The thresholds are kept (and shown by
 * switchyard_memcpy_get_thresholds()) but choose nothing.
 */
#include <string.h>

#include "../../copy/memcpy_impl.h"

static void *mc_libc(void *dst, const void *src, size_t n)
{
	return memcpy(dst, src, n);
}

/* no entry of our own: switchyard_memcpy is the C library's (memcpy.c) */
switchyard_memcpy_fn sy_arch_mc_entry(void)
{
	return NULL;
}

switchyard_memcpy_fn sy_arch_mc_fn(enum switchyard_memcpy_strategy which,
				   enum switchyard_memcpy_strategy loop)
{
	(void)loop;
	if (which == SWITCHYARD_MEMCPY_SHORT || which == SWITCHYARD_MEMCPY_LOOP)
		return mc_libc;
	return NULL;
}

enum switchyard_memcpy_strategy
sy_arch_mc_running(enum switchyard_memcpy_strategy loop)
{
	return loop;
}

/* the one place where the loop is chosen: there is only one */
enum switchyard_memcpy_strategy sy_arch_mc_loop(void)
{
	return SWITCHYARD_MEMCPY_LOOP;
}

int sy_arch_mc_init(const struct sy_mc_config *c)
{
	(void)c;
	return 0;
}
