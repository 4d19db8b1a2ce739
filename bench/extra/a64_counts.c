/* SPDX-License-Identifier: MIT */
/*
 * a64_counts.c - what a change costs in writes and syncs, counted by the
 * library (switchyard_get_stats()), for run_aarch64.sh: a key with 100
 * sites flipped, a static call with 100 sites re-targeted (near, then to
 * the library's __static_call_return0, then back). Timings under qemu are
 * not hardware timings: counts only. Any architecture.
 */
#include <stdio.h>

#include <switchyard.h>

DEFINE_STATIC_KEY_FALSE(cnt_key);

static long near_a(long x) { return x + 1; }
static long near_b(long x) { return x + 2; }
DEFINE_STATIC_CALL(cnt_call, near_a);

#define K if (static_branch_unlikely(&cnt_key)) x++;
#define C x = static_call(cnt_call)(x);
#define K10 K K K K K K K K K K
#define C10 C C C C C C C C C C

__attribute__((noinline)) static long keys(long x)
{
	K10 K10 K10 K10 K10 K10 K10 K10 K10 K10
	return x;
}

__attribute__((noinline)) static long calls(long x)
{
	C10 C10 C10 C10 C10 C10 C10 C10 C10 C10
	return x;
}

static struct switchyard_stats before;
static volatile long seed;	/* no constant argument: no clone */

static void report(const char *what)
{
	struct switchyard_stats now;

	switchyard_get_stats(&now);
	printf("  %-44s %3llu batch(es) %3llu sync(s) %4llu site(s) written "
	       "%4llu write call(s)\n", what,
	       (unsigned long long)(now.patch_batches - before.patch_batches),
	       (unsigned long long)(now.sync_calls - before.sync_calls),
	       (unsigned long long)(now.patched_sites - before.patched_sites),
	       (unsigned long long)(now.write_calls - before.write_calls));
	before = now;
}

int main(void)
{
	long x = keys(seed) + calls(seed);

	switchyard_get_stats(&before);
	static_branch_enable(&cnt_key);
	report("key on (100 static_branch_unlikely())");
	static_branch_disable(&cnt_key);
	report("key off");
	static_call_update(cnt_call, near_b);
	report("static call, near target (100 sites)");
	static_call_update(cnt_call, near_b);
	report("static call, the same target");
	static_call_update(cnt_call, (long (*)(long))(void (*)(void))
			   __static_call_return0);
	report("static call, RET0 (the library's function)");
	static_call_update(cnt_call, (long (*)(long))(void (*)(void))
			   __static_call_return0);
	report("static call, RET0 again");
	static_call_update(cnt_call, near_a);
	report("static call, back to near");
	return keys(x + seed) == 0 && calls(x + seed) == 0;
}
