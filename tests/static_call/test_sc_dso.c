/* SPDX-License-Identifier: MIT */
/*
 * test_sc_dso.c - static calls across objects: the program calls and
 * updates a static call defined in a library (linked, then opened with
 * dlopen as well: the same key), and the library calls one the program
 * defines (the program is linked with -rdynamic, as for keys); updates from
 * either side are seen by both.
 */
#include <dlfcn.h>
#include <stdint.h>

#include "sc_dso.h"
#include "sy_sc_sites.h"
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

#if defined(SY__ARCH_HAVE_STATIC_CALL) && defined(__aarch64__)
/*
 * AArch64: the program's sites of key hold a BL to f within +-128 MiB, else
 * a BL to a stub (`ldr x16, .+8; br x16; .quad f`) near the site: never the
 * veneer. Returns the number of sites that went through a stub, -1 if
 * sites are not patched.
 */
static int check_far(struct static_call_key *key, void *f)
{
	int stubbed = 0;

	if (!sy_sc_patched_mode())
		return -1;
	for (struct sy_sc_rec *r = __start_sy_static_call_sites;
	     r < __stop_sy_static_call_sites; r++) {
		if (r->meta->key != key)
			continue;
		CHECK(sy_sc_calls(r, (uintptr_t)f));
		if (sy_sc_bl_dest(r) != (uintptr_t)f)
			stubbed++;
	}
	return stubbed;
}
#define SY_REACH (1l << 27)
#elif defined(SY__ARCH_HAVE_STATIC_CALL)
/*
 * The program's sites of key call f directly, or (f beyond reach: the
 * library's functions, usually) through a stub, `jmp *0(%rip)` and f's
 * address: never parked on the detour when rseq is there. Returns the
 * number of sites that went through a stub, -1 if sites are not patched.
 */
static int check_far(struct static_call_key *key, void *f)
{
	int stubbed = 0;

	if (!sy_sc_patched_mode())
		return -1;	/* sites not patched here */
	for (struct sy_sc_rec *r = __start_sy_static_call_sites;
	     r < __stop_sy_static_call_sites; r++) {
		const uint8_t *c = sy_sc_code(r);
		const uint8_t *to;
		uintptr_t dest;
		int32_t rel;

		if (r->meta->key != key)
			continue;
		CHECK_EQ(c[13], 0xa9);		/* TEST: the payload runs */
		CHECK_EQ(c[18], 0xe8);
		memcpy(&rel, c + 19, 4);
		to = c + 23 + rel;
		if ((void *)to == f)
			continue;
		stubbed++;
		CHECK(to[0] == 0xff && to[1] == 0x25 && !memcmp(to + 2,
		      "\0\0\0\0", 4));
		memcpy(&dest, to + 6, 8);
		CHECK(dest == (uintptr_t)f);
	}
	return stubbed;
}
#define SY_REACH (1l << 31)
#else
#define check_far(key, f) (-1)
#define SY_REACH (1l << 31)
#endif

int main(int argc, char **argv)
{
	CHECK_EQ(static_call(sc_lib)(1), 101);
	CHECK_EQ(lib_call_exe(1), 2);

	/* the program updates the library's call, the library the program's */
	CHECK_EQ(static_call_update(sc_lib, lib_other), 0);
	CHECK_EQ(static_call(sc_lib)(1), 201);
	CHECK(check_far(&STATIC_CALL_KEY(sc_lib), (void *)lib_other) <= 0);
	CHECK_EQ(lib_update_own(1), 0);
	CHECK_EQ(static_call(sc_lib)(1), 101);
	{	/* the library's function, far from the program: a stub */
		intptr_t d = (intptr_t)lib_impl - (intptr_t)main;
		int n = check_far(&STATIC_CALL_KEY(sc_lib), (void *)lib_impl);

		printf("library %s the program's reach: %d site(s) through "
		       "a stub\n", d >= SY_REACH || d < -SY_REACH ?
		       "beyond" : "within", n);
		if (n >= 0 && (d >= SY_REACH || d < -SY_REACH))
			CHECK(n >= 1);
	}
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
