/* SPDX-License-Identifier: MIT */
/*
 * compile_fail.c - passing the wrong key type is a compile-time error, and
 * so is a branch on a key whose address is not a link-time constant
 * (CASE 8..11), and so is a static call updated to a function of another
 * type (CASE 12) or registered as its target (CASE 16).
 * check_compile_fail.sh builds CASE=0 (must compile) and
 * CASE=1..N (each must fail, with its own diagnostic), as C and C++, with
 * every compiler it finds.
 */
#include <switchyard.h>

DEFINE_STATIC_KEY_TRUE(kt);
DEFINE_STATIC_KEY_FALSE(kf);
struct static_key plain = STATIC_KEY_INIT_FALSE;
struct static_key_deferred dkey;
DEFINE_STATIC_KEY_ARRAY_FALSE(karr, 4);
struct static_key plain_arr[2];
struct holder {
	int x;
	struct static_key_false member;
} holder;
int not_a_key;
int i;	/* a run-time index */
static int sc_int(int x) { return x; }
static long sc_long(long x) { return x; }
DEFINE_STATIC_CALL(sc, sc_int);
/* signatures a C site refuses (cases 13-15); C++ calls them indirectly */
static int sc_dbl_f(double x) { return (int)x; }
static int sc_chr_f(char x) { return x; }
static double sc_dret_f(int x) { return x; }
DEFINE_STATIC_CALL(sc_dbl, sc_dbl_f);
DEFINE_STATIC_CALL(sc_chr, sc_chr_f);
DEFINE_STATIC_CALL(sc_dret, sc_dret_f);

int f(void);
int f(void)
{
#if CASE == 0	/* the right types, link-time constant addresses: compiles */
	static DEFINE_STATIC_KEY_TRUE(local_static);
	int r = static_branch_likely(&kt) + static_branch_unlikely(&kf) +
		static_key_true(&plain) + static_key_false(&plain) +
		static_key_enabled(&kt) + static_key_enabled(&kf) +
		static_key_enabled(&plain);
	r += static_branch_unlikely(&karr[3]) + static_branch_likely(&local_static) +
	     static_branch_unlikely(&holder.member) + static_key_false(&dkey.key) +
	     static_key_false(&plain_arr[1]);
	/* a run-time index: static_key_enabled(), a load and a test */
	r += static_key_enabled(&karr[i]) + static_key_enabled(&plain_arr[i]);
	r += static_branch_enable(&kt) + static_key_enable(&plain);
	/* static calls: a function of the call's type, or NULL */
	r += static_call_update(sc, sc_int) + static_call_update(sc, NULL);
	r += static_call(sc)(1);
	(void)sc_long;
	(void)sc_dbl_f;
	(void)sc_chr_f;
	(void)sc_dret_f;
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
#elif CASE == 8	/* a run-time index */
	return static_branch_unlikely(&karr[i]);
#elif CASE == 9	/* a key on the stack */
	struct static_key_true on_stack = STATIC_KEY_TRUE_INIT;

	return static_branch_likely(&on_stack);
#elif CASE == 10	/* a pointer variable */
	struct static_key_false *p = i ? &kf : &karr[0];

	return static_branch_unlikely(p);
#elif CASE == 11	/* the deprecated API, a run-time index */
	return static_key_false(&plain_arr[i]);
#elif CASE == 12	/* a static call updated to a function of another type */
	return static_call_update(sc, sc_long);
#elif CASE == 13	/* C, patched site: a double parameter */
	return (int)static_call(sc_dbl)(1.0);
#elif CASE == 14	/* C, patched site: a char parameter */
	return static_call(sc_chr)(1);
#elif CASE == 15	/* C, patched site: a double return */
	return (int)static_call(sc_dret)(1);
#elif CASE == 16
	return 0;
#endif
}

/* a registered target of the call's type, and one of another (CASE 16) */
#if CASE == 0
SWITCHYARD_STATIC_CALL_TARGET(sc, sc_int);
#elif CASE == 16
SWITCHYARD_STATIC_CALL_TARGET(sc, sc_long);
#endif
