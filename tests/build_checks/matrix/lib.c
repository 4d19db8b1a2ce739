/* SPDX-License-Identifier: MIT */
/* lib.c - a shared object (or, for -static, an object) with its own key
 * and sites. Returns the number of failed checks. */
#include "sy_test.h"
#include "shared.h"

DEFINE_STATIC_KEY_FALSE(lib_key);

__attribute__((noinline)) static int lib_path(void)
{
	if (static_branch_unlikely(&lib_key))
		return 1;
	return 0;
}

#ifdef __cplusplus
extern "C"
#endif
int lib_check(void);
int lib_check(void)
{
	CHECK_EQ(lib_path(), 0);
	CHECK(sy_test_check_sites(&lib_key.key) == SY_TEST_HAVE_SITES);
	CHECK_EQ(static_branch_enable(&lib_key), 0);
	CHECK_EQ(lib_path(), 1);
	sy_test_check_sites(&lib_key.key);
	CHECK_EQ(static_branch_disable(&lib_key), 0);
	CHECK_EQ(lib_path(), 0);
	sy_test_check_sites(&lib_key.key);
#ifdef __cplusplus
	CHECK_EQ(shared_inline(0), 0);
	CHECK_EQ(shared_template<3>(), 3);
#endif
	return sy_test_failures;
}
