/* SPDX-License-Identifier: MIT */
/*
 * test_deferred_fork_signals - signal handlers that use a deferred key,
 * delivered every ~20 us to a thread that forks in a loop and to a thread
 * that runs the key's sites.
 *
 * The handler (SA_NODEFER: handlers nest, bounded at 3 deep) takes a
 * reference on the deferred key and drops it with the deferred decrement.
 * Each call must return 0 or -EDEADLK (the answer to a handler that
 * interrupted a switchyard call, fork()'s handlers included); fork() must
 * keep completing: the test fails as soon as no fork() has completed for
 * 20 s (not less: a loaded machine is slow, not hung; a handler blocked on a lock that its own thread took in fork()'s
 * prepare handler). Each child takes the patch lock, checks that its sites
 * agree with the key's state, and exits. At the end the references are
 * balanced: after a flush the key is off and its sites fall through.
 *
 *   test_deferred_fork_signals [seconds]   (default 4)
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sy_test.h"
#include "sy_watchdog.h"

DEFINE_STATIC_KEY_DEFERRED_FALSE(fork_key, 1);

__attribute__((noinline)) static int fork_site(void)
{
	return static_branch_unlikely(&fork_key.key);
}

__attribute__((noinline)) static int fork_site_2(void)
{
	if (static_branch_unlikely(&fork_key.key))
		return 1;
	__asm__ volatile(".skip 200, 0x90");	/* a 5-byte site */
	return 0;
}

static atomic_bool stop;
static _Atomic unsigned long forks, runs, bad_children;
static _Atomic long h_ok, h_deadlk, h_other, h_leaked;
static atomic_int h_other_val, bad_status;
static _Atomic pid_t tids[2];
static __thread int depth;

static void on_usr1(int sig)
{
	int e = errno, r;

	(void)sig;
	if (depth >= 3) {
		errno = e;
		return;
	}
	depth++;
	r = static_branch_deferred_inc(&fork_key);
	if (r == 0) {
		r = static_branch_slow_dec_deferred(&fork_key);
		if (r)	/* the reference stays: dropped at the end */
			atomic_fetch_add(&h_leaked, 1);
	}
	if (r == 0)
		atomic_fetch_add(&h_ok, 1);
	else if (r == -EDEADLK)
		atomic_fetch_add(&h_deadlk, 1);
	else {
		atomic_fetch_add(&h_other, 1);
		atomic_store(&h_other_val, r);
	}
	depth--;
	errno = e;
}

static void *forker(void *arg)
{
	(void)arg;
	atomic_store(&tids[0], (pid_t)syscall(SYS_gettid));
	while (!atomic_load(&stop)) {
		pid_t p = fork();

		if (p == 0) {
			/* The child inherits no lock held and no change in
			 * progress. (It may have a worker of its own, for a
			 * decrement still queued: hence the lock.) */
			if (switchyard_patch_lock())
				_exit(4);
			int on = static_key_enabled(&fork_key.key);
			int s1 = fork_site(), s2 = fork_site_2();

			switchyard_patch_unlock();
			_exit(s1 == on && s2 == on ? 0 : 8 | on << 2 | s1 << 1 | s2);
		}
		if (p > 0) {
			int status;

			while (waitpid(p, &status, 0) < 0 && errno == EINTR)
				;
			if (!WIFEXITED(status) || WEXITSTATUS(status)) {
				atomic_fetch_add(&bad_children, 1);
				atomic_store(&bad_status, status);
			}
			atomic_fetch_add(&forks, 1);
		}
	}
	return NULL;
}

static volatile int sink;

static void *runner(void *arg)
{
	(void)arg;
	atomic_store(&tids[1], (pid_t)syscall(SYS_gettid));
	while (!atomic_load(&stop)) {
		for (int i = 0; i < 64; i++)
			sink += fork_site() + fork_site_2();
		atomic_fetch_add(&runs, 1);
	}
	return NULL;
}

static void *signaller(void *arg)
{
	pid_t pid = getpid();

	(void)arg;
	while (!atomic_load(&stop)) {
		for (int i = 0; i < 2; i++)
			syscall(SYS_tgkill, pid, atomic_load(&tids[i]), SIGUSR1);
		sy_sleep_ms(0.02);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 4;
	struct sigaction sa;
	pthread_t t[3];

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_NODEFER | SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	switchyard_set_log(sy_test_log, NULL);
	/* The deferred worker starts at the first deferred decrement: here,
	 * not in a handler (pthread_create is not async-signal-safe). */
	CHECK_EQ(static_branch_deferred_inc(&fork_key), 0);
	CHECK_EQ(static_branch_slow_dec_deferred(&fork_key), 0);
	CHECK_EQ(static_key_deferred_flush(&fork_key), 0);
	CHECK_EQ(pthread_create(&t[0], NULL, forker, NULL), 0);
	CHECK_EQ(pthread_create(&t[1], NULL, runner, NULL), 0);
	while (!atomic_load(&tids[0]) || !atomic_load(&tids[1]))
		sy_sleep_ms(0.1);
	CHECK_EQ(pthread_create(&t[2], NULL, signaller, NULL), 0);

	struct sy_progress p[] = {
		{ "fork() under signals", &forks, 0, 0 },
		{ "the site runner", &runs, 0, 0 },
	};
	sy_watch_progress(p, 2, secs, 20);
	atomic_store(&stop, 1);
	sy_watchdog_arm(20, "threads did not stop within 20 s");
	for (int i = 2; i >= 0; i--)
		pthread_join(t[i], NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGUSR1, &sa, NULL);
	printf("%lu forks, handler calls: %ld ok, %ld -EDEADLK, %ld other\n",
	       atomic_load(&forks), atomic_load(&h_ok), atomic_load(&h_deadlk),
	       atomic_load(&h_other));
	CHECK_EQ(atomic_load(&h_other), 0);
	if (atomic_load(&h_other))
		fprintf(stderr, "last unexpected return: %d\n",
			atomic_load(&h_other_val));
	CHECK(atomic_load(&h_ok) > 0);
	CHECK(atomic_load(&forks) > 0);
	CHECK_EQ(atomic_load(&bad_children), 0);
	if (atomic_load(&bad_children))
		fprintf(stderr, "last bad child: status %#x (exit 4: no patch lock; "
			"8|enabled<<2|site<<1|site_2: its sites disagree with "
			"its key)\n", atomic_load(&bad_status));
	CHECK_EQ(atomic_load(&h_leaked), 0);

	/* the references balance: flushed, the key is off */
	for (long i = atomic_load(&h_leaked); i > 0; i--)
		CHECK_EQ(static_branch_dec(&fork_key.key), 0);
	CHECK_EQ(static_key_deferred_flush(&fork_key), 0);
	CHECK_EQ(static_key_count(&fork_key.key.key), 0);
	CHECK_EQ(fork_site(), 0);
	CHECK_EQ(fork_site_2(), 0);
	sy_test_check_sites(&fork_key.key.key);
	sy_watchdog_disarm();
	return sy_test_done("test_deferred_fork_signals");
}
