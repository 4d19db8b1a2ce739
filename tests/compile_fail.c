/* SPDX-License-Identifier: MIT */
/*
 * compile_fail.c - passing the wrong key type is a compile-time error.
 * check_compile_fail.sh builds CASE=0 (must compile) and CASE=1..N (each
 * must fail), as C and C++, with every compiler it finds.
 */
#include <switchyard.h>

DEFINE_STATIC_KEY_TRUE(kt);
DEFINE_STATIC_KEY_FALSE(kf);
struct static_key plain = STATIC_KEY_INIT_FALSE;
struct static_key_deferred dkey;
int not_a_key;

int f(void);
int f(void)
{
#if CASE == 0	/* the right types: compiles */
	int r = static_branch_likely(&kt) + static_branch_unlikely(&kf) +
		static_key_true(&plain) + static_key_false(&plain) +
		static_key_enabled(&kt) + static_key_enabled(&kf) +
		static_key_enabled(&plain);
	r += static_branch_enable(&kt) + static_key_enable(&plain);
	return r;
#elif CASE == 1	/* plain key in a typed branch */
	return static_branch_likely(&plain);
#elif CASE == 2	/* a deferred key's wrapper instead of its .key */
	return static_branch_unlikely(&dkey);
#elif CASE == 3	/* typed key in the deprecated branch */
	return static_key_true(&kt);
#elif CASE == 4	/* not a key at all */
	return static_key_enabled(&not_a_key);
#elif CASE == 5	/* typed front end on a plain key */
	return static_branch_enable(&plain);
#elif CASE == 6	/* typed key where a struct static_key * is taken */
	return static_key_enable(&kt);
#elif CASE == 7	/* static_key_false() on a typed key */
	return static_key_false(&kf);
#endif
}
