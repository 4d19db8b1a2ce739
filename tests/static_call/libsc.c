/* SPDX-License-Identifier: MIT */
/* libsc.c - a library that defines a static call and calls the program's. */
#include "sc_dso.h"

int lib_impl(int x)
{
	return x + 100;
}

DEFINE_STATIC_CALL(sc_lib, lib_impl);

int lib_call_exe(int x)
{
	return static_call(sc_exe)(x);
}

int lib_update_own(int which)
{
	return static_call_update(sc_lib, which ? lib_impl : NULL);
}
