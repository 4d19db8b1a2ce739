/* SPDX-License-Identifier: MIT */
/*
 * libenv.c - a library loaded with test_keys_env: its key must be decided
 * by SWITCHYARD_KEYS before the library's own constructor runs.
 */
#include <switchyard.h>

DEFINE_STATIC_KEY_FALSE(envlib_trace);

int envlib_at_ctor = -1;

__attribute__((visibility("default"))) int envlib_traced(void)
{
	if (static_branch_unlikely(&envlib_trace))
		return 1;
	return 0;
}

__attribute__((constructor)) static void envlib_ctor(void)
{
	envlib_at_ctor = envlib_traced();
}
