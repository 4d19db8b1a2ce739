/* SPDX-License-Identifier: MIT */
/*
 * test_exit_fork_dlopen - two scenarios that must keep working ([4/10]
 * regression checks), with libmany (4,000 sites of a key of its own):
 *
 *   test_exit_during_flips LIBMANY      (mode "exit")
 *       20 fresh processes (this program again, fork() + exec: a child
 *       of fork() alone would inherit the watchdog's thread, and TSan
 *       starts no thread after a multi-threaded fork), each with a thread
 *       flipping the key of this program's sites, a thread taking a
 *       deferred key's reference and queueing its final decrement (1 ms
 *       rate limit), and in every other one a thread that dlopen()s/
 *       dlclose()s LIBMANY; the main thread calls exit() after 0-38 ms.
 *       Each must exit 0 within 20 s (an alarm ends it then: a hang; a
 *       loaded machine made one take 12 s): no crash, no hang in the
 *       library's destructors (the deferred worker is joined there,
 *       tables are unregistered).
 *   test_fork_vs_dlopen LIBMANY         (mode "fork")
 *       3 s of fork() in a loop (each child flips the key, checks every site
 *       of it, and _exit()s 0) against a thread that dlopen()s/dlclose()s
 *       LIBMANY and a thread that flips: forks and dlopens keep completing
 *       (fail after 20 s without progress: the lock order of fork's
 *       handlers against the dynamic linker's lock), every child exits 0.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>

#include "sy_exec.h"
#include "sy_test.h"
#include "sy_watchdog.h"
#include "many_sites.h"

DEFINE_STATIC_KEY_FALSE(ef_key);
DEFINE_STATIC_KEY_DEFERRED_FALSE(ef_deferred, 1);

#define FN(n) SY_SITE_FN(static, ef_##n, ef_key)
#define PTR(n) ef_##n,
SY_N100(FN, 1)
static int (*const ef_tab[100])(void) = { SY_N100(PTR, 1) };

/*
 * Under LeakSanitizer: exit() with threads still running is the point of
 * the exit scenario, and LSan cannot stop them to scan ("running thread was
 * not suspended: false leaks are possible"); it then reported 72,704 bytes
 * held by a thread it could not scan. Leaks are checked by the other tests.
 */
__attribute__((used)) const char *__lsan_default_options(void);
__attribute__((used)) const char *__lsan_default_options(void)
{
	return "detect_leaks=0";
}

/*
 * Under ThreadSanitizer: its exit handler sleeps 1 s (atexit_sleep_ms) for
 * threads to finish; these never do. 20 x 1 s of the 5 s each child has,
 * for nothing (TSAN_OPTIONS from the environment still apply after this).
 */
__attribute__((used)) const char *__tsan_default_options(void);
__attribute__((used)) const char *__tsan_default_options(void)
{
	return "atexit_sleep_ms=0";
}

static const char *lib;
static atomic_int stop;
static _Atomic unsigned long flips, dlopens, forks;

/* Sites that disagree with the key; the caller holds the key still. */
static int wrong_sites(void)
{
	int want = static_key_enabled(&ef_key), n = 0;

	for (int i = 0; i < 100; i++)
		n += ef_tab[i]() != want;
	return n;
}

static void *flipper(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		if (static_branch_enable(&ef_key) || static_branch_disable(&ef_key))
			sy_fail_now("a flip failed");
		atomic_fetch_add(&flips, 1);
	}
	return NULL;
}

static void *deferrer(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		static_branch_inc(&ef_deferred.key);
		static_branch_slow_dec_deferred(&ef_deferred);
	}
	return NULL;
}

static void *opener(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

		if (!h)
			sy_fail_now("dlopen failed");
		dlclose(h);
		atomic_fetch_add(&dlopens, 1);
	}
	return NULL;
}

/* One fresh process (mode "exit-child"): threads at work, then exit()
 * from main after 2 * round ms. */
__attribute__((noreturn)) static void exit_child(int round)
{
	pthread_t t[3];
	int n = 0;

	/* a hang in exit() must not outlive the test: SIGALRM's default
	 * action ends the process (status: signal 14) */
	alarm(20);
	pthread_create(&t[n++], NULL, flipper, NULL);
	pthread_create(&t[n++], NULL, deferrer, NULL);
	if (round % 2)
		pthread_create(&t[n++], NULL, opener, NULL);
	sy_sleep_ms(round * 2);
	exit(0);	/* with every thread still running */
}

static void scenario_exit(void)
{
	for (int round = 0; round < 20; round++) {
		char arg[16];
		int st = -1;
		pid_t pid;

		snprintf(arg, sizeof(arg), "%d", round);
		pid = fork();
		if (pid == 0) {
			char *const av[] = { (char *)"test_exit_during_flips",
					     (char *)lib, (char *)"exit-child",
					     arg, NULL };

			sy_test_execv("/proc/self/exe", av);
			_exit(127);
		}
		CHECK(pid > 0);
		/* the child ends itself (alarm) after 20 s; this is the backstop */
		sy_watchdog_arm(30, "a process did not exit within 30 s");
		CHECK_EQ(waitpid(pid, &st, 0), pid);
		sy_watchdog_disarm();
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "round %d: status %#x%s\n", round, st,
				WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM ?
				" (did not exit within 20 s: hang)" : "");
			CHECK(0);
			break;	/* one is enough: fail in seconds, not 20 x 5 s */
		}
	}
}

static void *forker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		int st = -1;
		pid_t pid = fork();

		if (pid == 0) {
			/* a hung child must not outlive the test */
			alarm(20);
			/* alone in the child: the key holds still */
			int bad = static_branch_enable(&ef_key) || wrong_sites() ||
				  static_branch_disable(&ef_key) || wrong_sites();

			_exit(bad);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			sy_fail_now("a child failed or did not exit 0");
		atomic_fetch_add(&forks, 1);
	}
	return NULL;
}

static void scenario_fork(void)
{
	struct sy_progress p[] = {
		{ "fork", &forks, 0, 0 },
		{ "dlopen", &dlopens, 0, 0 },
		{ "flips", &flips, 0, 0 },
	};
	pthread_t t[3];

	pthread_create(&t[0], NULL, forker, NULL);
	pthread_create(&t[1], NULL, opener, NULL);
	pthread_create(&t[2], NULL, flipper, NULL);
	sy_watch_progress(p, 3, 3.0, 2.0);
	atomic_store(&stop, 1);
	sy_watchdog_arm(30, "threads did not stop within 30 s");
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	sy_watchdog_disarm();
	printf("%lu forks, %lu dlopens, %lu flips\n", atomic_load(&forks),
	       atomic_load(&dlopens), atomic_load(&flips));
	CHECK(atomic_load(&forks) > 0);
	CHECK_EQ(wrong_sites(), 0);
}

int main(int argc, char **argv)
{
#ifdef EF_FORK
	const char *mode = argc > 2 ? argv[2] : "fork";
#else
	const char *mode = argc > 2 ? argv[2] : "exit";
#endif

	if (argc < 2) {
		fprintf(stderr, "usage: %s LIBMANY [exit|fork]\n", argv[0]);
		return 2;
	}
	lib = argv[1];
	if (!strcmp(mode, "exit-child") && argc > 3)
		exit_child(atoi(argv[3]));
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "exit"))
		scenario_exit();
	else
		scenario_fork();
	return sy_test_done(mode);
}
