/* SPDX-License-Identifier: MIT */
/*
 * test_memcpy_route.c - switchyard_memcpy hands sizes to the C library's
 * memcpy where its configuration says so (<switchyard/memcpy.h>: libc_min),
 * and nowhere else.
 *
 * This program defines memcpy itself: the dynamic linker binds every
 * object's memcpy to the program's (ELF interposition), so the library's
 * "C library memcpy" is this one, which counts its calls. Each case runs
 * the program again with SWITCHYARD_MEMCPY set (the configuration is read
 * once, when the library loads):
 *   libc_min=0        the name switchyard_memcpy is memcpy itself (its
 *                     IFUNC resolution): every call counted, no other code
 *   libc_min=4096     copies from 4096 bytes counted, none below
 *   libc_min=4294967295 / short_max=..,rep_min=.. (our own thresholds
 *                     asked for): none counted
 * and every copy's bytes are checked.
 *
 *   test_memcpy_route                 the cases
 *   test_memcpy_route child EXPECT    one case: EXPECT = the smallest
 *                                     size counted, "all" or "none"
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include "sy_seccomp.h"
#endif

#include <switchyard.h>

#include "sy_exec.h"
#include "sy_memcpy_test.h"
#include "sy_test.h"

static unsigned long calls;

/* memcpy(3), counted; a byte loop the compiler must not turn into a call
 * of memcpy (volatile) */
void *memcpy(void *dst, const void *src, size_t n)
{
	volatile unsigned char *d = dst;
	const unsigned char *s = src;

	__atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
	for (size_t i = 0; i < n; i++)
		d[i] = s[i];
	return dst;
}

static int child(const char *expect)
{
	static const size_t sizes[] = { 1, 63, 64, 128, 129, 256, 4095,
					4096, 4097, 8192, 65536 };
	static unsigned char src[65536 + 64], dst[65536 + 64];
	struct switchyard_memcpy_thresholds t;
	size_t from = !strcmp(expect, "all") ? 0 :
		      !strcmp(expect, "none") ? SIZE_MAX :
						strtoul(expect, NULL, 10);

	switchyard_memcpy_get_thresholds(&t);
	printf("loop %d libc_min %u sy %p memcpy %p\n", (int)t.loop,
	       switchyard_memcpy_get_libc_min(), (void *)switchyard_memcpy,
	       (void *)memcpy);
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)(i * 13 + 5);
	if (from == 0) {
		CHECK_EQ(t.loop, SWITCHYARD_MEMCPY_LIBC);
#if defined(__x86_64__)
		/* (elsewhere the C library's whatever libc_min says) */
		CHECK_EQ(switchyard_memcpy_get_libc_min(), 0);
#endif
		/* the name resolves to the function: no code in between */
		CHECK(!SY_TEST_MEMCPY_IFUNC ||
		      same_fn((void *)switchyard_memcpy, (void *)memcpy));
	} else {
		CHECK(t.loop != SWITCHYARD_MEMCPY_LIBC);
		CHECK(!same_fn((void *)switchyard_memcpy, (void *)memcpy));
	}
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		unsigned long before = calls;

		for (size_t k = 0; k < n + 64; k++)
			dst[k] = 0;
		CHECK(switchyard_memcpy(dst + 3, src + 1, n) == dst + 3);
		for (size_t k = 0; k < n; k++)
			if (dst[3 + k] != src[1 + k]) {
				CHECK(!"copied bytes differ");
				break;
			}
		CHECK_EQ(dst[3 + n], 0);
		if (calls - before != (n >= from))
			fprintf(stderr, "size %zu: %lu calls of the C library's"
				" memcpy, wanted %d\n", n, calls - before,
				n >= from);
		CHECK_EQ(calls - before, (unsigned long)(n >= from));
	}
	return sy_test_failures ? 1 : 0;
}

/*
 * "nowrite": the library cannot write code (pwrite and every mprotect that
 * makes memory writable denied from before execve): the entry keeps its
 * compiled jump to the SSE2 dispatcher, and the thresholds report says so,
 * not the flavour chosen (the report said "avx512" while the SSE2 code
 * ran); the copies stay right.
 */
static int child_nowrite(void)
{
	static unsigned char src[70000], dst[70000];
	struct switchyard_memcpy_thresholds t;

	switchyard_memcpy_get_thresholds(&t);
	printf("nowrite: loop %d patched %d\n", (int)t.loop, t.patched);
	CHECK_EQ(t.patched, 0);
	CHECK_EQ(t.loop, SWITCHYARD_MEMCPY_SSE2);
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)(i * 7 + 3);
	for (size_t n = 0; n < 66000; n = n < 300 ? n + 1 : n * 3 / 2) {
		switchyard_memcpy(dst + 1, src + 5, n);
		if (memcmp(dst + 1, src + 5, n)) {
			CHECK(!"copied bytes differ");
			break;
		}
	}
	return sy_test_failures ? 1 : 0;
}

static int deny_writes(void)
{
#if defined(__x86_64__)
	struct sock_filter f[] = {
		SY_SECCOMP_PROLOGUE,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pwrite64, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pwritev, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[2])),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, PROT_WRITE),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PROT_WRITE, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};

	return sy_seccomp_install(f, sizeof(f) / sizeof(f[0]), 0);
#else
	return -ENOSYS;
#endif
}

static void run(const char *env, const char *expect)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		if (!strcmp(expect, "nowrite") && deny_writes())
			_exit(77);
		char *args[] = { (char *)"test_memcpy_route", (char *)"child",
				 (char *)expect, NULL };

		setenv("SWITCHYARD_MEMCPY", env, 1);
		/* through the emulator in a cross build (sy_exec.h) */
		sy_test_execv("/proc/self/exe", args);
		_exit(3);
	}
	CHECK(pid > 0);
	CHECK(waitpid(pid, &status, 0) == pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fprintf(stderr, "SWITCHYARD_MEMCPY=%s: the child failed "
			"(status %#x)\n", env, status);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		printf("SKIP (this case): %s: no seccomp filter here\n",
		       expect);
		return;
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "child"))
		return !strcmp(argv[2], "nowrite") ? child_nowrite() :
						     child(argv[2]);
#if !defined(__x86_64__)
	/* no code of our own elsewhere: every size is the C library's */
	run("libc_min=0", "all");
	run("libc_min=4294967295", "all");
#else
	run("libc_min=0", "all");
	run("libc_min=4096", "4096");
	run("libc_min=129", "129");
	run("libc_min=4294967295", "none");
	run("short_max=64,rep_min=2048", "none");
	/* the features masked: the AVX2 and SSE2 flavours route alike */
	setenv("SWITCHYARD_CPU_MASK", "avx512f", 1);
	run("libc_min=4096", "4096");
	setenv("SWITCHYARD_CPU_MASK", "avx512f,avx2", 1);
	run("libc_min=4096", "4096");
	run("libc_min=0", "all");
	unsetenv("SWITCHYARD_CPU_MASK");
	/* the report names the code that runs (only where there is AVX2:
	 * else SSE2 is the flavour anyway, and the case proves nothing) */
	if (boot_cpu_has(X86_FEATURE_AVX2))
		run("libc_min=4294967295", "nowrite");
#endif
	printf("memcpy_route: %d checks, %d failed\n", sy_test_checks,
	       sy_test_failures);
	return sy_test_failures ? 1 : 0;
}
