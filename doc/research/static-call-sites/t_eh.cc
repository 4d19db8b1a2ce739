// Test (b): C++ exception thrown by the static-call target, propagating through the site.
#include <cstdio>
#include <stdexcept>
#include <unistd.h>
#include <sys/wait.h>
#include "sc.h"

#ifndef EH_PART_MAIN
extern "C" __attribute__((noinline)) long sc_thrower(long a, long b, long c)
{
	if (a == 42) throw std::runtime_error("boom");
	return a + b + c;
}
extern "C" __attribute__((noinline)) void other_may_throw(long a)
{
	if (a == 4242) throw std::logic_error("other");
}
#if defined(SY_SC_TRAMP) && SY_SC_TRAMP
SY_TRAMP_DECLARE(sc_thrower, long, (long, long, long));
SY_TRAMP_DEFINE(sc_thrower, sc_thrower);
#endif
#endif

#ifndef EH_PART_MAIN   /* EH_PART_MIDS / EH_PART_MAIN: split into two TUs; default: one TU */
int g_dtor;
struct Guard { ~Guard() { g_dtor++; } };

// 1. caller without cleanups (no LSDA entry needed)
extern "C" __attribute__((noinline)) long mid_plain(long a)
{
	volatile long keep = a * 3;
	long r = SY_SC_CALL3(sc_thrower, a, 1, 2);
	return r + keep;
}
// 2. caller with a destructor and another throwing call => function has an LSDA
extern "C" __attribute__((noinline)) long mid_raii(long a)
{
	Guard g;
	other_may_throw(a);
	long r = SY_SC_CALL3(sc_thrower, a, 1, 2);
	other_may_throw(r);
	return r + 1;
}
// 3. caller with try/catch around the site
extern "C" __attribute__((noinline)) long mid_try(long a)
{
	try {
		other_may_throw(a);
		return SY_SC_CALL3(sc_thrower, a, 1, 2);
	} catch (const std::runtime_error &) {
		return -7;
	}
}

#else
extern "C" long mid_plain(long), mid_raii(long), mid_try(long);
extern int g_dtor;
#endif
#ifndef EH_PART_MIDS
static int scenario(int which)
{
	g_dtor = 0;
	try {
		long r;
		switch (which) {
		case 1: r = mid_plain(42); break;
		case 2: r = mid_raii(42); break;
		case 3: r = mid_try(42); return r == -7 ? 0 : 3;   // must be caught inside mid_try
		default: return 9;
		}
		std::printf("    no exception?? r=%ld\n", r);
		return 2;
	} catch (const std::runtime_error &e) {
		if (which == 2 && g_dtor != 1) { std::printf("    caught but dtor ran %d times\n", g_dtor); std::fflush(stdout); return 4; }
		return 0;
	}
}

int main()
{
	static const char *names[] = { "", "plain", "raii(LSDA)", "try/catch-in-caller" };
	int fails = 0;
	// non-throwing sanity
	if (mid_plain(1) != 4 + 3 || mid_raii(1) != 5 || mid_try(1) != 4) { std::printf("  FAIL sanity\n"); fails++; }
	for (int w = 1; w <= 3; w++) {
		std::fflush(stdout);
		pid_t p = fork();
		if (p == 0) { _exit(scenario(w)); }
		int st; waitpid(p, &st, 0);
		bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
		std::printf("  eh %-22s %s", names[w], ok ? "ok" : "FAIL");
		if (!ok) { if (WIFSIGNALED(st)) std::printf(" (signal %d%s)", WTERMSIG(st), WTERMSIG(st) == 6 ? " = std::terminate/abort" : ""); else std::printf(" (exit %d)", WEXITSTATUS(st)); fails++; }
		std::printf("\n");
	}
	std::printf("t_eh: %s (%d failures)\n", fails ? "FAIL" : "PASS", fails);
	return fails != 0;
}
#endif
