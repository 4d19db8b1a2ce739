/* SPDX-License-Identifier: MIT */
/*
 * pp_prog.c - a program and a library (libpp.c) with static keys, run by
 * test_prepatch.sh as built and as `switchyard prepatch` left it.
 *
 * It prints, at the start of main(), what start-up cost: the sites the
 * library wrote (switchyard_get_stats()) and the privately copied
 * (written) pages of the program's and the library's text (smaps
 * Private_Dirty of their executable mappings); then the path every site
 * takes, before and after every key is flipped and flipped back, checked
 * against the keys' states. The script compares the two runs: the same
 * paths, and for the prepatched files no written text page and exactly
 * the prepatched sites fewer written.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pp_sites.h"
#include "sy_test.h"

int pp_lib_paths(void);
int pp_lib_flip(bool on);

DEFINE_STATIC_KEY_FALSE(kf0);
DEFINE_STATIC_KEY_FALSE(kf1);
DEFINE_STATIC_KEY_TRUE(kt0);
DEFINE_STATIC_KEY_TRUE(kt1);

PP_FN(f0, static_branch_unlikely, kf0, 0)
PP_FN(f1, static_branch_unlikely, kf0, 1)
PP_FN(f2, static_branch_likely, kf0, 0)
PP_FN(f3, static_branch_likely, kf0, 1)
PP_FN(f4, static_branch_unlikely, kf1, 1)
PP_FN(f5, static_branch_unlikely, kt0, 0)
PP_FN(f6, static_branch_unlikely, kt0, 1)
PP_FN(f7, static_branch_likely, kt0, 0)
PP_FN(f8, static_branch_likely, kt0, 1)
PP_FN(f9, static_branch_likely, kt1, 1)

static int (*const fns[])(void) = { f0, f1, f2, f3, f4, f5, f6, f7, f8, f9 };
static struct static_key *const keys[] = {
	&kf0.key, &kf0.key, &kf0.key, &kf0.key, &kf1.key,
	&kt0.key, &kt0.key, &kt0.key, &kt0.key, &kt1.key,
};

static void check_paths(const char *when, bool lib_on)
{
	int lib = pp_lib_paths();

	printf("paths %s:", when);
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		int p = fns[i]();

		printf(" %d", p);
		CHECK_EQ(p, static_key_enabled(keys[i]));
	}
	printf(" lib %d\n", lib);
	/* lib_f0/f1 follow lib_kf, lib_f2/f3 lib_kt */
	CHECK_EQ(lib, lib_on ? 0x3 : 0xc);
}

static void flip(bool on)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		bool init = i >= 5;

		if (on != init)
			static_key_enable(keys[i]);
		else
			static_key_disable(keys[i]);
	}
	pp_lib_flip(on);
}

int main(int argc, char **argv)
{
	struct switchyard_stats st;
	char exe[PATH_MAX], lib[PATH_MAX] = "";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	Dl_info dl;

	(void)argc;
	(void)argv;
#if !SY_TEST_HAVE_SITES
	SKIP("no patched sites on this architecture");
#endif
	CHECK(n > 0);
	exe[n > 0 ? n : 0] = 0;
	CHECK(dladdr((void *)pp_lib_paths, &dl) && dl.dli_fname &&
	      realpath(dl.dli_fname, lib));
	/* before anything else can write: what start-up did */
	CHECK(!switchyard_get_stats(&st));
	printf("startup patched_sites %llu syncs %llu exe_text_dirty_kb %ld "
	       "lib_text_dirty_kb %ld\n", (unsigned long long)st.patched_sites,
	       (unsigned long long)st.sync_calls, pp_text_dirty_kb(exe),
	       pp_text_dirty_kb(lib));
	check_paths("initial", false);
	flip(true);
	check_paths("flipped", true);
	flip(false);
	check_paths("back", false);
	return sy_test_done("pp_prog");
}
