/* SPDX-License-Identifier: MIT */
/*
 * names_dup_a.c, names_dup_b.c - two file-local keys named alike
 * (test_names_live.sh dups): `static DEFINE_STATIC_KEY_FALSE(k)` in each.
 * This file has main(): it prints "ready PID" and both keys' states for
 * every line on its standard input; exits when that closes.
 */
#include <stdio.h>
#include <unistd.h>

#include <switchyard.h>

static DEFINE_STATIC_KEY_FALSE(k);

int dup_b(void);

static __attribute__((noinline)) int dup_a(void)
{
	return static_branch_unlikely(&k) ? 1 : 0;
}

int main(void)
{
	char line[64];

	printf("ready %d\n", (int)getpid());
	do {
		printf("a=%d b=%d\n", dup_a(), dup_b());
		fflush(stdout);
	} while (fgets(line, sizeof(line), stdin));
	return 0;
}
