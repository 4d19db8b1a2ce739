// SPDX-License-Identifier: MIT
/*
 * names_scoped_cxx.cpp - names copied from one listing into every command
 * (test_names_live.sh scoped, issue [10/15] item 13): a static call and a
 * key in a nested namespace, a call and a key in another namespace, a key
 * in an anonymous namespace, a class's static member key, and an array of keys whose elements' names
 * ("feat[0]", "feat[3]") are globs that match nothing if read as globs.
 * Prints "ready PID" and the states for every line on its standard input;
 * exits when that closes.
 */
#include <stdio.h>
#include <unistd.h>

#include <switchyard.h>

#include "ready_loop.h"

static int plain(int x) noexcept
{
	return x;
}

static int twice(int x) noexcept
{
	return 2 * x;
}

namespace net {
namespace io {
DEFINE_STATIC_CALL(encoder, plain);
SWITCHYARD_STATIC_CALL_TARGET(encoder, twice);
DEFINE_STATIC_KEY_FALSE(verbose);

static __attribute__((noinline)) int encode(int x)
{
	return static_call(encoder)(x);
}
} // namespace io
} // namespace net

/* (a static call in an anonymous namespace: g++ -Wall warns that its
 * trampoline's declaration is static and never defined) */
namespace {
DEFINE_STATIC_KEY_FALSE(hidden);
}

namespace other {
DEFINE_STATIC_CALL(hidden_call, plain);
SWITCHYARD_STATIC_CALL_TARGET(hidden_call, twice);

__attribute__((noinline)) int hidden_encode(int x)
{
	return static_call(hidden_call)(x);
}
} // namespace other

struct opts {
	static struct static_key_false member;
};
DEFINE_STATIC_KEY_FALSE(opts::member);

DEFINE_STATIC_KEY_ARRAY_FALSE(feat, 4);

static void states()
{
	printf("verbose=%d hidden=%d member=%d feat0=%d feat3=%d "
	       "encoder=%d hidden_call=%d\n",
	       static_branch_unlikely(&net::io::verbose) ? 1 : 0,
	       static_branch_unlikely(&hidden) ? 1 : 0,
	       static_branch_unlikely(&opts::member) ? 1 : 0,
	       static_branch_unlikely(&feat[0]) ? 1 : 0,
	       static_branch_unlikely(&feat[3]) ? 1 : 0, net::io::encode(3),
	       other::hidden_encode(3));
	fflush(stdout);
}

int main()
{
	return ready_loop(states);
}
