/* SPDX-License-Identifier: MIT */
/*
 * libdyn.c - opened with dlopen: uses shared_key from libkey.so and a key
 * of its own. Its constructor runs its site and records whether the site
 * already agreed with the key: a library opened while the key is enabled
 * must come up patched before its own code runs.
 */
#include <switchyard.h>

#include "dso.h"

DEFINE_STATIC_KEY_FALSE(libdyn_own_key);
DSO_API int libdyn_ctor_site, libdyn_ctor_key;

DSO_API int libdyn_site(void)
{
	return static_branch_unlikely(&shared_key);
}

DSO_API int libdyn_own_site(void)
{
	return static_branch_unlikely(&libdyn_own_key);
}

/* Atomic stores: two threads that dlopen the object in turn reach this
 * through the dynamic linker's own lock, which TSan does not see. */
__attribute__((constructor)) static void libdyn_ctor(void)
{
	__atomic_store_n(&libdyn_ctor_site, libdyn_site(), __ATOMIC_RELAXED);
	__atomic_store_n(&libdyn_ctor_key, static_key_enabled(&shared_key),
			 __ATOMIC_RELAXED);
}
