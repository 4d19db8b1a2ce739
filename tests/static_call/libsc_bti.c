/* SPDX-License-Identifier: MIT */
/*
 * libsc_bti.c - static calls and keys in an object built with
 * -mbranch-protection=standard and linked with -z force-bti (AArch64), so
 * that the dynamic linker maps its text with guarded pages (BTI), and
 * whose functions sign their return addresses (PAC); a module opened by
 * test_sc_bti.c (linked without the C library's start files, which have
 * no landing pads). What must hold:
 *  - the glue's constructor and destructor, called indirectly from
 *    .init_array and .fini_array, start with a landing pad (the pages are
 *    guarded after dlopen(): the destructor at exit is what the test sees;
 *    without its `bti c` the test dies of SIGILL);
 *  - a patched site's BL needs none: a target without a landing pad is
 *    called;
 *  - a veneer's `br x16` (or a callee-save veneer's `blr x16`) lands on
 *    the target's `bti c`: C functions and callee-save thunks have one
 *    (the test runs again with SWITCHYARD_STATIC_CALL=detour, every call
 *    through a veneer); a target without one dies of SIGILL through the
 *    callee-save veneer (bti_control(), in a child);
 *  - return addresses signed by the callers still authenticate after a
 *    call through a site, its veneer or a stub.
 */
#include "sy_sc_sites.h"
#include "sy_test.h"

#ifdef __cplusplus
extern "C" {
#endif
long bti_nolp(long x);
long cs_target(long x);
#ifdef __cplusplus
}
#endif

/* no landing pad: reachable by BL only in a guarded page */
__asm__(".text\n\t.globl bti_nolp\n\t.type bti_nolp, %function\n"
	"bti_nolp:\n\tadd x0, x0, #100\n\tret\n\t.size bti_nolp, . - bti_nolp");

__attribute__((noinline)) static long plus1(long x) { return x + 1; }
__attribute__((noinline)) static long plus2(long x) { return x + 2; }
__attribute__((noinline)) long cs_target(long x) { return x + 3; }
SWITCHYARD_CALLEE_SAVE_THUNK(cs_target);

DEFINE_STATIC_CALL(sc_bti, plus1);
DEFINE_STATIC_CALL_RET0(sc_bti0, plus1);
DEFINE_STATIC_CALL_CALLEE_SAVE(sc_btics, SWITCHYARD_CALLEE_SAVE(cs_target));
DEFINE_STATIC_KEY_FALSE(k_bti);

/* a frame that signs lr (a non-leaf function at -mbranch-protection) */
__attribute__((noinline)) static long call_bti(long x)
{
	long r = static_call(sc_bti)(x);

	__asm__ volatile("" ::: "memory");
	return r + (static_branch_unlikely(&k_bti) ? 1000 : 0);
}

__attribute__((noinline)) static long call_bti0(long x)
{
	return static_call(sc_bti0)(x);
}

__attribute__((noinline)) static long call_btics(long x)
{
	return static_call(sc_btics)(x);
}

/* The checks, in the module: the number that failed. */
int bti_run(void)
{
	CHECK_EQ(call_bti(1), 2);
	CHECK_EQ(static_call_update(sc_bti, plus2), 0);
	CHECK_EQ(call_bti(1), 3);
	static_branch_enable(&k_bti);
	CHECK_EQ(call_bti(1), 1003);
	static_branch_disable(&k_bti);
	CHECK_EQ(call_bti0(5), 0);		/* RET0: the library's, a stub */
	CHECK_EQ(static_call_update(sc_bti0, plus1), 0);
	CHECK_EQ(call_bti0(5), 6);
	CHECK_EQ(call_btics(1), 4);		/* the thunk, hint 34 first */
	CHECK_EQ(static_call_update(sc_btics, plus2), 0);
	CHECK_EQ(call_btics(1), 3);		/* the callee-save veneer */
	if (sy_sc_patched_mode()) {	/* a BL needs no landing pad */
		CHECK_EQ(static_call_update(sc_bti, bti_nolp), 0);
		CHECK_EQ(call_bti(1), 101);
		CHECK_EQ(static_call_update(sc_bti, plus1), 0);
	}
	return sy_test_done("sc_bti module") ? sy_test_failures : 0;
}

/* The control: an ordinary function at a callee-save site, so that its
 * veneer's blr x16 lands on a target with no landing pad. */
long bti_control(void)
{
	static_call_update(sc_btics, bti_nolp);
	return call_btics(1);
}

/* The pages are guarded: an indirect call to bti_nolp dies (SIGILL). */
long bti_plain(void)
{
	long (*volatile f)(long) = bti_nolp;

	return f(1);
}
