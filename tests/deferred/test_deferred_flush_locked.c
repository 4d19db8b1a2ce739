/* SPDX-License-Identifier: MIT */
/*
 * test_deferred_flush_locked - static_key_deferred_flush() called by a
 * thread that holds the patch lock (allowed: every call but the
 * _cpuslocked ones notices the held lock and goes on) while the deferred
 * worker is due to run the key's final decrement.
 *
 * Each round takes a reference on a deferred key (2 ms rate limit), queues
 * the final decrement, takes the patch lock, waits until the decrement is
 * due (and, as a hint, until the worker has taken the work: sy_pending
 * drops), then flushes. The flush must return 0 with the count at 0 and the
 * site falling through, nothing may be logged (the decrement runs exactly
 * once), and nothing may hang: a watchdog fails the test after 20 s.
 */
#include <stdatomic.h>

#include "sy_test.h"
#include "sy_watchdog.h"

#define RATE_MS 2

DEFINE_STATIC_KEY_DEFERRED_FALSE(flush_key, RATE_MS);

__attribute__((noinline)) static int flush_site(void)
{
	return static_branch_unlikely(&flush_key.key);
}

static void check_off(void)
{
	CHECK_EQ(static_key_count(&flush_key.key.key), 0);
	CHECK_EQ(flush_site(), 0);
	sy_test_check_sites(&flush_key.key.key);
}

int main(void)
{
	int taken = 0;

	switchyard_set_log(sy_test_log, NULL);
	for (int round = 0; round < 12; round++) {
		/* 1 to 12 ms past the deadline: the worker is waiting for the
		 * lock, or about to run, or (under load) not awake yet */
		double past_ms = 1 + round;

		sy_watchdog_arm(20, "static_key_deferred_flush() with the patch "
			       "lock held, the worker due: no return in 20 s");
		CHECK_EQ(static_branch_deferred_inc(&flush_key), 0);
		CHECK_EQ(static_branch_slow_dec_deferred(&flush_key), 0);
		long long queued = sy_now_ns();

		CHECK_EQ(switchyard_patch_lock(), 0);
		while (sy_now_ns() - queued < (RATE_MS + past_ms) * 1e6)
			sy_sleep_ms(0.5);
		/* hint only (a private field): the worker took the work */
		for (int i = 0; i < 20 && __atomic_load_n(&flush_key.work.sy_pending,
							  __ATOMIC_ACQUIRE); i++)
			sy_sleep_ms(1);
		taken += !__atomic_load_n(&flush_key.work.sy_pending,
					  __ATOMIC_ACQUIRE);
		sy_sleep_ms(2);	/* let it reach the patch lock */
		CHECK_EQ(static_key_deferred_flush(&flush_key), 0);
		check_off();
		CHECK_EQ(switchyard_patch_unlock(), 0);
		sy_watchdog_disarm();
		sy_sleep_ms(RATE_MS + 5);	/* whatever the worker still does */
		check_off();
	}
	printf("worker had taken the work before the flush in %d of 12 rounds\n",
	       taken);
	CHECK_EQ(sy_test_log_count, 0);
	if (sy_test_log_count)
		fprintf(stderr, "logged:\n%s", sy_test_log_all);
	/* the key still works */
	CHECK_EQ(static_branch_enable(&flush_key.key), 0);
	CHECK_EQ(flush_site(), 1);
	CHECK_EQ(static_branch_disable(&flush_key.key), 0);
	check_off();
	return sy_test_done("test_deferred_flush_locked");
}
