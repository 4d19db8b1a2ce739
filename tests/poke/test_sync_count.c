/* SPDX-License-Identifier: MIT */
/*
 * test_sync_count.c - the membarrier calls, counted from outside the
 * library. A seccomp filter turns every membarrier(2) of the main thread
 * into a user notification; a supervisor thread (created before the filter,
 * so not under it) counts them per command and lets each call run
 * (SECCOMP_USER_NOTIF_FLAG_CONTINUE). The main thread then makes changes
 * whose cost it knows from its own site table: a change that moves a key
 * with sites must cost exactly one membarrier(PRIVATE_EXPEDITED_SYNC_CORE),
 * one that does not (a key already in that state, a reference count moving
 * above 1, a key without sites) none. The library's own counters must say
 * the same: a library that counted a sync it did not make, or made one per
 * site, fails here.
 *
 * SKIP when the kernel lacks membarrier's SYNC_CORE command, seccomp user
 * notification or its CONTINUE flag (Linux >= 5.5).
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/membarrier.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sy_notify.h"
#include "sy_test.h"

#if !SY_TEST_HAVE_SITES || !defined(__x86_64__) || \
	!defined(SECCOMP_USER_NOTIF_FLAG_CONTINUE) || \
	!defined(SECCOMP_FILTER_FLAG_NEW_LISTENER)
int main(void)
{
	SKIP("needs patched x86-64 sites and seccomp user notification "
	     "with SECCOMP_USER_NOTIF_FLAG_CONTINUE in the headers");
}
#else

#define NOINLINE __attribute__((noinline))

DEFINE_STATIC_KEY_FALSE(ka);	/* three sites */
DEFINE_STATIC_KEY_TRUE(kb);	/* two sites */
DEFINE_STATIC_KEY_FALSE(kn);	/* no site at all */

static NOINLINE int a1(void) { return static_branch_unlikely(&ka); }
static NOINLINE int a2(void) { return static_branch_likely(&ka); }
static NOINLINE int a3(void) { if (static_branch_unlikely(&ka)) return 1; return 0; }
static NOINLINE int b1(void) { return static_branch_likely(&kb); }
static NOINLINE int b2(void) { return static_branch_unlikely(&kb); }

/* Counted by the supervisor, per membarrier command. */
static _Atomic unsigned long n_sync_core, n_register, n_query, n_other;

static int on_call(const struct seccomp_data *d, pid_t pid, void *arg)
{
	(void)pid;
	(void)arg;
	if (d->nr != __NR_membarrier) {
		atomic_fetch_add(&n_other, 1);
		return 0;
	}
	switch ((int)d->args[0]) {
	case MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE:
		atomic_fetch_add(&n_sync_core, 1);
		break;
	case MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE:
		atomic_fetch_add(&n_register, 1);
		break;
	case MEMBARRIER_CMD_QUERY:
		atomic_fetch_add(&n_query, 1);
		break;
	default:
		atomic_fetch_add(&n_other, 1);
		break;
	}
	return 0;	/* let it run as if no filter were there */
}

static struct sy_notify sup = SY_NOTIFY_INIT(on_call, NULL);

static struct switchyard_stats last;
static unsigned long last_seen, expect_batches, expect_sites;

/*
 * Run one change and check what it cost since the previous one: `batches`
 * (0 or 1) membarrier(SYNC_CORE) calls seen by the supervisor, and as many
 * syncs and batches, writing `sites` sites, in the library's counters.
 */
#define STEP(expr, batches, sites)                                           \
	do {                                                                 \
		struct switchyard_stats now_;                                \
		unsigned long seen_;                                         \
		int failed_ = sy_test_failures;                              \
                                                                             \
		CHECK_EQ((expr), 0);                                         \
		seen_ = atomic_load(&n_sync_core);                           \
		switchyard_get_stats(&now_);                                 \
		CHECK_EQ(seen_ - last_seen, (batches));                      \
		CHECK_EQ(now_.sync_calls - last.sync_calls, (batches));      \
		CHECK_EQ(now_.patch_batches - last.patch_batches, (batches)); \
		CHECK_EQ(now_.patched_sites - last.patched_sites, (sites));  \
		if (sy_test_failures != failed_)                             \
			fprintf(stderr, "  (in %s, round %d)\n", #expr, i);  \
		expect_batches += (batches);                                 \
		expect_sites += (sites);                                     \
		last = now_;                                                 \
		last_seen = seen_;                                           \
	} while (0)

#define ROUNDS 50

int main(void)
{
	struct switchyard_stats pre, s0, s1;
	unsigned long seen0;
	static const int nrs[] = { __NR_membarrier };
	long q, q2;
	int na, nb, fd, i = -1;

	q = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (q < 0 || !(q & MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE))
		SKIP("membarrier lacks PRIVATE_EXPEDITED_SYNC_CORE here "
		     "(the library falls back; nothing to count)");
	/* What each key's change must write, from our own site table. */
	na = sy_test_check_sites(&ka.key);
	nb = sy_test_check_sites(&kb.key);
	CHECK(na >= 3);
	CHECK(nb >= 2);
	CHECK_EQ(sy_test_check_sites(&kn.key), 0);

	switchyard_get_stats(&pre);
	/* Before the filter: the thread must not be under it. */
	sy_notify_start(&sup);
	fd = sy_notify_filter(&sup, nrs, 1);
	if (fd < 0) {
		sy_notify_stop(&sup);
		SKIP("cannot install a seccomp filter with a user-notification "
		     "listener: %s", strerror(-fd));
	}
	/* A harmless call through the filter first: is it seen, and does
	 * CONTINUE let it run? */
	q2 = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (atomic_load(&sup.no_continue))
		SKIP("the kernel lacks SECCOMP_USER_NOTIF_FLAG_CONTINUE");
	CHECK_EQ(q2, q);
	CHECK_EQ(atomic_load(&n_query), 1);

	switchyard_get_stats(&s0);
	last = s0;
	seen0 = last_seen = atomic_load(&n_sync_core);
	CHECK_EQ(seen0, 0);
	for (i = 0; i < ROUNDS; i++) {
		STEP(static_branch_enable(&ka), 1, na);
		STEP(static_branch_enable(&ka), 0, 0);	/* enabled already */
		STEP(static_branch_inc(&ka), 0, 0);	/* 1 -> 2 */
		STEP(static_branch_dec(&ka), 0, 0);	/* 2 -> 1 */
		CHECK(a1() && a2() && a3());
		STEP(static_branch_disable(&kb), 1, nb);
		STEP(static_branch_disable(&kb), 0, 0);	/* disabled already */
		CHECK(!b1() && !b2());
		STEP(static_branch_enable(&kn), 0, 0);	/* no site */
		STEP(static_branch_disable(&kn), 0, 0);
		STEP(static_branch_disable(&ka), 1, na);
		STEP(static_branch_inc(&ka), 1, na);	/* 0 -> 1 */
		STEP(static_branch_dec(&ka), 1, na);	/* 1 -> 0 */
		STEP(static_branch_enable(&kb), 1, nb);
		CHECK(!a1() && !a2() && !a3());
		CHECK(b1() && b2());
	}
	switchyard_get_stats(&s1);
	i = -1;

	/* The totals, against what the test did: 6 changes of code a round. */
	CHECK_EQ(expect_batches, 6 * ROUNDS);
	CHECK_EQ(atomic_load(&n_sync_core) - seen0, expect_batches);
	CHECK_EQ(s1.sync_calls - s0.sync_calls, expect_batches);
	CHECK_EQ(s1.patch_batches - s0.patch_batches, expect_batches);
	CHECK_EQ(s1.patched_sites - s0.patched_sites, expect_sites);
	CHECK_EQ(s1.sync_fallbacks - s0.sync_fallbacks, 0);
	/* Registered once for the process, at its first sync with a second
	 * thread: under the filter. The syncs of start-up (sites brought to
	 * their keys' state) ran with one thread and needed none. */
	CHECK_EQ(atomic_load(&n_register), 1);
	CHECK_EQ(atomic_load(&n_other), 0);
	printf("%llu syncs before the filter; %lu changes of code: %lu "
	       "membarrier(SYNC_CORE) seen, %lu REGISTER, %lu other; library: "
	       "%llu syncs, %llu batches, %llu sites\n",
	       (unsigned long long)pre.sync_calls, expect_batches,
	       (unsigned long)(atomic_load(&n_sync_core) - seen0),
	       (unsigned long)atomic_load(&n_register),
	       (unsigned long)atomic_load(&n_other),
	       (unsigned long long)(s1.sync_calls - s0.sync_calls),
	       (unsigned long long)(s1.patch_batches - s0.patch_batches),
	       (unsigned long long)(s1.patched_sites - s0.patched_sites));

	sy_notify_stop(&sup);
	return sy_test_done("sync_count");
}
#endif
