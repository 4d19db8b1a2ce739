/* SPDX-License-Identifier: MIT */
/*
 * test_sc_module.c - static calls in a module opened and closed with
 * dlopen, 8 rounds: its sites of the program's call and of its own are
 * patched before dlopen() returns, follow every update from either side,
 * and an update after dlclose() (which must not touch the unmapped sites)
 * succeeds. On AArch64 every site's word is checked after each update.
 */
#include <dlfcn.h>

#include "sy_test.h"

int main_impl(int x);
int main_impl(int x)
{
	return x + 1;
}

static int main_other(int x)
{
	return x + 2;
}

DEFINE_STATIC_CALL(sc_main, main_impl);

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_sc_module MODULE\n");
		return 2;
	}
	for (int round = 0; round < 8; round++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		int (*call_main)(int), (*call_own)(int), (*update_own)(int);
		int (*wrong)(void);

		CHECK(h != NULL);
		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			break;
		}
		call_main = (int (*)(int))dlsym(h, "mod_call_main");
		call_own = (int (*)(int))dlsym(h, "mod_call_own");
		update_own = (int (*)(int))dlsym(h, "mod_update_own");
		wrong = (int (*)(void))dlsym(h, "mod_sites_wrong");
		CHECK(call_main && call_own && update_own && wrong);
		if (!call_main || !call_own || !update_own || !wrong)
			break;
		/* the state the previous round left: main_other on odd ones */
		CHECK_EQ(call_main(1), round & 1 ? 3 : 2);
		CHECK_EQ(wrong(), 0);
		CHECK_EQ(call_own(1), 1001);
		CHECK_EQ(update_own(1), 0);
		CHECK_EQ(call_own(1), 2001);
		CHECK_EQ(wrong(), 0);
		CHECK_EQ(static_call_update(sc_main, round & 1 ? main_impl :
					    main_other), 0);
		CHECK_EQ(call_main(1), round & 1 ? 2 : 3);
		CHECK_EQ(static_call(sc_main)(1), round & 1 ? 2 : 3);
		CHECK_EQ(wrong(), 0);
		CHECK_EQ(dlclose(h), 0);
		/* the module's sites are gone: an update must not touch them */
		CHECK_EQ(static_call_update(sc_main, NULL), 0);
		CHECK_EQ(static_call_update(sc_main, round & 1 ? main_impl :
					    main_other), 0);
	}
	return sy_test_done("sc_module");
}
