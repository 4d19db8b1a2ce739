/* SPDX-License-Identifier: MIT */
/*
 * test_deferred_fork_child - a child forked while its parent has a deferred
 * key's final decrement queued (10 s rate limit: it is not due during the
 * test) runs that decrement from fork()'s child handler (there is no worker
 * thread in the child): right after fork(), without waiting or flushing,
 * the child's key has count 0 and every site of it falls through. The
 * parent is not affected: its count stays 1 and its sites jump until it
 * flushes. The fork is done twice: from the main thread and from another
 * thread while the main thread runs the sites. The child then queues a
 * decrement of its own (20 ms): its worker (the parent's did not come
 * across fork()) must run it, without a flush. Where a child of a
 * multithreaded process cannot start a thread at all (qemu-user 7.2 aborts
 * in it: the cross suite's emulator), that last part is not tried, and
 * the test says so.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sy_test.h"
#include "sy_watchdog.h"

DEFINE_STATIC_KEY_DEFERRED_FALSE(fc_key, 10000);
DEFINE_STATIC_KEY_DEFERRED_FALSE(fc_fast, 20);

__attribute__((noinline)) static int fc_site(void)
{
	return static_branch_unlikely(&fc_key.key);
}

__attribute__((noinline)) static int fc_site_2(void)
{
	if (static_branch_unlikely(&fc_key.key))
		return 1;
	__asm__ volatile(".skip 200, 0x90");	/* a 5-byte site */
	return 0;
}

static int child_threads = 1;	/* a forked child can start a thread */

static void *nothing(void *arg)
{
	return arg;
}

/* Whether a child forked from this multithreaded process can start a
 * thread: the emulator's limit, not the library's (its messages hidden). */
static int probe_child_threads(void)
{
	int st = -1;
	pid_t pid = fork();

	if (pid == 0) {
		pthread_t t;
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {	/* qemu's "Bail out!" goes to stdout */
			dup2(fd, 1);
			dup2(fd, 2);
		}
		_exit(pthread_create(&t, NULL, nothing, NULL) ||
		      pthread_join(t, NULL));
	}
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	       !WEXITSTATUS(st);
}

/* In the child, right after fork(): no waiting, no flush. */
__attribute__((noreturn)) static void child(void)
{
	CHECK_EQ(static_key_count(&fc_key.key.key), 0);
	CHECK_EQ(static_key_enabled(&fc_key.key.key), 0);
	CHECK_EQ(fc_site(), 0);
	CHECK_EQ(fc_site_2(), 0);
	if (SY_TEST_HAVE_SITES)
		CHECK_EQ(sy_test_check_sites(&fc_key.key.key), 2);
	/* nothing left queued: the flush finds nothing to do */
	CHECK_EQ(static_key_deferred_flush(&fc_key), 0);
	CHECK_EQ(static_key_count(&fc_key.key.key), 0);
	/* and the key still changes in the child */
	CHECK_EQ(static_branch_inc(&fc_key.key), 0);
	CHECK_EQ(fc_site() + fc_site_2(), 2);
	sy_test_check_sites(&fc_key.key.key);
	CHECK_EQ(static_branch_dec(&fc_key.key), 0);
	CHECK_EQ(fc_site() + fc_site_2(), 0);
	sy_test_check_sites(&fc_key.key.key);
	/* a deferred decrement of the child's own: run by a worker of its
	 * own (the watchdog's 20 s bound the wait) */
	if (!child_threads) {
		fflush(stdout);
		_exit(sy_test_failures ? 1 : 0);
	}
	CHECK_EQ(static_branch_deferred_inc(&fc_fast), 0);
	CHECK_EQ(static_branch_slow_dec_deferred(&fc_fast), 0);
	for (int i = 0; i < 5000 && static_key_enabled(&fc_fast.key.key); i++)
		sy_sleep_ms(2);
	CHECK_EQ(static_key_count(&fc_fast.key.key), 0);
	fflush(stdout);
	_exit(sy_test_failures ? 1 : 0);
}

/* The parent's state while the decrement is queued. */
static void check_parent_queued(void)
{
	CHECK_EQ(static_key_count(&fc_key.key.key), 1);
	CHECK_EQ(fc_site(), 1);
	CHECK_EQ(fc_site_2(), 1);
	sy_test_check_sites(&fc_key.key.key);
}

static void fork_and_check(const char *how)
{
	int st = -1;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0)
		child();
	CHECK(pid > 0);
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "%s: child status %#x\n", how, st);
		CHECK(0);
	}
}

static atomic_bool stop;

/* The checks of this thread are counted while the main thread only reads
 * stop; the main thread's own checks come after the join. */
static void *forker(void *arg)
{
	(void)arg;
	fork_and_check("fork from a second thread");
	atomic_store(&stop, 1);
	return NULL;
}

static void queue_final_dec(void)
{
	CHECK_EQ(static_branch_deferred_inc(&fc_key), 0);
	CHECK_EQ(static_branch_slow_dec_deferred(&fc_key), 0);
	check_parent_queued();
}

int main(void)
{
	pthread_t t;
	int created, still = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	sy_watchdog_arm(20, "the test did not finish in 20 s");
	/* the watchdog's thread runs: this process is multithreaded */
	child_threads = probe_child_threads();
	if (!child_threads)
		printf("NOTE: a child of a multithreaded process cannot start "
		       "a thread here (qemu-user 7.2 aborts): the child's own "
		       "deferred decrement is not tried\n");

	/* 1: fork from the main thread */
	queue_final_dec();
	fork_and_check("fork from the main thread");
	check_parent_queued();	/* the child's decrement was its own */
	CHECK_EQ(static_key_deferred_flush(&fc_key), 0);
	CHECK_EQ(static_key_count(&fc_key.key.key), 0);
	CHECK_EQ(fc_site() + fc_site_2(), 0);
	sy_test_check_sites(&fc_key.key.key);

	/* 2: fork from another thread while this one runs the sites */
	queue_final_dec();
	created = pthread_create(&t, NULL, forker, NULL);
	while (!created && !atomic_load(&stop))
		still &= fc_site() + fc_site_2() == 2;
	CHECK(created || !pthread_join(t, NULL));
	CHECK_EQ(created, 0);
	CHECK(still);	/* the parent's sites kept jumping */
	check_parent_queued();
	CHECK_EQ(static_key_deferred_flush(&fc_key), 0);
	CHECK_EQ(static_key_count(&fc_key.key.key), 0);
	CHECK_EQ(fc_site() + fc_site_2(), 0);
	sy_test_check_sites(&fc_key.key.key);

	sy_watchdog_disarm();
	return sy_test_done("test_deferred_fork_child");
}
