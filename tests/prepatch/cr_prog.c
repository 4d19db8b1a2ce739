/* SPDX-License-Identifier: MIT */
/*
 * cr_prog.c - a program (linked without PIE: its reference to the
 * library's key is a copy relocation whatever the compiler's default)
 * with a site of libcr's TRUE key cr_on. Exits 0 when the key is on at
 * run time, as its library defines it: the test's premise.
 */
#include <stdio.h>
#include <switchyard.h>

DECLARE_STATIC_KEY_TRUE(cr_on);
int cr_lib_f(void);

__attribute__((noinline)) static int cr_site(void)
{
	return static_branch_likely(&cr_on);
}

int main(void)
{
	int on = static_key_enabled(&cr_on), site = cr_site();

	printf("cr_on enabled=%d site=%d lib=%d\n", on, site, cr_lib_f());
	return on && site ? 0 : 1;
}
