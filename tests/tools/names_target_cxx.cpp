// SPDX-License-Identifier: MIT
/*
 * names_target_cxx.cpp - C++ names as the tool and a live process spell
 * them (test_names_live.sh cxx): a key in an anonymous namespace, one in a
 * namespace, a function's local key (its name holds ", " and spaces), a
 * static call whose target has no registered name (named by its symbol),
 * a key with a description in an inline function (its records are COMDAT
 * statics, which g++ refused beside the others: issue [10/15]).
 * Linked with --as-needed and using nothing of the C++ runtime: the
 * process has no __cxa_demangle. Prints "ready PID" and the keys' states
 * for every line on its standard input; exits when that closes.
 */
#include <stdio.h>
#include <unistd.h>

#include <switchyard.h>

#include "ready_loop.h"

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

inline int inline_key()
{
	static DEFINE_STATIC_KEY_FALSE(ik);
	SWITCHYARD_KEY_DESCRIPTION(ik, "inline key");

	return static_branch_unlikely(&ik) ? 1 : 0;
}

/* a key in a function template: g++ took its name record out of the
 * records' section (the key had no name in a stripped file) */
template <int N> int template_key()
{
	static DEFINE_STATIC_KEY_FALSE(tk);

	return static_branch_unlikely(&tk) ? N : 0;
}

static void states()
{
	printf("hidden=%d visible=%d local=%d call=%d inline=%d\n",
	       static_branch_unlikely(&hidden) ? 1 : 0,
	       static_branch_unlikely(&ns::visible) ? 1 : 0,
	       local_key(1, 0), static_call(cxxcall)(7),
	       inline_key() + template_key<2>());
	fflush(stdout);
}

int main()
{
	return ready_loop(states);
}
