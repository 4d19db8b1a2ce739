// SPDX-License-Identifier: MIT
/*
 * names_target_cxx.cpp - C++ names as the tool and a live process spell
 * them (test_names_live.sh cxx): a key in an anonymous namespace, one in a
 * namespace, a function's local key (its name holds ", " and spaces), a
 * static call whose target has no registered name (named by its symbol).
 * Linked with --as-needed and using nothing of the C++ runtime: the
 * process has no __cxa_demangle. Prints "ready PID" and the keys' states
 * for every line on its standard input; exits when that closes.
 */
#include <stdio.h>
#include <unistd.h>

#include <switchyard.h>

namespace {
DEFINE_STATIC_KEY_FALSE(hidden);
}
namespace ns {
DEFINE_STATIC_KEY_FALSE(visible);
}

struct S {
	static int f(int x) noexcept
	{
		return x;
	}
};
DEFINE_STATIC_CALL(cxxcall, S::f);

static __attribute__((noinline)) int local_key(int x, char c)
{
	static DEFINE_STATIC_KEY_FALSE(lk);

	return static_branch_unlikely(&lk) ? x + c : 0;
}

static void states()
{
	printf("hidden=%d visible=%d local=%d call=%d\n",
	       static_branch_unlikely(&hidden) ? 1 : 0,
	       static_branch_unlikely(&ns::visible) ? 1 : 0,
	       local_key(1, 0), static_call(cxxcall)(7));
	fflush(stdout);
}

int main()
{
	char line[64];

	printf("ready %d\n", (int)getpid());
	states();
	while (fgets(line, sizeof(line), stdin))
		states();
	return 0;
}
