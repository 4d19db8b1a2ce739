/* SPDX-License-Identifier: MIT */
/*
 * cli_target.c - a program whose static keys test_cli.sh lists with
 * `switchyard list`: the lines marked SITE_<key>_<n> hold the sites.
 */
#include <stdio.h>
#include <switchyard.h>

DEFINE_STATIC_KEY_FALSE(cli_off);
DEFINE_STATIC_KEY_TRUE(cli_on);
extern struct static_key_false cli_lib_key;	/* cli_lib.c */
int cli_lib_work(int x);

__attribute__((noinline)) static int one(int x)
{
	if (static_branch_unlikely(&cli_off))	/* SITE_cli_off_1 */
		x += 1;
	return x;
}

__attribute__((noinline)) static int two(int x)
{
	if (static_branch_likely(&cli_on))	/* SITE_cli_on_1 */
		x *= 2;
	if (static_branch_unlikely(&cli_off))	/* SITE_cli_off_2 */
		x -= 3;
	return x;
}

int main(void)
{
	printf("%d\n", one(1) + two(2) + cli_lib_work(3));
	return 0;
}
