/* SPDX-License-Identifier: MIT */
/*
 * poke_impl.h - what the poke engine (poke.c) and its write paths and
 * core sync (poke_write.c) share; nothing else includes it. Every call
 * with the patch lock held. (sy_poke_sync(), which poke_write.c defines,
 * is declared with the engine's interface in internal.h.)
 */
#ifndef SY_POKE_IMPL_H
#define SY_POKE_IMPL_H

#include <unistd.h>

#include "internal.h"

/* The page size, asked once per file that uses it. */
static inline uintptr_t sy_poke_page_size(void)
{
	static uintptr_t ps;

	if (!ps)
		ps = (uintptr_t)sysconf(_SC_PAGESIZE);
	return ps;
}

/* Write len bytes of code at addr: through /proc/self/mem, else (unless
 * the policy forbids it) an mprotect() window, as SWITCHYARD_PATCH_METHOD
 * allows; valgrind is told to drop its translations of what was written.
 * On error *done says how many leading bytes were written (the rest were
 * not). Patch lock held; no allocation, no stdio. */
SY_HIDDEN int sy_poke_write(uintptr_t addr, const uint8_t *buf, size_t len,
			    size_t *done);
/* The write paths' and the sync's counters into *st (write_calls,
 * rwx_windows, sync_calls, sync_fallbacks), for sy_poke_stats(). Patch
 * lock held. */
SY_HIDDEN void sy_poke_write_stats(struct switchyard_stats *st);

#endif /* SY_POKE_IMPL_H */
