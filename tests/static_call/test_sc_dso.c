/* SPDX-License-Identifier: MIT */
/*
 * test_sc_dso.c - static calls across objects: the program calls and
 * updates a static call defined in a library (linked, then opened with
 * dlopen as well: the same key), and the library calls one the program
 * defines (the program is linked with -rdynamic, as for keys); updates from
 * either side are seen by both.
 */
#include <dlfcn.h>

#include "sc_dso.h"
#include "sy_test.h"

int exe_impl(int x)
{
	return x + 1;
}

static int exe_other(int x)
{
	return x + 2;
}

static int lib_other(int x)
{
	return x + 200;
}

DEFINE_STATIC_CALL(sc_exe, exe_impl);

int main(int argc, char **argv)
{
	CHECK_EQ(static_call(sc_lib)(1), 101);
	CHECK_EQ(lib_call_exe(1), 2);

	/* the program updates the library's call, the library the program's */
	CHECK_EQ(static_call_update(sc_lib, lib_other), 0);
	CHECK_EQ(static_call(sc_lib)(1), 201);
	CHECK_EQ(lib_update_own(1), 0);
	CHECK_EQ(static_call(sc_lib)(1), 101);
	CHECK_EQ(static_call_update(sc_exe, exe_other), 0);
	CHECK_EQ(lib_call_exe(1), 3);
	CHECK_EQ(lib_update_own(0), 0);
	CHECK(static_call_query(sc_lib) == NULL);

	/* dlopen of the same library: its code updates the key the program
	 * calls (the program's instance: a copy relocation, as for keys) */
	if (argc > 1) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		int (*update)(int) = h ? (int (*)(int))dlsym(h, "lib_update_own") : NULL;

		CHECK(update != NULL);
		if (update) {
			CHECK_EQ(update(1), 0);
			CHECK_EQ(static_call(sc_lib)(5), 105);
			CHECK_EQ(update(0), 0);
			CHECK(static_call_query(sc_lib) == NULL);
		}
		if (h)
			dlclose(h);
	}
	return sy_test_done("sc_dso");
}
