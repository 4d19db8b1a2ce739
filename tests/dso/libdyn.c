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

/* This object's table entries (struct jump_entry: code, target, key with
 * the branch bit and the init bit in its low two bits). */
struct libdyn_entry {
	int code;
	int target;
	unsigned long key;
};
/* weak: with the fallback (no patched sites, another architecture) there
 * is no table, and both are 0 */
extern const struct libdyn_entry __start_sy_jump_entries[]
	__attribute__((weak, visibility("hidden")));
extern const struct libdyn_entry __stop_sy_jump_entries[]
	__attribute__((weak, visibility("hidden")));

/* The number of sites of key in this object, from its own table: the
 * compiler may make more than one of a function's site (clang inlines
 * libdyn_site() into the constructor below, gcc does not). */
DSO_API int libdyn_sites_of(const void *key)
{
	int n = 0;

	for (const struct libdyn_entry *e = __start_sy_jump_entries;
	     e < __stop_sy_jump_entries; e++)
		n += (e->key & ~3ul) == (unsigned long)key;
	return n;
}

/* Atomic stores: two threads that dlopen the object in turn reach this
 * through the dynamic linker's own lock, which TSan does not see. */
__attribute__((constructor)) static void libdyn_ctor(void)
{
	__atomic_store_n(&libdyn_ctor_site, libdyn_site(), __ATOMIC_RELAXED);
	__atomic_store_n(&libdyn_ctor_key, static_key_enabled(&shared_key),
			 __ATOMIC_RELAXED);
}
