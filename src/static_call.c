/* SPDX-License-Identifier: MIT */
/*
 * static_call.c - static calls (<switchyard/static_call.h>).
 *
 * Today a static call is a load of its key's target and an indirect call,
 * on every architecture; an update is one store. The update takes the patch
 * lock anyway: patched call sites, when they come, are written under it,
 * and the store must be ordered with those writes.
 */
#include <errno.h>

#include "internal.h"

long __static_call_return0(void)
{
	return 0;
}

static int update_locked(struct static_call_key *key, void (*func)(void))
{
	/*
	 * Release: pairs with the acquire load of sy__static_call_load(). A
	 * thread that calls the new target sees everything the updater wrote
	 * before the update (the data the target relies on). A thread may
	 * still call the old target after this returns if it loaded it just
	 * before: as with the kernel's static_call_update(), the caller
	 * waits for such calls itself if it must (e.g. before freeing what
	 * the old target uses).
	 */
	__atomic_store_n(&key->func, func, __ATOMIC_RELEASE);
	return 0;
}

int __static_call_update(struct static_call_key *key, void (*func)(void))
{
	if (!key)
		return -EINVAL;
	return SY_GUARDED(SY_LOCKED(update_locked(key, func)));
}
