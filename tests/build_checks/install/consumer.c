/* SPDX-License-Identifier: MIT */
/* consumer.c - built against an installed switchyard (find_package and
 * pkg-config): flips a key and checks the path. */
#include <switchyard.h>

DEFINE_STATIC_KEY_FALSE(k);

__attribute__((noinline)) static int path(void)
{
	return static_branch_unlikely(&k) ? 1 : 0;
}

int main(void)
{
	if (path() != 0)
		return 1;
	if (static_branch_enable(&k) || path() != 1)
		return 2;
	if (static_branch_disable(&k) || path() != 0)
		return 3;
	return 0;
}
