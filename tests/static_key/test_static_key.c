/* SPDX-License-Identifier: MIT */
/*
 * test_static_key.c - the static key API, the kernel's test pattern in our
 * own code: every key type x likely/unlikely x initial true/false, verify,
 * invert all, verify, invert back, verify; then refcounts, arrays, the
 * deprecated API, _cpuslocked, deferred keys and misuse reports.
 *
 * Compiled as C and (test_static_key_cxx.cpp) as C++, each with and
 * without SWITCHYARD_NO_PATCHING: the same checks hold in all four builds.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include "sy_test.h"

DEFINE_STATIC_KEY_TRUE(k_true);
DEFINE_STATIC_KEY_FALSE(k_false);
DEFINE_STATIC_KEY_TRUE(k_true2);
DEFINE_STATIC_KEY_FALSE(k_false2);
struct static_key old_true = STATIC_KEY_INIT_TRUE;
struct static_key old_false = STATIC_KEY_INIT_FALSE;
DEFINE_STATIC_KEY_ARRAY_TRUE(arr_true, 3);
DEFINE_STATIC_KEY_ARRAY_FALSE(arr_false, 3);
DECLARE_STATIC_KEY_FALSE(k_declared);
DEFINE_STATIC_KEY_FALSE(k_declared);

#define NOINLINE __attribute__((noinline))

/* Each function holds one site and returns the branch it took. */
static NOINLINE bool t_true_likely(void) { if (static_branch_likely(&k_true)) return true; return false; }
static NOINLINE bool t_true_unlikely(void) { if (static_branch_unlikely(&k_true)) return true; return false; }
static NOINLINE bool t_false_likely(void) { if (static_branch_likely(&k_false)) return true; return false; }
static NOINLINE bool t_false_unlikely(void) { if (static_branch_unlikely(&k_false)) return true; return false; }
static NOINLINE bool t_true2_unlikely(void) { return static_branch_unlikely(&k_true2); }
static NOINLINE bool t_false2_likely(void) { return static_branch_likely(&k_false2); }
static NOINLINE bool t_old_true(void) { if (static_key_true(&old_true)) return true; return false; }
static NOINLINE bool t_old_false(void) { if (static_key_false(&old_false)) return true; return false; }
static NOINLINE bool t_arr_true0(void) { return static_branch_likely(&arr_true[0]); }
static NOINLINE bool t_arr_true2(void) { return static_branch_unlikely(&arr_true[2]); }
static NOINLINE bool t_arr_false1(void) { return static_branch_unlikely(&arr_false[1]); }
static NOINLINE bool t_arr_false2(void) { return static_branch_likely(&arr_false[2]); }
static NOINLINE bool t_declared(void) { return static_branch_unlikely(&k_declared); }

struct test_key {
	bool init_state;
	struct static_key *key;
	bool (*test)(void);
};

static struct test_key keys[] = {
	{ true, &k_true.key, t_true_likely },
	{ true, &k_true.key, t_true_unlikely },
	{ false, &k_false.key, t_false_likely },
	{ false, &k_false.key, t_false_unlikely },
	{ true, &k_true2.key, t_true2_unlikely },
	{ false, &k_false2.key, t_false2_likely },
	{ true, &old_true, t_old_true },
	{ false, &old_false, t_old_false },
	{ true, &arr_true[0].key, t_arr_true0 },
	{ true, &arr_true[2].key, t_arr_true2 },
	{ false, &arr_false[1].key, t_arr_false1 },
	{ false, &arr_false[2].key, t_arr_false2 },
	{ false, &k_declared.key, t_declared },
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* Every test function agrees with its key's state and with `expect`, and
 * every site of the key holds the matching instruction. */
static void verify_keys(bool invert)
{
	for (size_t i = 0; i < NKEYS; i++) {
		bool want = keys[i].init_state != invert;

		CHECK_EQ(static_key_enabled(keys[i].key), want);
		CHECK_EQ(keys[i].test(), want);
		int n = sy_test_check_sites(keys[i].key);
		if (SY_TEST_HAVE_SITES)
			CHECK(n >= 1);
	}
}

/* Flip each key once (a key shared by two entries only once). */
static void invert_keys(void)
{
	for (size_t i = 0; i < NKEYS; i++) {
		bool seen = false;

		for (size_t j = 0; j < i; j++)
			if (keys[j].key == keys[i].key)
				seen = true;
		if (seen)
			continue;
		if (static_key_enabled(keys[i].key))
			CHECK_EQ(static_key_slow_dec(keys[i].key), 0);
		else
			CHECK_EQ(static_key_slow_inc(keys[i].key), 0);
	}
}

static void test_kernel_pattern(void)
{
	verify_keys(false);
	invert_keys();
	verify_keys(true);
	invert_keys();
	verify_keys(false);
	/* The same through enable/disable. */
	CHECK_EQ(static_branch_disable(&k_true), 0);
	CHECK_EQ(static_branch_enable(&k_false), 0);
	CHECK(!t_true_likely() && !t_true_unlikely());
	CHECK(t_false_likely() && t_false_unlikely());
	sy_test_check_sites(&k_true.key);
	sy_test_check_sites(&k_false.key);
	CHECK_EQ(static_branch_enable(&k_true), 0);
	CHECK_EQ(static_branch_disable(&k_false), 0);
	verify_keys(false);
}

static void test_refcount(void)
{
	struct switchyard_stats a, b;

	CHECK_EQ(static_key_count(&k_false.key), 0);
	CHECK_EQ(static_branch_inc(&k_false), 0);
	CHECK_EQ(static_key_count(&k_false.key), 1);
	CHECK(t_false_unlikely());
	/* Further references patch nothing. */
	CHECK_EQ(switchyard_get_stats(&a), 0);
	CHECK_EQ(static_branch_inc(&k_false), 0);
	CHECK_EQ(static_branch_inc(&k_false), 0);
	CHECK_EQ(static_key_count(&k_false.key), 3);
	CHECK_EQ(static_branch_dec(&k_false), 0);
	CHECK_EQ(static_branch_dec(&k_false), 0);
	CHECK_EQ(switchyard_get_stats(&b), 0);
	CHECK_EQ(b.patched_sites, a.patched_sites);
	CHECK(t_false_unlikely());
	/* enable/disable on a count above one: misuse, key unchanged. */
	CHECK_EQ(static_branch_inc(&k_false), 0);
	CHECK_EQ(static_branch_enable(&k_false), -EBUSY);
	CHECK_EQ(static_branch_disable(&k_false), -EBUSY);
	CHECK_EQ(static_key_count(&k_false.key), 2);
	CHECK(t_false_unlikely());
	CHECK_EQ(static_branch_dec(&k_false), 0);
	/* enable of an enabled key (count 1) is a no-op, not misuse */
	CHECK_EQ(static_branch_enable(&k_false), 0);
	CHECK_EQ(static_key_count(&k_false.key), 1);
	CHECK_EQ(static_branch_dec(&k_false), 0);
	CHECK_EQ(static_key_count(&k_false.key), 0);
	CHECK(!t_false_unlikely());
	sy_test_check_sites(&k_false.key);
	/* disable of a disabled key: no-op */
	CHECK_EQ(static_branch_disable(&k_false), 0);
	/* dec below zero: -EINVAL, key unchanged, sites unchanged */
	CHECK_EQ(static_branch_dec(&k_false), -EINVAL);
	CHECK_EQ(static_key_count(&k_false.key), 0);
	CHECK(!t_false_unlikely());
	sy_test_check_sites(&k_false.key);
	/* A TRUE key starts at 1. */
	CHECK_EQ(static_key_count(&k_true2.key), 1);
	CHECK_EQ(static_branch_dec(&k_true2), 0);
	CHECK(!t_true2_unlikely());
	CHECK_EQ(static_branch_inc(&k_true2), 0);
	CHECK(t_true2_unlikely());
	/* "in progress" (-1) reads as 1, as the kernel reports it */
	{
		struct static_key in_progress = STATIC_KEY_INIT_FALSE;

		in_progress.enabled = -1;
		CHECK_EQ(static_key_count(&in_progress), 1);
		CHECK(static_key_enabled(&in_progress));
	}
	/* overflow is refused */
	{
		static struct static_key big = STATIC_KEY_INIT_TRUE;

		big.enabled = INT_MAX;
		CHECK_EQ(static_key_slow_inc(&big), -EOVERFLOW);
		CHECK_EQ(static_key_count(&big), INT_MAX);
	}
	/* static_key_enabled() takes all three key types */
	CHECK(static_key_enabled(&k_true));
	CHECK(!static_key_enabled(&k_false));
	CHECK(static_key_enabled(&old_true));
}

static void test_misuse_reported_once(void)
{
	static struct static_key_false lone = STATIC_KEY_FALSE_INIT;

	switchyard_set_log(sy_test_log, NULL);
	sy_test_log_count = 0;
	CHECK_EQ(static_branch_dec(&lone), -EINVAL);
	CHECK_EQ(sy_test_log_count, 1);
	CHECK(strstr(sy_test_log_last, "below zero") != NULL);
	/* named, not by address (gcc: 'lone.0', clang: '...once.lone', C++:
	 * 'test_misuse_reported_once()::lone', demangled) */
	CHECK(strstr(sy_test_log_last, "static key '") != NULL);
	CHECK(strstr(sy_test_log_last, "lone") != NULL);
	CHECK(strstr(sy_test_log_last, "_Z") == NULL);
	CHECK_EQ(static_branch_dec(&lone), -EINVAL);
	CHECK_EQ(sy_test_log_count, 1);	/* once per key */
	CHECK_EQ(static_key_count(&lone.key), 0);

	CHECK_EQ(static_branch_inc(&lone), 0);
	CHECK_EQ(static_branch_inc(&lone), 0);
	CHECK_EQ(static_branch_enable(&lone), -EBUSY);
	CHECK_EQ(sy_test_log_count, 2);
	CHECK(strstr(sy_test_log_last, "reference count 2") != NULL);
	CHECK(strstr(sy_test_log_last, "lone") != NULL);
	CHECK_EQ(static_branch_disable(&lone), -EBUSY);
	CHECK_EQ(sy_test_log_count, 2);
	CHECK_EQ(static_key_count(&lone.key), 2);
	CHECK_EQ(static_branch_dec(&lone), 0);
	CHECK_EQ(static_branch_dec(&lone), 0);
	switchyard_set_log(NULL, NULL);
}

static void test_cpuslocked(void)
{
	switchyard_set_log(sy_test_log, NULL);
	sy_test_log_count = 0;
	/* Without the lock: refused and reported. */
	CHECK_EQ(static_branch_enable_cpuslocked(&k_false2), -EPERM);
	CHECK_EQ(sy_test_log_count, 1);
	CHECK(!static_key_enabled(&k_false2));
	CHECK_EQ(switchyard_patch_unlock(), -EPERM);

	CHECK_EQ(switchyard_patch_lock(), 0);
	CHECK_EQ(switchyard_patch_lock(), -EDEADLK);
	CHECK_EQ(static_branch_enable_cpuslocked(&k_false2), 0);
	CHECK(t_false2_likely());
	CHECK_EQ(static_key_enable_cpuslocked(&k_false2.key), 0);
	CHECK_EQ(static_key_count(&k_false2.key), 1);
	/* the plain calls notice the held lock instead of deadlocking */
	CHECK_EQ(static_branch_disable(&k_false2), 0);
	CHECK(!t_false2_likely());
	CHECK_EQ(static_branch_inc(&k_false2), 0);
	CHECK_EQ(static_branch_disable_cpuslocked(&k_false2), 0);
	CHECK(!t_false2_likely());
	CHECK_EQ(switchyard_patch_unlock(), 0);
	sy_test_check_sites(&k_false2.key);
	switchyard_set_log(NULL, NULL);
}

DEFINE_STATIC_KEY_DEFERRED_FALSE(dk, 60000);
DEFINE_STATIC_KEY_DEFERRED_TRUE(dk_true, 5);
struct static_key_deferred dk_old = { STATIC_KEY_INIT_FALSE, 0, { 0, 0, 0, 0 } };

static NOINLINE bool t_dk(void) { return static_branch_unlikely(&dk.key); }
static NOINLINE bool t_dk_true(void) { return static_branch_likely(&dk_true.key); }
static NOINLINE bool t_dk_old(void) { return static_key_false(&dk_old.key); }

static void test_deferred(void)
{
	struct switchyard_stats a, b;

	/* The final decrement waits (60 s here: only a flush ends it). */
	CHECK_EQ(static_branch_deferred_inc(&dk), 0);
	CHECK(t_dk());
	CHECK_EQ(static_branch_slow_dec_deferred(&dk), 0);
	CHECK(t_dk());
	CHECK_EQ(static_key_count(&dk.key.key), 1);
	/* dec + inc inside the window coalesce: nothing is patched */
	CHECK_EQ(switchyard_get_stats(&a), 0);
	CHECK_EQ(static_branch_deferred_inc(&dk), 0);
	CHECK_EQ(static_key_count(&dk.key.key), 2);
	CHECK_EQ(static_branch_slow_dec_deferred(&dk), 0);	/* 2 -> 1 now */
	CHECK_EQ(static_key_count(&dk.key.key), 1);
	CHECK_EQ(switchyard_get_stats(&b), 0);
	CHECK_EQ(b.patched_sites, a.patched_sites);
	CHECK(t_dk());
	/* flush runs the pending decrement now */
	CHECK_EQ(static_key_deferred_flush(&dk), 0);
	CHECK_EQ(static_key_count(&dk.key.key), 0);
	CHECK(!t_dk());
	sy_test_check_sites(&dk.key.key);
	/* flush with nothing pending does nothing */
	CHECK_EQ(static_key_deferred_flush(&dk), 0);
	CHECK_EQ(static_key_count(&dk.key.key), 0);

	/* A short limit expires by itself (poll with a generous deadline). */
	CHECK(t_dk_true());
	CHECK_EQ(static_branch_slow_dec_deferred(&dk_true), 0);
	for (int i = 0; i < 5000 && static_key_enabled(&dk_true.key); i++)
		usleep(1000);
	CHECK(!static_key_enabled(&dk_true.key));
	/* The count drops to 0 before the sites are written (the kernel's
	 * order): the worker may still be patching. It holds the patch lock
	 * until done, so taking the lock waits for it. */
	CHECK_EQ(switchyard_patch_lock(), 0);
	CHECK_EQ(switchyard_patch_unlock(), 0);
	CHECK(!t_dk_true());
	sy_test_check_sites(&dk_true.key.key);

	/* The old struct static_key_deferred with jump_label_rate_limit(). */
	jump_label_rate_limit(&dk_old, 60000);
	CHECK_EQ(dk_old.timeout, 60000);
	CHECK_EQ(static_key_slow_inc(&dk_old.key), 0);
	CHECK(t_dk_old());
	CHECK_EQ(static_key_slow_dec_deferred(&dk_old), 0);
	CHECK(t_dk_old());
	CHECK_EQ(static_key_deferred_flush(&dk_old), 0);
	CHECK(!t_dk_old());
	/* deferred dec of a disabled key is the usual misuse */
	switchyard_set_log(sy_test_log, NULL);
	CHECK_EQ(static_key_slow_dec_deferred(&dk_old), -EINVAL);
	switchyard_set_log(NULL, NULL);
}

/* A key of its own for the counters: nothing else changes it. */
DEFINE_STATIC_KEY_FALSE(k_stats);
static NOINLINE bool t_stats_a(void) { return static_branch_unlikely(&k_stats); }
static NOINLINE bool t_stats_b(void) { return static_branch_likely(&k_stats); }
static NOINLINE bool t_stats_c(void) { if (static_branch_unlikely(&k_stats)) return true; return false; }

/* What a change of k_stats cost, between two snapshots of the counters:
 * `batches` batches (one sync each) that wrote `sites` sites. */
#define CHECK_COST(a, b, batches, sites)                                     \
	do {                                                                 \
		CHECK_EQ((b).patch_batches - (a).patch_batches, (batches));  \
		CHECK_EQ((b).patched_sites - (a).patched_sites, (sites));    \
		CHECK_EQ((b).sync_calls - (a).sync_calls, (batches));        \
		if (batches)                                                 \
			CHECK((b).write_calls - (a).write_calls >= 1);       \
		else                                                         \
			CHECK_EQ((b).write_calls - (a).write_calls, 0);      \
	} while (0)

static void test_stats(void)
{
	struct switchyard_stats st, s0, s1, s2, s3;
	int n;

	CHECK_EQ(switchyard_get_stats(NULL), -EINVAL);
	CHECK_EQ(switchyard_get_stats(&st), 0);
	if (SY_TEST_HAVE_SITES) {
		CHECK(st.objects >= 1);
		CHECK(st.sites >= NKEYS);
		CHECK_EQ(st.sites, st.sites_short + st.sites_long + st.sites_refused);
		CHECK_EQ(st.sites_refused, 0);
	} else {
		CHECK_EQ(st.sites, 0);
	}
	CHECK(strlen(switchyard_version()) >= 5);

	/* The sites of k_stats, counted in our own table (0 in the fallback
	 * build, where nothing is patched). Enabling it must patch exactly
	 * those, in one batch, with one sync; changes that leave its state
	 * as it is must write nothing. */
	n = sy_test_check_sites(&k_stats.key);
	if (SY_TEST_HAVE_SITES)
		CHECK(n >= 3);
	CHECK(!t_stats_a() && !t_stats_b() && !t_stats_c());
	CHECK_EQ(switchyard_get_stats(&s0), 0);
	CHECK_EQ(static_branch_enable(&k_stats), 0);
	CHECK_EQ(switchyard_get_stats(&s1), 0);
	CHECK_COST(s0, s1, n ? 1 : 0, n);
	CHECK(t_stats_a() && t_stats_b() && t_stats_c());
	sy_test_check_sites(&k_stats.key);

	CHECK_EQ(static_branch_enable(&k_stats), 0);	/* enabled already */
	CHECK_EQ(static_branch_inc(&k_stats), 0);	/* 1 -> 2 */
	CHECK_EQ(static_branch_dec(&k_stats), 0);	/* 2 -> 1 */
	CHECK_EQ(switchyard_get_stats(&s2), 0);
	CHECK_COST(s1, s2, 0, 0);
	CHECK_EQ(static_key_count(&k_stats.key), 1);

	CHECK_EQ(static_branch_disable(&k_stats), 0);
	CHECK_EQ(switchyard_get_stats(&s3), 0);
	CHECK_COST(s2, s3, n ? 1 : 0, n);
	CHECK(!t_stats_a() && !t_stats_b() && !t_stats_c());
	sy_test_check_sites(&k_stats.key);
}

/* ---- the rest of the kernel's jump_label API ([5/10] item 4) ------------ */

#define CONFIG_SY_TEST_YES 1	/* like a Kconfig option set to y */
/* CONFIG_SY_TEST_NO: not defined, like an option set to n */
DEFINE_STATIC_KEY_MAYBE(CONFIG_SY_TEST_YES, k_maybe_on);
DEFINE_STATIC_KEY_MAYBE(CONFIG_SY_TEST_NO, k_maybe_off);
DECLARE_STATIC_KEY_MAYBE(CONFIG_SY_TEST_YES, k_maybe_on);
DEFINE_STATIC_KEY_FALSE(k_locked_inc);
DEFINE_STATIC_KEY_DEFERRED_FALSE(dk_rate, 10);
DEFINE_STATIC_KEY_DEFERRED_TRUE(dk_rate_true, 10);

static NOINLINE bool t_maybe_on(void)
{
	return static_branch_maybe(CONFIG_SY_TEST_YES, &k_maybe_on);
}

static NOINLINE bool t_maybe_off(void)
{
	return static_branch_maybe(CONFIG_SY_TEST_NO, &k_maybe_off);
}

static NOINLINE bool t_locked_inc(void)
{
	return static_branch_unlikely(&k_locked_inc);
}

static void test_rest_of_api(void)
{
	/* MAYBE: a TRUE key when the option is 1, FALSE otherwise */
	CHECK_EQ(k_maybe_on.key.sy_type & 1, 1);
	CHECK_EQ(k_maybe_off.key.sy_type & 1, 0);
	CHECK(t_maybe_on());
	CHECK(!t_maybe_off());
	CHECK_EQ(static_branch_disable(&k_maybe_on), 0);
	CHECK_EQ(static_branch_enable(&k_maybe_off), 0);
	CHECK(!t_maybe_on());
	CHECK(t_maybe_off());
	CHECK_EQ(static_branch_enable(&k_maybe_on), 0);
	CHECK_EQ(static_branch_disable(&k_maybe_off), 0);
	sy_test_check_sites(&k_maybe_on.key);
	sy_test_check_sites(&k_maybe_off.key);

	/* inc/dec _cpuslocked: only with the patch lock */
	switchyard_set_log(sy_test_log, NULL);
	sy_test_log_count = 0;
	CHECK_EQ(static_branch_inc_cpuslocked(&k_locked_inc), -EPERM);
	CHECK_EQ(static_key_slow_dec_cpuslocked(&k_locked_inc.key), -EPERM);
	CHECK_EQ(static_key_count(&k_locked_inc.key), 0);
	CHECK_EQ(sy_test_log_count, 1);	/* reported once per key */
	CHECK_EQ(switchyard_patch_lock(), 0);
	CHECK_EQ(static_branch_inc_cpuslocked(&k_locked_inc), 0);
	CHECK(t_locked_inc());
	CHECK_EQ(static_key_slow_inc_cpuslocked(&k_locked_inc.key), 0);
	CHECK_EQ(static_key_count(&k_locked_inc.key), 2);
	CHECK_EQ(static_branch_dec_cpuslocked(&k_locked_inc), 0);
	CHECK(t_locked_inc());
	CHECK_EQ(static_key_slow_dec_cpuslocked(&k_locked_inc.key), 0);
	CHECK(!t_locked_inc());
	CHECK_EQ(static_key_slow_dec_cpuslocked(&k_locked_inc.key), -EINVAL);
	CHECK_EQ(switchyard_patch_unlock(), 0);
	sy_test_check_sites(&k_locked_inc.key);
	switchyard_set_log(NULL, NULL);

	/* fast_inc_not_disabled: only while enabled, never patches */
	CHECK(!static_key_fast_inc_not_disabled(&k_locked_inc.key));
	CHECK_EQ(static_key_count(&k_locked_inc.key), 0);
	CHECK_EQ(static_branch_enable(&k_locked_inc), 0);
	CHECK(static_key_fast_inc_not_disabled(&k_locked_inc.key));
	CHECK_EQ(static_key_count(&k_locked_inc.key), 2);
	CHECK_EQ(static_branch_dec(&k_locked_inc), 0);
	CHECK_EQ(static_branch_dec(&k_locked_inc), 0);
	CHECK(!t_locked_inc());

	CHECK(static_key_initialized);
	jump_label_init();

	/* every kind of deferred key takes a rate limit, without a cast */
	jump_label_rate_limit(&dk_rate, 25);
	jump_label_rate_limit(&dk_rate_true, 30);
	CHECK_EQ(dk_rate.timeout, 25);
	CHECK_EQ(dk_rate_true.timeout, 30);
}

int main(void)
{
	test_kernel_pattern();
	test_refcount();
	test_misuse_reported_once();
	test_cpuslocked();
	test_deferred();
	test_stats();
	test_rest_of_api();
	return sy_test_done(SY_TEST_HAVE_SITES ? "static_key (patching)"
					       : "static_key (fallback)");
}
