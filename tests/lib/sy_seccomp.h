/* SPDX-License-Identifier: MIT */
/*
 * sy_seccomp.h - install a seccomp filter for the fault-injection tests.
 *
 * A filter starts with SY_SECCOMP_PROLOGUE (allow every call of another
 * architecture, then load the system call number), then the test's own
 * rules. sy_seccomp_install() sets no_new_privs (required without
 * CAP_SYS_ADMIN) and installs it: 0 (or the listener's descriptor with
 * SECCOMP_FILTER_FLAG_NEW_LISTENER), or -errno. A filter cannot be removed:
 * tests install it in a child, or as their last act.
 */
#ifndef SY_SECCOMP_H
#define SY_SECCOMP_H

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SY_SECCOMP_PROLOGUE                                                   \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)), \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),         \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),                         \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))

static inline int sy_seccomp_install(struct sock_filter *f, size_t n,
				     unsigned flags)
{
	struct sock_fprog prog = { (unsigned short)n, f };
	long r;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	r = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
	return r < 0 ? -errno : (int)r;
}

#endif /* SY_SECCOMP_H */
