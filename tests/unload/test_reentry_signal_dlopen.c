/* SPDX-License-Identifier: MIT */
/*
 * test_reentry_signal_dlopen - a signal handler changes a key while its own
 * thread is inside dlopen()/dlclose(), registering or unregistering a
 * library's sites.
 *
 *   test_reentry_signal_dlopen LIBMANY [cycles]
 *
 * A 200 us interval timer (SIGALRM) runs a handler that flips exe_key (2,000
 * sites in this executable); where a flip takes longer than 50 us (under
 * an emulator: qemu-user translates again the code each flip rewrites),
 * four flips' time, or the handler would run again as soon as it returns
 * and the main thread would never move. The main thread dlopen()s and dlclose()s
 * LIBMANY (4,000 sites of its own key, which stays off) `cycles` times
 * (default 200). Each flip from the handler must return 0, or -EDEADLK when
 * it interrupted a switchyard call (registration and unregistration
 * included). After each dlopen, with SIGALRM blocked, every library site
 * must fall through and every executable site follow the last flip that
 * returned 0. At the end the key still works at every site.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>

#include "sy_test.h"
#include "sy_watchdog.h"
#include "many_sites.h"

#define EXE_SITES 2000
#define LIB_SITES 4000

DEFINE_STATIC_KEY_FALSE(exe_key);

#define FN(n) SY_SITE_FN(static, exe_##n, exe_key)
#define PTR(n) exe_##n,
SY_N1000(FN, 1) SY_N1000(FN, 2)
static int (*const exe_tab[EXE_SITES])(void) = { SY_N1000(PTR, 1) SY_N1000(PTR, 2) };

static volatile sig_atomic_t exe_state, handled, refused, other, other_val;

static void on_alarm(int sig)
{
	int e = errno, want = !exe_state;
	int r = want ? static_branch_enable(&exe_key) :
		       static_branch_disable(&exe_key);

	(void)sig;
	if (r == 0)
		exe_state = want;
	else if (r == -EDEADLK)
		refused++;
	else {
		other++;
		other_val = r;
	}
	handled++;
	errno = e;
}

static int exe_jumping(void)
{
	int n = 0;

	for (int i = 0; i < EXE_SITES; i++)
		n += exe_tab[i]();
	return n;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* 200 us, or four flips of exe_key where that is longer: the fastest of
 * 8 timed flips, after 2 that pay the first change's costs */
static long interval_us(void)
{
	double flip = 1e9;

	for (int i = 0; i < 10; i++) {
		double t0 = now_us();

		CHECK_EQ(i & 1 ? static_branch_disable(&exe_key) :
				 static_branch_enable(&exe_key), 0);
		if (i >= 2 && now_us() - t0 < flip)
			flip = now_us() - t0;
	}
	return flip > 50 ? (long)(4 * flip) : 200;
}

static void set_timer(long us)
{
	struct itimerval it = { { 0, us }, { 0, us } };

	CHECK_EQ(setitimer(ITIMER_REAL, &it, NULL), 0);
}

int main(int argc, char **argv)
{
	int cycles = argc > 2 ? atoi(argv[2]) : 200, i;
	long us;
	sigset_t alrm;
	struct sigaction sa;

	if (argc < 2) {
		fprintf(stderr, "usage: %s LIBMANY [cycles]\n", argv[0]);
		return 2;
	}
	if (!SY_TEST_HAVE_SITES)
		SKIP("no patched sites in this build (fallback mode)");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	sy_watchdog_arm(60, "dlopen/dlclose cycles under SIGALRM did not finish "
			"in 60 s");

	us = interval_us();
	set_timer(us);
	for (i = 0; i < cycles; i++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);

		if (!h) {
			fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
			return 1;
		}
		int (*const *lib_tab)(void) = (int (*const *)(void))dlsym(h, "many_tab");
		int lib_on = 0, exe_on;

		CHECK(lib_tab != NULL);
		sigprocmask(SIG_BLOCK, &alrm, NULL);
		for (int j = 0; lib_tab && j < LIB_SITES; j++)
			lib_on += lib_tab[j]();
		exe_on = exe_jumping();
		CHECK_EQ(lib_on, 0);
		CHECK_EQ(exe_on, exe_state ? EXE_SITES : 0);
		CHECK_EQ(other, 0);
		int bad = lib_on || exe_on != (exe_state ? EXE_SITES : 0) || other;

		if (bad)
			fprintf(stderr, "dlopen #%d: %d library sites jump (key off), "
				"%d executable sites jump (key %s), %d flips failed "
				"(last %d)\n", i, lib_on, exe_on, exe_state ? "on" : "off",
				(int)other, (int)other_val);
		sigprocmask(SIG_UNBLOCK, &alrm, NULL);
		CHECK_EQ(dlclose(h), 0);
		if (bad)
			break;
	}
	set_timer(0);
	sigprocmask(SIG_BLOCK, &alrm, NULL);
	printf("%d dlopen/dlclose cycles, %d flips from the handler (every "
	       "%ld us), %d refused with -EDEADLK\n", i, (int)handled, us,
	       (int)refused);
	CHECK(handled > 0);

	/* the key still works, everywhere */
	if (exe_state)
		CHECK_EQ(static_branch_disable(&exe_key), 0);
	CHECK_EQ(exe_jumping(), 0);
	CHECK_EQ(static_branch_enable(&exe_key), 0);
	CHECK_EQ(exe_jumping(), EXE_SITES);
	CHECK_EQ(sy_test_check_sites(&exe_key.key), EXE_SITES);
	CHECK_EQ(static_branch_disable(&exe_key), 0);
	CHECK_EQ(exe_jumping(), 0);
	CHECK_EQ(sy_test_check_sites(&exe_key.key), EXE_SITES);
	sy_watchdog_disarm();
	return sy_test_done("test_reentry_signal_dlopen");
}
