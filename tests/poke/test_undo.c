/* SPDX-License-Identifier: MIT */
/*
 * test_undo.c - a write that fails part-way through a batch.
 *
 * far_key has a site in this executable and one in libfar.so. The registry
 * lists the executable's table first (it registers last: a library's
 * constructors run before the program's), so enabling the key writes the
 * executable's chunk, then the library's. A seccomp filter denies pwrite()
 * to one of the two address ranges (strict policy: no RWX fallback):
 *
 *   deny-second  the library's chunk fails after the executable's was
 *                written: the change fails, the executable's site is put
 *                back (one undo write), both sites fall through, count 0,
 *                "undoing" logged, never "undo failed"
 *   deny-first   the executable's chunk fails: nothing was written, nothing
 *                is undone, "nothing was written" logged
 *
 * Then, in both, with writes allowed again through the RWX window (default
 * policy; pwrite stays denied), the key still works at both sites.
 * Each scenario runs in a child (a seccomp filter cannot be removed).
 */
#include <stdint.h>
#include <sys/wait.h>

#include "sy_seccomp.h"
#include "sy_test.h"

DECLARE_STATIC_KEY_FALSE(far_key);
int far_site(void);

__attribute__((noinline, unused)) static int near_site(void)
{
	if (static_branch_unlikely(&far_key))
		return 1;
	return 0;
}

#if !SY_TEST_HAVE_SITES
int main(void)
{
	SKIP("no patched sites in this build (fallback mode)");
}
#else

static char logbuf[4096];
static size_t loglen;

static void capture(enum switchyard_log_level level, const char *msg, void *arg)
{
	size_t n = strlen(msg);

	(void)level;
	(void)arg;
	if (loglen + n + 2 < sizeof(logbuf)) {
		memcpy(logbuf + loglen, msg, n);
		loglen += n;
		logbuf[loglen++] = '\n';
		logbuf[loglen] = 0;
	}
}

/* The executable's site: the one entry of this program's own table. */
static const unsigned char *near_code(void)
{
	const struct sy_test_entry *e = __start_sy_jump_entries;

	return e < __stop_sy_jump_entries ? sy_test_code(e) : NULL;
}

/* Deny pwrite64 whose offset's upper 32 bits are >= hi (ge) or < hi. */
static int deny_pwrite(uint32_t hi, int ge)
{
	struct sock_filter f[] = {
		SY_SECCOMP_PROLOGUE,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pwrite64, 0, 4),
		/* args[3] (offset), upper half: little-endian, at +4 */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[3]) + 4),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, hi, ge ? 0 : 1, ge ? 1 : 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};

	return sy_seccomp_install(f, sizeof(f) / sizeof(f[0]), 0);
}

static int scenario(int second)
{
	uint32_t hi = (uint32_t)((uintptr_t)far_site >> 32);
	struct switchyard_stats a, b;
	int r;

	switchyard_set_log(capture, NULL);
	if (deny_pwrite(hi, second))
		SKIP("seccomp filters are not available here");
	CHECK_EQ(switchyard_set_policy(SWITCHYARD_POLICY_STRICT), 0);
	CHECK_EQ(switchyard_get_stats(&a), 0);
	r = static_branch_enable(&far_key);
	CHECK_EQ(switchyard_get_stats(&b), 0);
	CHECK_EQ(r, -EPERM);
	CHECK_EQ(static_key_count(&far_key.key), 0);
	CHECK_EQ(near_site(), 0);
	CHECK_EQ(far_site(), 0);
	CHECK_EQ(sy_test_site_jumps(__start_sy_jump_entries), 0);
	CHECK(strstr(logbuf, "undo failed") == NULL);
	if (second) {
		/* exe chunk, library chunk (failed), exe chunk undone */
		CHECK_EQ(b.write_calls - a.write_calls, 3);
		CHECK_EQ(b.undone_batches - a.undone_batches, 1);
		CHECK(strstr(logbuf, "undoing what was written") != NULL);
	} else {
		CHECK_EQ(b.write_calls - a.write_calls, 1);
		CHECK_EQ(b.undone_batches - a.undone_batches, 0);
		CHECK(strstr(logbuf, "nothing was written") != NULL);
	}
	CHECK_EQ(b.patch_batches - a.patch_batches, 0);

	/* Writable again (RWX window): the key works at both sites. */
	CHECK_EQ(switchyard_set_policy(SWITCHYARD_POLICY_DEFAULT), 0);
	CHECK_EQ(static_branch_enable(&far_key), 0);
	CHECK_EQ(near_site() + far_site(), 2);
	CHECK_EQ(static_branch_disable(&far_key), 0);
	CHECK_EQ(near_site() + far_site(), 0);
	if (sy_test_failures)
		fputs(logbuf, stderr);
	return sy_test_done(second ? "deny-second" : "deny-first");
}

int main(void)
{
	int failed = 0;

	if (!near_code())
		SKIP("no site in the executable");
	if ((uintptr_t)near_code() >> 32 >= (uintptr_t)far_site >> 32)
		SKIP("the library is not mapped above the executable here");
	for (int second = 0; second < 2; second++) {
		int st;
		pid_t pid = fork();

		if (pid == 0) {
			int rc = scenario(second);

			fflush(stdout);
			_exit(rc);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			return 1;
		if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
			return 77;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			failed++;
	}
	/* The parent, untouched by any filter, still flips both. */
	CHECK_EQ(failed, 0);
	CHECK_EQ(static_branch_enable(&far_key), 0);
	CHECK_EQ(near_site() + far_site(), 2);
	CHECK_EQ(static_branch_disable(&far_key), 0);
	return sy_test_done("test_undo");
}
#endif
