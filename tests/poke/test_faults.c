/* SPDX-License-Identifier: MIT */
/*
 * test_faults.c - fault injection: a seccomp filter denies the write paths
 * and the synchronisation call, and the library must report, stay
 * consistent and, where a path is left, keep working while threads run the
 * sites.
 *
 *   test_faults MODE
 *     no-procmem        pwrite denied: default policy falls back to the RWX
 *                       window; strict policy fails, nothing changes
 *     no-write          pwrite and mprotect(W|X) denied: every change fails,
 *                       key and sites stay as they were
 *     no-membarrier     membarrier denied: changes still correct, through
 *                       the TLB-flush fallback, with threads running
 *     no-sync           membarrier and mprotect denied: changes still
 *                       correct; the missing sync is reported once
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "stress_sites.h"
#include "sy_seccomp.h"
#include "sy_test.h"

#if !SY_TEST_HAVE_SITES
int main(void)
{
	SKIP("no patched sites in this build (fallback mode)");
}
#else

enum { DENY_PWRITE = 1, DENY_WX = 2, DENY_MEMBARRIER = 4, DENY_MPROTECT = 8 };

static int install_filter(unsigned deny)
{
	struct sock_filter f[32];
	unsigned n = 0;

#define STMT(c, k) (f[n++] = (struct sock_filter)BPF_STMT(c, k))
#define JUMP(c, k, t, e) (f[n++] = (struct sock_filter)BPF_JUMP(c, k, t, e))
	STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	if (deny & DENY_PWRITE) {
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pwrite64, 0, 1);
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	}
	if (deny & DENY_MEMBARRIER) {
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_membarrier, 0, 1);
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	}
	if (deny & DENY_MPROTECT) {
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 0, 1);
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	}
	if (deny & DENY_WX) {
		/* mprotect(addr, len, prot) with PROT_WRITE and PROT_EXEC */
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 0, 4);
		STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2]));
		STMT(BPF_ALU | BPF_AND | BPF_K, PROT_WRITE | PROT_EXEC);
		JUMP(BPF_JMP | BPF_JEQ | BPF_K, PROT_WRITE | PROT_EXEC, 0, 1);
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES);
	}
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
#undef STMT
#undef JUMP
	return sy_seccomp_install(f, n, 0);
}

/* Every site of every stress key agrees with its key. */
static void check_all_sites(void)
{
	for (int k = 0; k < STRESS_KEYS; k++) {
		CHECK_EQ(sy_test_check_sites(stress_key(k)), STRESS_SITES_PER_KEY);
		for (int j = 0; j < STRESS_SITES_PER_KEY; j++)
			CHECK_EQ(stress_fn[k * STRESS_SITES_PER_KEY + j](),
				 static_key_enabled(stress_key(k)));
	}
}

static void snapshot(unsigned char (*out)[5])
{
	struct sy_test_entry *e = __start_sy_jump_entries;

	for (size_t i = 0; e + i < __stop_sy_jump_entries && i < 4096; i++)
		memcpy(out[i], sy_test_code(e + i), 5);
}

static unsigned char before[4096][5], after[4096][5];

/* A change that must fail and change nothing. */
static void expect_refused(struct static_key *key, bool enable)
{
	int count = static_key_count(key);

	snapshot(before);
	int r = enable ? static_key_enable(key) : static_key_disable(key);
	CHECK(r < 0);
	CHECK_EQ(static_key_count(key), count);
	snapshot(after);
	CHECK(!memcmp(before, after, sizeof(before)));
	check_all_sites();
}

/* Runners check their paths against the published state while the main
 * thread flips: correctness without membarrier. */
static _Atomic unsigned seqk;
static _Atomic int statek;
static atomic_bool stop;
static _Atomic unsigned long bad, runs, runs_of[2];

static void *runner(void *arg)
{
	int id = (int)(intptr_t)arg;

	while (!atomic_load(&stop)) {
		for (int j = 0; j < STRESS_SITES_PER_KEY; j++) {
			unsigned s1 = atomic_load(&seqk);
			int st = atomic_load(&statek);
			int path = stress_fn[5 * STRESS_SITES_PER_KEY + j]();

			atomic_thread_fence(memory_order_seq_cst);
			if (s1 == atomic_load(&seqk) && !(s1 & 1) && path != st)
				atomic_fetch_add(&bad, 1);
			atomic_fetch_add_explicit(&runs, 1, memory_order_relaxed);
			atomic_fetch_add(&runs_of[id], 1);
		}
		/* let the flipper in where nothing preempts (one CPU, or
		 * SCHED_FIFO: how the test is made to lose the runners) */
		sched_yield();
	}
	return NULL;
}

/*
 * The runners start before the filter is installed: a seccomp filter binds
 * the thread that installs it (and its later children), and glibc needs
 * mprotect to create a thread. They only run sites; the flips, in the main
 * thread, see the filter.
 */
static pthread_t runners[2];

static void start_runners(void)
{
	atomic_store(&statek, static_key_enabled(stress_key(5)));
	for (int i = 0; i < 2; i++)
		pthread_create(&runners[i], NULL, runner, (void *)(intptr_t)i);
}

/*
 * Wait until each runner has begun a site call after this point: the
 * second call a runner counts from here began after the first's count was
 * read here. Waited for, not hoped for: on a loaded machine the flips
 * could all happen before a runner is scheduled, and nothing would have
 * been checked (sched_yield: the filter allows it).
 */
static void wait_runners(void)
{
	unsigned long from[2];

	for (int i = 0; i < 2; i++)
		from[i] = atomic_load(&runs_of[i]);
	for (int i = 0; i < 2; i++)
		while (atomic_load(&runs_of[i]) < from[i] + 2)
			sched_yield();
}

/*
 * Both runners run before the first flip and run over the sites again
 * after every FLIPS_PER_WAIT flips: the flips are interleaved with their
 * checks whatever the scheduler does (after every flip would cost a time
 * slice per flip on a loaded machine).
 */
#define FLIPS_PER_WAIT 16
static void flip_with_runners(int flips)
{
	pthread_t *t = runners;
	struct static_key *key = stress_key(5);
	unsigned long before = atomic_load(&runs);

	wait_runners();
	for (int i = 0; i < flips; i++) {
		bool on = !static_key_enabled(key);

		atomic_fetch_add(&seqk, 1);
		CHECK_EQ(on ? static_key_enable(key) : static_key_disable(key), 0);
		atomic_store(&statek, on);
		atomic_fetch_add(&seqk, 1);
		if (i % FLIPS_PER_WAIT == FLIPS_PER_WAIT - 1)
			wait_runners();
	}
	atomic_store(&stop, true);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK_EQ(bad, 0);
	CHECK(runs - before >= 2ul * 2 * (unsigned long)(flips / FLIPS_PER_WAIT));
	printf("%d flips with 2 runner threads: %lu passes, %lu wrong\n", flips,
	       (unsigned long)runs, (unsigned long)bad);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	struct switchyard_stats a, b;
	unsigned deny;
	int r;

	if (!strcmp(mode, "no-procmem"))
		deny = DENY_PWRITE;
	else if (!strcmp(mode, "no-write"))
		deny = DENY_PWRITE | DENY_WX;
	else if (!strcmp(mode, "no-membarrier"))
		deny = DENY_MEMBARRIER;
	else if (!strcmp(mode, "no-sync"))
		deny = DENY_MEMBARRIER | DENY_MPROTECT;
	else {
		fprintf(stderr, "usage: %s no-procmem|no-write|no-membarrier|no-sync\n",
			argv[0]);
		return 2;
	}
	check_all_sites();
	start_runners();
	r = install_filter(deny);
	if (r)
		SKIP("cannot install a seccomp filter: %s", strerror(-r));
	switchyard_set_log(sy_test_log, NULL);
	switchyard_get_stats(&a);

	if (deny & DENY_PWRITE) {
		/* Strict: /proc/self/mem only, so nothing changes. */
		CHECK_EQ(switchyard_set_policy(SWITCHYARD_POLICY_STRICT), 0);
		sy_test_log_count = 0;
		expect_refused(stress_key(2), true);
		expect_refused(stress_key(9), false);
		CHECK(sy_test_log_count >= 1);
		CHECK(strstr(sy_test_log_all, "strict policy forbids") != NULL);
		CHECK_EQ(switchyard_set_policy(SWITCHYARD_POLICY_DEFAULT), 0);
	}
	if (deny == DENY_PWRITE) {
		/* Default: the RWX window takes over. */
		flip_with_runners(200);
		switchyard_get_stats(&b);
		CHECK(b.rwx_windows > a.rwx_windows);
	}
	if (deny & DENY_WX) {
		sy_test_log_count = 0;
		expect_refused(stress_key(2), true);
		expect_refused(stress_key(9), false);
		CHECK(strstr(sy_test_log_all, "writing code failed") != NULL);
		/* reference counting refuses the same way */
		CHECK(static_key_slow_inc(stress_key(3)) < 0);
		CHECK_EQ(static_key_count(stress_key(3)), 0);
	}
	if (deny & DENY_MEMBARRIER) {
		sy_test_log_count = 0;
		flip_with_runners(2000);
		switchyard_get_stats(&b);
		CHECK(b.sync_fallbacks > a.sync_fallbacks);
		/* The refusal is reported once, as a denial (a filter's
		 * EPERM), not as a kernel without membarrier. */
		CHECK(strstr(sy_test_log_all, "denied") != NULL);
		CHECK(strstr(sy_test_log_all, "not supported") == NULL);
		if (deny & DENY_MPROTECT) {
			/* the lost sync too: once, not once per change */
			CHECK_EQ(sy_test_log_count, 2);
			CHECK(strstr(sy_test_log_last, "synchronise") != NULL);
		} else {
			CHECK_EQ(sy_test_log_count, 1);
		}
	}
	if (!atomic_load(&stop)) {
		atomic_store(&stop, true);
		for (int i = 0; i < 2; i++)
			pthread_join(runners[i], NULL);
	}
	check_all_sites();
	switchyard_set_log(NULL, NULL);
	/* With mprotect denied, exit handlers that need it (LeakSanitizer's
	 * stop-the-world) would fail: leave without them. */
	if (deny & DENY_MPROTECT) {
		fflush(stdout);
		_exit(sy_test_done(mode));
	}
	return sy_test_done(mode);
}
#endif
