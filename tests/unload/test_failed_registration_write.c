/* SPDX-License-Identifier: MIT */
/*
 * test_failed_registration_write - the write that brings a new object's
 * sites to their key's state fails at registration; later, writing is
 * possible again.
 *
 *   test_failed_registration_write LIBFAILREG
 *
 * failreg_key (off) is defined here, with a site here and one in
 * LIBFAILREG. With pwrite denied by seccomp (EPERM) and the strict policy
 * (no read-write-execute window), LIBFAILREG is dlopen()ed: its site cannot
 * be written and the registration reports an error. Then the default policy
 * again: the RWX window works despite the filter. Enabling and disabling
 * the key must now return 0 with both sites following (jump, then fall
 * through), and nothing may report an undo that failed (nothing had been
 * written).
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sy_seccomp.h"
#include "sy_test.h"

__attribute__((visibility("default"))) DEFINE_STATIC_KEY_FALSE(failreg_key);

__attribute__((noinline)) static int exe_site(void)
{
	return static_branch_unlikely(&failreg_key);
}

/* pwrite64 (and its vector forms) fail with EPERM; the rest is allowed. */
static int deny_pwrite(void)
{
	struct sock_filter f[] = {
		SY_SECCOMP_PROLOGUE,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pwrite64, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pwritev, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pwritev2, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};

	return sy_seccomp_install(f, sizeof(f) / sizeof(f[0]), 0);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s LIBFAILREG\n", argv[0]);
		return 2;
	}
	if (!SY_TEST_HAVE_SITES)
		SKIP("no patched sites in this build (fallback mode)");
	switchyard_set_log(sy_test_log, NULL);
	/* the key works, and the library has opened what it writes with */
	CHECK_EQ(static_branch_enable(&failreg_key), 0);
	CHECK_EQ(exe_site(), 1);
	CHECK_EQ(static_branch_disable(&failreg_key), 0);
	CHECK_EQ(exe_site(), 0);
	CHECK_EQ(sy_test_log_count, 0);

	int r = deny_pwrite();

	if (r)
		SKIP("cannot install a seccomp filter (%d)", r);
	CHECK_EQ(switchyard_set_policy(SWITCHYARD_POLICY_STRICT), 0);
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
		return 1;
	}
	int (*lib_site)(void) = (int (*)(void))dlsym(h, "failreg_lib_site");

	if (!lib_site) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		return 1;
	}
	int (*own_site)(void) = (int (*)(void))dlsym(h, "failreg_own_site");

	if (!own_site) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		return 1;
	}
	/* stale: the library's own key is off, its site still jumps */
	CHECK_EQ(own_site(), 1);
	/* the registration could not write the library's site */
	printf("registration with pwrite denied, strict policy: %d messages, "
	       "last: %s\n", sy_test_log_count, sy_test_log_last);
	CHECK(sy_test_log_count > 0);
	CHECK_EQ(switchyard_set_policy(SWITCHYARD_POLICY_DEFAULT), 0);

	for (int round = 0; round < 2; round++) {
		CHECK_EQ(static_branch_enable(&failreg_key), 0);
		CHECK_EQ(exe_site(), 1);
		CHECK_EQ(lib_site(), 1);
		/* the stale table was brought to its keys' state */
		CHECK_EQ(own_site(), 0);
		CHECK_EQ(static_branch_disable(&failreg_key), 0);
		CHECK_EQ(exe_site(), 0);
		CHECK_EQ(lib_site(), 0);
		sy_test_check_sites(&failreg_key.key);
	}
	CHECK(strstr(sy_test_log_all, "undo failed") == NULL);
	if (sy_test_failures)
		fprintf(stderr, "logged:\n%s", sy_test_log_all);
	CHECK_EQ(dlclose(h), 0);
	CHECK_EQ(static_branch_enable(&failreg_key), 0);
	CHECK_EQ(exe_site(), 1);
	CHECK_EQ(static_branch_disable(&failreg_key), 0);
	CHECK_EQ(exe_site(), 0);
	return sy_test_done("test_failed_registration_write");
}
