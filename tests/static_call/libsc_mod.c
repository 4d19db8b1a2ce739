/* SPDX-License-Identifier: MIT */
/*
 * libsc_mod.c - a module (opened with dlopen by test_sc_module.c) with
 * static call sites of a call the program defines and of one of its own.
 * mod_sites_wrong() counts the module's sites that do not hold the fastest
 * call of their key's target (AArch64, where a site is one word to read;
 * 0 elsewhere: x86-64's sites are test_sc_dlclose's).
 */
#include "sy_sc_sites.h"

int main_impl(int x);
DECLARE_STATIC_CALL(sc_main, main_impl);

static int mod_impl(int x)
{
	return x + 1000;
}

static int mod_other(int x)
{
	return x + 2000;
}

DEFINE_STATIC_CALL(sc_mod, mod_impl);

int mod_call_main(int x)
{
	return static_call(sc_main)(x);
}

int mod_call_own(int x)
{
	return static_call(sc_mod)(x);
}

int mod_update_own(int other)
{
	return static_call_update(sc_mod, other ? mod_other : mod_impl);
}

int mod_sites_wrong(void)
{
	int wrong = 0;

#if defined(SY__ARCH_HAVE_STATIC_CALL) && defined(__aarch64__)
	for (const struct sy_sc_rec *r = __start_sy_static_call_sites;
	     r < __stop_sy_static_call_sites; r++)
		if (sy_sc_patched_mode() &&
		    !sy_sc_calls(r, (uintptr_t)r->meta->key->func))
			wrong++;
#endif
	return wrong;
}
