/* SPDX-License-Identifier: MIT */
/*
 * live_sites.c - a process whose static key sites test_cli_live.sh lists
 * through its control socket (`switchyard list PID`) and changes (`set`):
 * a key off with an unlikely site, a key on with a likely one, each on a
 * line marked SITE_<key>. It prints "ready PID" and which way each site
 * went, then again for every line on its standard input, and exits when
 * that closes. Run with SWITCHYARD_CONTROL=1; in a cross build under the
 * emulator.
 */
#include <stdio.h>

#include <switchyard.h>

#include "ready_loop.h"

DEFINE_STATIC_KEY_FALSE(live_off);
DEFINE_STATIC_KEY_TRUE(live_on);

__attribute__((noinline)) static int live_one(void)
{
	if (static_branch_unlikely(&live_off))	/* SITE_live_off */
		return 1;
	return 0;
}

__attribute__((noinline)) static int live_two(void)
{
	if (static_branch_likely(&live_on))	/* SITE_live_on */
		return 1;
	return 0;
}

static void states(void)
{
	printf("live_off=%d live_on=%d\n", live_one(), live_two());
	fflush(stdout);
}

int main(void)
{
	return ready_loop(states);
}
