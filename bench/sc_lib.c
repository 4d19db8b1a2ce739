/* SPDX-License-Identifier: MIT */
/*
 * sc_lib.c - libbench_sc_lib.so, the shared library of bench_sc_call.c: a target
 * the executable calls through its PLT (and that a static call in the
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
