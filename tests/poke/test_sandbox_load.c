/* SPDX-License-Identifier: MIT */
/*
 * test_sandbox_load.c - a program linked with the library runs under a
 * seccomp policy that refuses membarrier(2), as a hardened container's may.
 *
 * The test runs itself three times under a filter installed before execve(),
 * so that the filter is in force while the library loads and writes its own
 * sites and this program's (keys, a static call):
 *  kill    membarrier kills the process (SECCOMP_RET_KILL_PROCESS). The
 *          program must reach main() and change keys and a static call
 *          while it has one thread: none of that needs a membarrier.
 *  eperm   membarrier fails with EPERM. With a second thread, a change
 *          must still take effect (the library falls back to a TLB
 *          shootdown, the static call to its detour) and the message must
 *          say the call was denied, not that the kernel lacks it.
 *  enosys  membarrier fails with ENOSYS: the message says "not supported".
 *
 * SKIP when a seccomp filter cannot be installed.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sy_seccomp.h"
#include "sy_test.h"

#if !SY_TEST_HAVE_SITES || !defined(__x86_64__)
int main(void)
{
	SKIP("needs patched x86-64 sites");
}
#else

#define NOINLINE __attribute__((noinline))

DEFINE_STATIC_KEY_FALSE(kf);
DEFINE_STATIC_KEY_TRUE(kt);

static NOINLINE int f1(void) { return static_branch_unlikely(&kf); }
static NOINLINE int t1(void) { return static_branch_likely(&kt); }

static int ret_one(int x) { return x + 1; }
static int ret_two(int x) { return x + 2; }
DEFINE_STATIC_CALL(sc_sbx, ret_one);
static NOINLINE int call_sbx(int x) { return static_call(sc_sbx)(x); }

/* ---- the filtered child ------------------------------------------------- */

static char logbuf[4096];

static void grab_log(enum switchyard_log_level level, const char *msg,
		     void *arg)
{
	size_t n = strlen(logbuf);

	(void)level;
	(void)arg;
	snprintf(logbuf + n, sizeof(logbuf) - n, "%s\n", msg);
}

/* Flip both keys and the static call there and back; every site must
 * follow. */
static void flip_all(void)
{
	CHECK_EQ(f1(), 0);
	CHECK_EQ(t1(), 1);
	CHECK_EQ(static_branch_enable(&kf), 0);
	CHECK_EQ(static_branch_disable(&kt), 0);
	CHECK_EQ(f1(), 1);
	CHECK_EQ(t1(), 0);
	CHECK(sy_test_check_sites(&kf.key) >= 1);
	CHECK(sy_test_check_sites(&kt.key) >= 1);
	CHECK_EQ(call_sbx(1), 2);
	CHECK_EQ(static_call_update(sc_sbx, ret_two), 0);
	CHECK_EQ(call_sbx(1), 3);
	CHECK_EQ(static_call_update(sc_sbx, ret_one), 0);
	CHECK_EQ(call_sbx(1), 2);
	CHECK_EQ(static_branch_disable(&kf), 0);
	CHECK_EQ(static_branch_enable(&kt), 0);
	CHECK_EQ(f1(), 0);
	CHECK_EQ(t1(), 1);
	CHECK(sy_test_check_sites(&kf.key) >= 1);
	CHECK(sy_test_check_sites(&kt.key) >= 1);
}

static int pipefd[2];

static void *parked(void *arg)
{
	char c;

	(void)arg;
	/* Alive (and a second thread) until main writes a byte. */
	while (read(pipefd[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static int child(const char *mode)
{
	struct switchyard_stats st;
	pthread_t t;
	pid_t pid;
	int status = 0;

	if (!strcmp(mode, "kill")) {
		/* One thread: nothing here may need a membarrier. */
		flip_all();
		switchyard_get_stats(&st);
		CHECK(st.sync_calls > 0);	/* it did change code */
		CHECK_EQ(st.sync_fallbacks, 0);
		/* The control: the filter is in force in this process. */
		pid = fork();
		if (pid == 0) {
			syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
			_exit(0);
		}
		CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS);
		return sy_test_done("sandbox_load kill");
	}
	switchyard_set_log(grab_log, NULL);
	CHECK_EQ(pipe(pipefd), 0);
	CHECK_EQ(pthread_create(&t, NULL, parked, NULL), 0);
	flip_all();
	CHECK_EQ(write(pipefd[1], "x", 1), 1);
	CHECK_EQ(pthread_join(t, NULL), 0);
	switchyard_get_stats(&st);
	CHECK(st.sync_fallbacks > 0);
	fprintf(stderr, "messages (%s):\n%s", mode, logbuf);
	CHECK(strstr(logbuf, "membarrier(PRIVATE_EXPEDITED_SYNC_CORE)"));
	CHECK(strstr(logbuf, "membarrier(PRIVATE_EXPEDITED_RSEQ)") ||
	      !strstr(logbuf, "rseq"));	/* static calls parked anyway */
	if (!strcmp(mode, "eperm")) {
		CHECK(strstr(logbuf, "denied"));
		CHECK(!strstr(logbuf, "not supported"));
		CHECK(!strstr(logbuf, "has no"));
	} else {
		CHECK(strstr(logbuf, "not supported"));
		CHECK(!strstr(logbuf, "denied"));
	}
	return sy_test_done(mode);
}

/* ---- the launcher ------------------------------------------------------- */

static int run(const char *mode, unsigned action)
{
	struct sock_filter f[] = {
		SY_SECCOMP_PROLOGUE,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_membarrier, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	int status, r;
	pid_t pid = fork();

	if (pid == 0) {
		r = sy_seccomp_install(f, sizeof(f) / sizeof(f[0]), 0);
		if (r < 0) {
			fprintf(stderr, "SKIP: cannot install a seccomp "
				"filter: %s\n", strerror(-r));
			_exit(77);
		}
		execl("/proc/self/exe", "test_sandbox_load", mode, (char *)NULL);
		_exit(126);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		CHECK(!"fork/waitpid");
		return -1;
	}
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "FAIL: %s: killed by signal %d%s\n", mode,
			WTERMSIG(status), WTERMSIG(status) == SIGSYS ?
			" (SIGSYS: a membarrier while loading or with one "
			"thread)" : "");
		CHECK(!"killed");
		return -1;
	}
	return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	int r;

	if (argc > 1)
		return child(argv[1]);
	r = run("kill", SECCOMP_RET_KILL_PROCESS);
	if (r == 77)
		SKIP("seccomp filters cannot be installed here");
	CHECK_EQ(r, 0);
	CHECK_EQ(run("eperm", SECCOMP_RET_ERRNO | EPERM), 0);
	CHECK_EQ(run("enosys", SECCOMP_RET_ERRNO | ENOSYS), 0);
	return sy_test_done("sandbox_load");
}
#endif
