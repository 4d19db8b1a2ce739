/* SPDX-License-Identifier: MIT */
/* cli_lib.c - a library that defines a key and has a site of it and of
 * the program's key (test_cli.sh) */
#include <switchyard.h>

DEFINE_STATIC_KEY_FALSE(cli_lib_key);
SWITCHYARD_KEY_DESCRIPTION(cli_lib_key, "the library's key");
extern struct static_key_true cli_on;	/* the program's */

int cli_lib_work(int x)
{
	if (static_branch_unlikely(&cli_lib_key))	/* SITE_cli_lib_key_1 */
		x++;
	if (static_branch_likely(&cli_on))	/* SITE_cli_on_2 */
		x--;
	return x;
}
