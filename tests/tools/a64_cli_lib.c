/* SPDX-License-Identifier: MIT */
/*
 * a64_cli_lib.c - an AArch64 shared object whose records
 * test_cli_aarch64.sh lists and prepatches with `switchyard`: the lines
 * marked SITE_<key>_<n> hold the sites of static keys, CALL_<name> a
 * static call site, ALT_<n> an alternative, RC_<variable> a run-time
 * constant. Built by the test with the AArch64 compiler, never run.
 *
 * The key sites and the static call site are the headers' own (a static
 * call site is one BL to its veneer; the record's flags field holds the
 * veneer's distance from that field). The alternative and run-time
 * constant records are written out here in the layouts of
 * src/sy_records.h, with AArch64 instructions, so that the tool's reading
 * of them is tested whatever the headers emit.
 */
#ifndef __aarch64__
#error "an AArch64 fixture: build it with an AArch64 compiler"
#endif
#include <switchyard.h>

DEFINE_STATIC_KEY_FALSE(a64_off);
SWITCHYARD_KEY_DESCRIPTION(a64_off, "an AArch64 key, \"off\"");
DEFINE_STATIC_KEY_TRUE(a64_on);
extern struct static_key_false a64_ext;	/* another object's */

int a64_impl(int x);
int a64_impl(int x)
{
	return x + 7;
}
DEFINE_STATIC_CALL(a64_sc, a64_impl);
unsigned int a64_limit = 9;

int a64_one(int x);
__attribute__((noinline)) int a64_one(int x)
{
	if (static_branch_unlikely(&a64_off))	/* SITE_a64_off_1 */
		x += 1;
	if (static_branch_likely(&a64_on))	/* SITE_a64_on_1 */
		x *= 2;
	return x;
}

int a64_two(int x);
__attribute__((noinline)) int a64_two(int x)
{
	if (static_branch_unlikely(&a64_ext))	/* SITE_a64_ext_1 */
		x -= 3;
	if (static_branch_unlikely(&a64_off))	/* SITE_a64_off_2 */
		x ^= 5;
	return x;
}

/* the caller-saved registers a call may change (AAPCS64) */
#define A64_CALL_CLOBBERS                                                      \
	"x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11",     \
	"x12", "x13", "x14", "x15", "x16", "x17", "x30", "v0", "v1", "v2",     \
	"v3", "v4", "v5", "v6", "v7", "v16", "v17", "v18", "v19", "v20",       \
	"v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30",  \
	"v31", "cc", "memory"

int a64_three(int x);
__attribute__((noinline)) int a64_three(int x)
{
	return static_call(a64_sc)(x);	/* CALL_a64_sc */
}

int a64_four(int x);
__attribute__((noinline)) int a64_four(int x)
{
	register long x0 __asm__("x0") = x;

	/* an alternative: two NOPs, replaced by a BL and a NOP when
	 * feature 3 is absent (bit 15) */
	__asm__ volatile("1:\tnop\n\tnop\n"			/* ALT_1 */
			 "2:\n\t"
			 ".pushsection .text.unlikely.a64_repl, \"ax\"\n"
			 "3:\tbl a64_impl\n\tnop\n"
			 "4:\n\t"
			 ".popsection\n\t"
			 ".pushsection sy_altinstr, \"aw\"\n\t"
			 ".balign 4\n\t"
			 ".long 1b - ., 3b - ., 1b - .\n\t"
			 ".short 0x8003\n\t"
			 ".byte 2b - 1b, 4b - 3b\n\t"
			 ".popsection"
			 : "+r"(x0)
			 :
			 : A64_CALL_CLOBBERS);
	return (int)x0;
}

unsigned a64_five(void);
__attribute__((noinline)) unsigned a64_five(void)
{
	unsigned v;

	/* a run-time constant: a 4-byte immediate in MOVZ + MOVK */
	__asm__("1:\tmovz %w[v], #0x4567\n\t" /* RC_a64_limit */
		"movk %w[v], #0x123, lsl #16\n"
		"2:\n\t"
		".pushsection sy_runtime_const, \"aw\"\n\t"
		".balign 8\n\t"
		".quad %c[sym]\n\t"
		".long 1b - .\n\t"
		".byte 2b - 1b, 4, 0, 0\n\t"
		".popsection"
		: [v] "=r"(v)
		: [sym] "S"(&a64_limit));
	return v;
}
