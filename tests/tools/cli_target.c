/* SPDX-License-Identifier: MIT */
/*
 * cli_target.c - a program whose records test_cli.sh lists with
 * `switchyard list`: the lines marked SITE_<name>_<n> hold the sites of
 * static keys, CALL_<name> of the static call, ALT_<feature> of the
 * alternative, RC_<variable> of the run-time constant.
 */
#include <stdio.h>
#include <switchyard.h>

DEFINE_STATIC_KEY_FALSE(cli_off);
/* a JSON reader must survive it: quotes, a brace, a backslash */
SWITCHYARD_KEY_DESCRIPTION(cli_off, "the \"off\" key {test} \\ done");
DEFINE_STATIC_KEY_TRUE(cli_on);
extern struct static_key_false cli_lib_key;	/* cli_lib.c */
int cli_lib_work(int x);

static int cli_impl(int x)
{
	return x + 7;
}
DEFINE_STATIC_CALL(cli_sc, cli_impl);
unsigned int cli_limit = 9;

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

__attribute__((noinline)) static int three(int x)
{
	x = static_call(cli_sc)(x);			/* CALL_cli_sc */
	if (static_cpu_has(X86_FEATURE_XMM2))		/* ALT_sse2 */
		x++;
	return x + (int)runtime_const_u32(cli_limit);	/* RC_cli_limit */
}

int main(void)
{
	printf("%d\n", one(1) + two(2) + three(4) + cli_lib_work(3));
	return 0;
}
