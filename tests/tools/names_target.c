/* SPDX-License-Identifier: MIT */
/*
 * names_target.c - a process whose keys and call are named through the
 * control socket (test_names_live.sh): a key with a UTF-8 description, one
 * whose description holds a byte that is not UTF-8 and a tab, a static
 * call with two registered targets, and two keys of a library
 * (names_lib.c) that an upgrade reorders. It prints "ready PID" and the
 * keys' states, then the states again for every line on its standard
 * input, and exits when that closes. Run with SWITCHYARD_CONTROL=1.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <switchyard.h>

#include "ready_loop.h"

DEFINE_STATIC_KEY_FALSE(net_trace);
SWITCHYARD_KEY_DESCRIPTION(net_trace, "trace every packet \u2014 caf\u00e9");
DEFINE_STATIC_KEY_FALSE(odd_text);
SWITCHYARD_KEY_DESCRIPTION(odd_text, "bad \xff byte\ttab");

static int plain(int x)
{
	return x;
}

static int fast(int x)
{
	return x * 2;
}

DEFINE_STATIC_CALL(codec, plain);
SWITCHYARD_STATIC_CALL_TARGET(codec, plain);
SWITCHYARD_STATIC_CALL_TARGET(codec, fast);

int nm_alpha_on(void);
int nm_beta_on(void);

static void states(void)
{
	printf("net_trace=%d odd_text=%d codec=%d nm_alpha=%d nm_beta=%d\n",
	       static_branch_unlikely(&net_trace) ? 1 : 0,
	       static_branch_unlikely(&odd_text) ? 1 : 0,
	       static_call(codec)(1), nm_alpha_on(), nm_beta_on());
	fflush(stdout);
}

int main(void)
{
	return ready_loop(states);
}
