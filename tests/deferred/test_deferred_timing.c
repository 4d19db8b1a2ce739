/* SPDX-License-Identifier: MIT */
/*
 * test_deferred_timing - a deferred key's final decrement waits its rate
 * limit (milliseconds), never less, and then happens.
 *
 * Only lower bounds are asserted, from the monotonic clock read before the
 * decrement is queued: load can only delay the worker, so a decrement seen
 * earlier than the rate limit is a wrong deadline, on any machine. The
 * upper bound is the watchdog's (20 s): "it happens at all".
 *
 * Cases, each a key with its own rate limit:
 *  - the final decrement (count 1 -> 0) of a 300 ms key: the key stays on,
 *    its site jumps, for at least 300 ms, then goes off;
 *  - the same key after jump_label_rate_limit() to 150 ms: the new limit
 *    applies to the next decrement;
 *  - a decrement that is not the last (count 2 -> 1) happens at once, and
 *    the queued one keeps its own deadline.
 */
#include "sy_test.h"
#include "sy_watchdog.h"

DEFINE_STATIC_KEY_DEFERRED_FALSE(slow_key, 300);

__attribute__((noinline)) static int slow_site(void)
{
	return static_branch_unlikely(&slow_key.key);
}

/* Queue the final decrement and watch for it; the milliseconds it took
 * from before the call, or -1 if it never came. */
static double final_dec_ms(void)
{
	long long t0 = sy_now_ns();
	bool on_seen = false;

	CHECK_EQ(static_branch_deferred_inc(&slow_key), 0);
	CHECK_EQ(static_branch_slow_dec_deferred(&slow_key), 0);
	for (;;) {
		/* the site first: the worker drops the count, then writes
		 * the sites, so a site that falls through means count 0 */
		int site = slow_site();
		bool on = static_key_enabled(&slow_key.key.key);
		double ms = (double)(sy_now_ns() - t0) / 1e6;

		if (!site)
			CHECK(!on);
		if (on) {
			on_seen = true;
		} else {
			CHECK(on_seen);	/* queued, not done at once */
			/* the worker drops the count, then writes the
			 * sites: they follow within the watchdog's bound */
			while (slow_site())
				sy_sleep_ms(1);
			sy_test_check_sites(&slow_key.key.key);
			return ms;
		}
		if (ms > 15000)
			return -1;
		sy_sleep_ms(2);
	}
}

int main(void)
{
	double ms;

	switchyard_set_log(sy_test_log, NULL);
	sy_watchdog_arm(20, "a deferred decrement did not come in 20 s");

	ms = final_dec_ms();
	printf("300 ms key: off after %.1f ms\n", ms);
	CHECK(ms >= 300.0);

	jump_label_rate_limit(&slow_key, 150);
	ms = final_dec_ms();
	printf("150 ms key: off after %.1f ms\n", ms);
	CHECK(ms >= 150.0);

	/* 2 -> 1 at once; the final one keeps its deadline */
	{
		long long t0 = sy_now_ns();

		CHECK_EQ(static_branch_deferred_inc(&slow_key), 0);
		CHECK_EQ(static_branch_deferred_inc(&slow_key), 0);
		CHECK_EQ(static_branch_slow_dec_deferred(&slow_key), 0);
		CHECK_EQ(static_key_count(&slow_key.key.key), 1);
		CHECK_EQ(static_branch_slow_dec_deferred(&slow_key), 0);
		while (static_key_enabled(&slow_key.key.key))
			sy_sleep_ms(2);
		ms = (double)(sy_now_ns() - t0) / 1e6;
		printf("2 -> 1 -> 0: off after %.1f ms\n", ms);
		CHECK(ms >= 150.0);
		while (slow_site())
			sy_sleep_ms(1);
		sy_test_check_sites(&slow_key.key.key);
	}
	sy_watchdog_disarm();
	return sy_test_done("deferred_timing");
}
