/* SPDX-License-Identifier: MIT */
/*
 * a64_cli_prog.c - an AArch64 program (linked without PIE) that
 * test_cli_aarch64.sh lists and prepatches: its own key, and a site of
 * the library's a64_on (a64_cli_lib.c), of which the program holds a copy
 * made by a copy relocation (R_AARCH64_COPY): its initial state is the
 * library's. Lines marked as in a64_cli_lib.c. Built by the test, never
 * run.
 *
 * The copy: the program's code takes a64_on's address itself (compiled
 * without PIC: ADRP + ADD, resolved at link time), so the linker gives the
 * program a copy; the site's record then names the copy too.
 */
#ifndef __aarch64__
#error "an AArch64 fixture: build it with an AArch64 compiler"
#endif
#include <switchyard.h>

DEFINE_STATIC_KEY_FALSE(a64_prog_key);
extern struct static_key_true a64_on;	/* the library's */
int a64_one(int x);

int main(int argc, char **argv)
{
	int x = argc;

	(void)argv;
	if (static_branch_likely(&a64_prog_key)) /* SITE_a64_prog_key_1 */
		x += 2;
	if (static_branch_likely(&a64_on))		/* SITE_a64_on_2 */
		x *= 3;
	/* count the key: its address, taken in the program's code */
	return a64_one(x) + (int)static_key_count(&a64_on.key);
}
