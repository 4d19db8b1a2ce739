/* SPDX-License-Identifier: MIT */
/* plugin.c - opened with dlopen() by test_keys_env, twice. */
#include <switchyard.h>

DEFINE_STATIC_KEY_TRUE(envplug_fast);

__attribute__((visibility("default"))) int envplug_path(void)
{
	if (static_branch_likely(&envplug_fast))
		return 1;
	return 0;
}
