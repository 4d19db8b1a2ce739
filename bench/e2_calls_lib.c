/* SPDX-License-Identifier: MIT */
/*
 * e2_calls_lib.c - libe2_calls_lib.so, the shared library of e2_calls.c: a
 * target the executable calls through its PLT (and that a static call in the
 * executable cannot reach with a rel32), and a GNU ifunc, resolved by
 * glibc's dynamic linker as libc's own memcpy or strlen are.
 */
#include "sc_call.h"

long sc_lib_tgt(long x)
{
	return x * 3 + 1;
}

static long lib_ifunc_impl(long x)
{
	return x * 3 + 1;
}

__attribute__((used)) static long (*resolve_lib_ifunc(void))(long)
{
	return lib_ifunc_impl;
}

long sc_lib_ifunc(long x) __attribute__((ifunc("resolve_lib_ifunc")));
