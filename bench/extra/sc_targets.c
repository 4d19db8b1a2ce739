/* SPDX-License-Identifier: MIT */
/* sc_targets.c - call targets for bench_static_call.c, in their own
 * translation unit so that no variant's call is inlined or specialised. */
long sc_target_a(long x);
long sc_target_b(long x);

long sc_target_a(long x)
{
	return x * 3 + 1;
}

long sc_target_b(long x)
{
	return x * 5 + 1;
}
