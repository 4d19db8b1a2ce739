/* SPDX-License-Identifier: MIT */
/*
 * races.c - a program for helgrind and DRD (check_races.sh): one thread
 * calls a static call and reads keys (static_branch, static_key_enabled())
 * while the main thread updates the call and flips the keys, every way a
 * program does (enable/disable, inc/dec, a deferred decrement), and asks
 * the library whether it holds the patch lock. Its own
 * synchronisation is a mutex and a condition variable, which both tools
 * understand: every race they report is between the library and the
 * program's uses of it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <switchyard.h>

DEFINE_STATIC_KEY_FALSE(race_k);
DEFINE_STATIC_KEY_TRUE(race_t);
DEFINE_STATIC_KEY_DEFERRED_FALSE(race_d, 1);

static int add1(int x) { return x + 1; }
static int add2(int x) { return x + 2; }
DEFINE_STATIC_CALL(race_sc, add1);

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int started, changing, stop;
static long total;

/* 0 before main()'s changes, 1 during them, 2 once they are done */
static int phase(void)
{
	int s;

	pthread_mutex_lock(&m);
	s = stop ? 2 : changing;
	pthread_mutex_unlock(&m);
	return s;
}

/*
 * The runner's rounds are bounded once main() has begun its changes:
 * under DRD every race it reports is matched against the suppressions,
 * which slows the whole process, and a runner that ran until main() was
 * done made more reports the slower main() got (a run took from 1 s to
 * minutes, by the scheduler). The tools report accesses that no
 * synchronisation orders, whatever their timing, so rounds that overlap
 * main()'s changes, from their start, see every race a longer run did;
 * a runner done before main() began would see none (its accesses would
 * all come before main()'s, ordered through m).
 */
#define ROUNDS 20

static void *runner(void *arg)
{
	long s = 0;
	int rounds = 0, p;

	(void)arg;
	pthread_mutex_lock(&m);
	started = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&m);
	do {
		for (int i = 0; i < 200; i++) {
			s += static_call(race_sc)(i);
			if (static_branch_unlikely(&race_k))
				s++;
			if (static_branch_likely(&race_t))
				s++;
			if (static_branch_unlikely(&race_d.key))
				s++;
			s += static_key_enabled(&race_k);
			s += static_key_enabled(&race_t);
			s += static_key_enabled(&race_d.key);
			/* the library's own lock-free read (whether this
			 * thread holds the patch lock: it does not), which
			 * the suppression file covers: the control's races */
			s += switchyard_patch_unlock() == -EPERM;
		}
		p = phase();
	} while (p == 0 || (p == 1 && ++rounds < ROUNDS));
	pthread_mutex_lock(&m);
	total = s;
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, runner, NULL))
		return 2;
	/* the runner reads concurrently with every change below */
	pthread_mutex_lock(&m);
	while (!started)
		pthread_cond_wait(&cv, &m);
	changing = 1;
	pthread_mutex_unlock(&m);
	for (int i = 0; i < 10; i++) {
		static_call_update(race_sc, (i & 1) ? add1 : add2);
		static_branch_enable(&race_k);
		static_branch_disable(&race_t);
		static_branch_inc(&race_k);
		static_branch_dec(&race_k);
		static_branch_disable(&race_k);
		static_branch_enable(&race_t);
		static_branch_deferred_inc(&race_d);
		static_branch_slow_dec_deferred(&race_d);
	}
	pthread_mutex_lock(&m);
	stop = 1;
	pthread_mutex_unlock(&m);
	pthread_join(t, NULL);
	static_key_deferred_flush(&race_d);
	printf("races: done (%ld)\n", total > 0 ? 1L : 0L);
	return 0;
}
