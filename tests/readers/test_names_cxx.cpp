// SPDX-License-Identifier: MIT
/*
 * test_names_cxx.cpp - C++ keys are named as the program spells them, in
 * introspection and in messages: "ns::k1", not "_ZN2ns2k1E". This program
 * uses the C++ runtime (std::string), whose demangler the library uses;
 * test_static_key_cxx, which does not, checks the library's own. And
 * SWITCHYARD_KEY_DESCRIPTION() in C++, of a namespaced key and of a class
 * member, reaches switchyard_for_each_key().
 */
#include <errno.h>
#include <string>

#include "sy_test.h"

namespace ns {
DEFINE_STATIC_KEY_FALSE(k1);
SWITCHYARD_KEY_DESCRIPTION(k1, "namespaced");
namespace inner {
DEFINE_STATIC_KEY_TRUE(k2);
}
}

struct holder {
	static struct static_key_false member;
};
DEFINE_STATIC_KEY_FALSE(holder::member);
SWITCHYARD_KEY_DESCRIPTION(holder::member, "a member");

static volatile int sink;

__attribute__((noinline)) static void use_keys()
{
	if (static_branch_unlikely(&ns::k1))
		sink++;
	if (static_branch_likely(&ns::inner::k2))
		sink++;
	if (static_branch_unlikely(&holder::member))
		sink++;
}

static std::string names;

static int collect(const struct switchyard_key_info *k, void *)
{
	names += std::string(k->name) + "\n";
	if (k->description)
		names += std::string(k->name) + " -- " + k->description + "\n";
	return 0;
}

static std::string last;
static void on_log(enum switchyard_log_level, const char *msg, void *)
{
	last = msg;
}

int main()
{
	use_keys();
	CHECK_EQ(switchyard_for_each_key(collect, nullptr), 0);
	fprintf(stderr, "%s", names.c_str());
	CHECK(names.find("ns::k1\n") != std::string::npos);
	CHECK(names.find("ns::inner::k2\n") != std::string::npos);
	CHECK(names.find("holder::member\n") != std::string::npos);
	CHECK(names.find("_Z") == std::string::npos);
	CHECK(names.find("ns::k1 -- namespaced\n") != std::string::npos);
	CHECK(names.find("holder::member -- a member\n") != std::string::npos);
	CHECK(names.find("k2 -- ") == std::string::npos);

	switchyard_set_log(on_log, nullptr);
	CHECK_EQ(static_branch_dec(&ns::k1), -EINVAL);
	fprintf(stderr, "%s\n", last.c_str());
	CHECK(last.find("static key 'ns::k1'") != std::string::npos);
	switchyard_set_log(nullptr, nullptr);
	return sy_test_done("names_cxx");
}
