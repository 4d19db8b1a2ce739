/* SPDX-License-Identifier: MIT */
/* prog.c - one program of the build matrix: keys of every kind in the
 * executable, plus lib_check() from lib.c. Exit 0 iff every check passes. */
#include "sy_test.h"
#include "shared.h"

#ifdef __cplusplus
extern "C"
#endif
int lib_check(void);

DEFINE_STATIC_KEY_FALSE(kf);
DEFINE_STATIC_KEY_TRUE(kt);
DEFINE_STATIC_KEY_ARRAY_FALSE(ka, 4);
volatile int sink;

__attribute__((noinline)) static int pf(void) { if (static_branch_unlikely(&kf)) return 1; return 0; }
__attribute__((noinline)) static int pt(void) { if (static_branch_likely(&kt)) return 1; return 0; }
__attribute__((noinline)) static int pa(void) { return static_branch_unlikely(&ka[3]); }
__attribute__((cold, noinline)) static void cold_path(void) { sink++; }
/* The out-of-line path may land in .text.unlikely: a 5-byte site. */
__attribute__((noinline)) static int pc(void) { if (static_branch_unlikely(&kf)) { cold_path(); return 1; } return 0; }
SWITCHYARD_KEY_DESCRIPTION(kf, "the false key");

/* A callee-save thunk: its asm calls cs_wake by name, which -flto could
 * not see (the link failed: "undefined reference to cs_wake"). */
#ifdef __cplusplus
extern "C" {
#endif
int cs_wake(int x);
int cs_wake(int x) { return x + 5; }
#ifdef __cplusplus
}
#endif
SWITCHYARD_CALLEE_SAVE_THUNK(cs_wake);
DEFINE_STATIC_CALL_CALLEE_SAVE(cs_call, SWITCHYARD_CALLEE_SAVE(cs_wake));

#ifdef __cplusplus
/* Records of keys, descriptions and call targets defined in an inline
 * function and in a member function defined in its class (COMDAT statics),
 * in the file of the namespace-scope ones above: g++ refused the mix,
 * "section type conflict" (issue [10/15]). */
static int add1(int x) { return x + 1; }
static int add2(int x) { return x + 2; }
DEFINE_STATIC_CALL(adder, add1);
struct holder {
	int member() {
		static DEFINE_STATIC_KEY_TRUE(mk);
		SWITCHYARD_KEY_DESCRIPTION(mk, "member key");
		return static_branch_likely(&mk) ? 1 : 0;
	}
};
/* A static call in an anonymous namespace: its type was a function
 * declared and never defined, which -Wall -Werror refused there. */
namespace {
int twice(int x) { return 2 * x; }
DEFINE_STATIC_CALL(anon_call, twice);
}
inline int inline_key(int x)
{
	static DEFINE_STATIC_KEY_FALSE(ik);
	SWITCHYARD_KEY_DESCRIPTION(ik, "inline key");
	SWITCHYARD_STATIC_CALL_TARGET(adder, add2);
	if (x)
		static_branch_enable(&ik);
	return static_branch_unlikely(&ik) ? 1 : 0;
}
#endif

struct found {
	int n;
	size_t sites;
};

static int find_kf(const struct switchyard_key_info *k, void *arg)
{
	struct found *f = (struct found *)arg;

	if (!strcmp(k->name, "kf")) {
		f->n++;
		f->sites = k->sites;
	}
	return 0;
}

int main(void)
{
	CHECK(!pf() && pt() && !pa() && !pc());
	CHECK_EQ(static_branch_enable(&kf), 0);
	CHECK_EQ(static_branch_disable(&kt), 0);
	CHECK_EQ(static_branch_inc(&ka[3]), 0);
	CHECK(pf() && !pt() && pa() && pc());
	sy_test_check_sites(&kf.key);
	sy_test_check_sites(&kt.key);
	sy_test_check_sites(&ka[3].key);
	CHECK_EQ(static_branch_disable(&kf), 0);
	CHECK_EQ(static_branch_enable(&kt), 0);
	CHECK_EQ(static_branch_dec(&ka[3]), 0);
	CHECK(!pf() && pt() && !pa() && !pc());
	sy_test_check_sites(&kf.key);
	CHECK_EQ(lib_check(), 0);
	CHECK_EQ(static_call(cs_call)(1), 6);
#ifdef __cplusplus
	holder h;
	CHECK(h.member() == 1 && inline_key(0) == 0 && inline_key(1) == 1);
	CHECK_EQ(static_call(adder)(1), 2);
	static_call_update(adder, add2);
	CHECK_EQ(static_call(adder)(1), 3);
	CHECK_EQ(static_call(anon_call)(4), 8);
	/* the header's inline function and template, used by lib.c too */
	CHECK_EQ(shared_inline(0), 0);
	CHECK_EQ(shared_template<3>(), 3);
	CHECK_EQ(shared_inline(1), 1);
#endif
	/* Introspection in every build mode (static executables included):
	 * kf is found by name, with its two sites in this executable. */
	if (SY_TEST_HAVE_SITES) {
		struct found f = { 0, 0 };

		CHECK_EQ(switchyard_for_each_key(find_kf, &f), 0);
		CHECK_EQ(f.n, 1);
		CHECK_EQ(f.sites, 2);
	}
	if (SY_TEST_HAVE_SITES)
		CHECK(sy_test_check_sites(&kf.key) == 2);
	return sy_test_failures ? 1 : 0;
}
