/* SPDX-License-Identifier: MIT */
/*
 * sy_watchdog.h - hang detection for the tests whose failure mode is a
 * deadlock. A watchdog thread (every signal blocked) prints "FAIL: ..." and
 * _exit(1)s once the armed deadline passes, so that a hang is reported by
 * the test itself, quickly, instead of by ctest's timeout.
 * sy_watch_progress() fails the same way when a counter stops moving.
 *
 * Async-signal-safe where it matters: the failure path uses write() and
 * _exit() only (other threads may hold any lock).
 */
#ifndef SY_WATCHDOG_H
#define SY_WATCHDOG_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * No deadline, and no stall, shorter than this: they tell a hang from
 * slowness, and a loaded machine (ctest -j4 on 2 cores beside other
 * builds) stretched 40 ms scenarios to 12 s. A hang is still reported by
 * the test itself, before ctest's timeout (30 s or more).
 */
#define SY_WD_MIN_S 20.0

static _Atomic long long sy_wd_deadline;	/* CLOCK_MONOTONIC ns; 0: off */
static const char *_Atomic sy_wd_what;
static atomic_int sy_wd_started;

static inline long long sy_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static inline void sy_sleep_ms(double ms)
{
	struct timespec ts = { (time_t)(ms / 1000),
			       (long)((ms - 1000.0 * (long)(ms / 1000)) * 1e6) };

	while (nanosleep(&ts, &ts))
		;
}

__attribute__((noreturn, unused)) static void sy_fail_now(const char *what)
{
	ssize_t r = write(2, "FAIL: ", 6);

	r = write(2, what, strlen(what));
	r = write(2, "\n", 1);
	(void)r;
	_exit(1);
}

static inline void *sy_wd_main(void *arg)
{
	(void)arg;
	for (;;) {
		long long d = atomic_load(&sy_wd_deadline);

		if (d && sy_now_ns() > d)
			sy_fail_now(atomic_load(&sy_wd_what));
		sy_sleep_ms(10);
	}
	return NULL;
}

/*
 * sy_watchdog_arm - fail the test if it has not called sy_watchdog_disarm()
 * (or armed again) within secs seconds. The first call starts the thread.
 */
static inline void sy_watchdog_arm(double secs, const char *what)
{
	if (secs < SY_WD_MIN_S)
		secs = SY_WD_MIN_S;
	atomic_store(&sy_wd_what, what);
	atomic_store(&sy_wd_deadline, sy_now_ns() + (long long)(secs * 1e9));
	if (!atomic_exchange(&sy_wd_started, 1)) {
		sigset_t all, old;
		pthread_t t;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (pthread_create(&t, NULL, sy_wd_main, NULL) == 0)
			pthread_detach(t);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
}

static inline void sy_watchdog_disarm(void)
{
	atomic_store(&sy_wd_deadline, 0);
}

/* A counter that must keep moving. */
struct sy_progress {
	const char *what;		/* "fork()", "dlopen/dlclose cycles" */
	_Atomic unsigned long *count;
	unsigned long last;
	long long moved;		/* when it last moved */
};

/*
 * sy_watch_progress - sample the counters every 10 ms for run_s seconds,
 * and on until each of them has moved (what the scheduler gives a thread
 * in run_s is not promised: the callers check that each made progress);
 * fail the test (exit 1) as soon as one of them has not moved for stall_s
 * seconds (at least SY_WD_MIN_S). Returns normally otherwise.
 */
static inline void sy_watch_progress(struct sy_progress *p, int n, double run_s,
				     double stall_s)
{
	long long t0 = sy_now_ns(), now;
	unsigned long first[16];
	bool all_moved;

	if (stall_s < SY_WD_MIN_S)
		stall_s = SY_WD_MIN_S;
	for (int i = 0; i < n && i < 16; i++) {
		p[i].last = first[i] = atomic_load(p[i].count);
		p[i].moved = t0;
	}
	do {
		sy_sleep_ms(10);
		now = sy_now_ns();
		for (int i = 0; i < n; i++) {
			unsigned long c = atomic_load(p[i].count);
			char msg[200];

			if (c != p[i].last) {
				p[i].last = c;
				p[i].moved = now;
				continue;
			}
			if (now - p[i].moved < (long long)(stall_s * 1e9))
				continue;
			snprintf(msg, sizeof(msg), "no progress of %s for %.1f s "
				 "(%lu so far, %.1f s into the run): deadlock",
				 p[i].what, stall_s, c, (now - t0) / 1e9);
			sy_fail_now(msg);
		}
		all_moved = true;
		for (int i = 0; i < n && i < 16; i++)
			all_moved &= atomic_load(p[i].count) != first[i];
	} while (now - t0 < (long long)(run_s * 1e9) || !all_moved);
}

#endif /* SY_WATCHDOG_H */
