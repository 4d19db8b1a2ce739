/* SPDX-License-Identifier: MIT */
/*
 * comdat.h - a key site and a static call site in a C++ inline function
 * that two translation units instantiate (COMDAT): the linker keeps one
 * copy and must be able to drop the other's records and detour with it
 * (before the records joined the function's section group, this program
 * did not link: "referenced in section sy_jump_entries ... defined in
 * discarded section").
 */
#define SWITCHYARD_STATIC_CALL_NOTHROW 1 /* patched sites, with exceptions on */
#include <switchyard.h>

DECLARE_STATIC_KEY_FALSE(comdat_key);
long comdat_a(long x);
long comdat_b(long x);
DECLARE_STATIC_CALL(comdat_sc, comdat_a);

__attribute__((noinline)) inline long comdat_hot(long x)
{
	if (static_branch_unlikely(&comdat_key))
		x += 1000;
	return static_call(comdat_sc)(x);
}

template <int N> __attribute__((noinline)) long comdat_tpl(long x)
{
	return static_call(comdat_sc)(x + N);
}

long comdat_tu1(long x);
long comdat_tu2(long x);
