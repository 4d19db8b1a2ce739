/* SPDX-License-Identifier: MIT */
/* libpp.c - a library with keys of its own, prepatched with the program. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "pp_sites.h"

DEFINE_STATIC_KEY_FALSE(lib_kf);
DEFINE_STATIC_KEY_TRUE(lib_kt);

PP_FN(lib_f0, static_branch_unlikely, lib_kf, 1)
PP_FN(lib_f1, static_branch_likely, lib_kf, 0)
PP_FN(lib_f2, static_branch_unlikely, lib_kt, 0)
PP_FN(lib_f3, static_branch_likely, lib_kt, 1)

__attribute__((visibility("default"))) int pp_lib_paths(void)
{
	return lib_f0() | lib_f1() << 1 | lib_f2() << 2 | lib_f3() << 3;
}

__attribute__((visibility("default"))) int pp_lib_flip(bool on)
{
	if (on) {
		static_branch_enable(&lib_kf);
		static_branch_disable(&lib_kt);
	} else {
		static_branch_disable(&lib_kf);
		static_branch_enable(&lib_kt);
	}
	return 0;
}
