/* SPDX-License-Identifier: MIT */
/*
 * static_key.c - the static key state machine (the kernel's
 * kernel/jump_label.c semantics, our code).
 *
 * key->enabled (see the table in <switchyard/static_key.h>):
 *
 *   from   call                 to    patches?  lock
 *   0      inc / enable         -1    yes       held, then 1 (release)
 *   n>0    inc                  n+1   no        none (cmpxchg fast path)
 *   n>1    dec                  n-1   no        none (cmpxchg fast path)
 *   1      dec / disable        0     yes       held, cmpxchg 1 -> 0
 *
 * Under the lock the fast paths of other threads still move the count
 * among the values above 0, so every locked step that starts from a
 * positive count is a compare-and-swap (a store would lose a reference
 * taken meanwhile: the stress test found exactly that).
 *   0      dec                  0     -         misuse: -EINVAL, reported
 *   n>1    enable / disable     n     -         misuse: -EBUSY, reported
 *
 * -1 exists only while the patch lock is held by the thread that enables;
 * nobody else can take a transition from it, so seeing it under the lock is
 * impossible.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

/*
 * Under helgrind and DRD. A key's count (key->enabled) is read without a
 * lock by static_key_count() and static_key_enabled(), inline in the
 * program, and a static call's target by its detour, code the header emits
 * into the program (it has no symbol a suppression could name), while a
 * change stores them: atomic accesses whose ordering is documented, a
 * deliberate race those tools cannot see as one. Before the library first
 * writes such a field, these client requests tell both tools to stop
 * checking it (a few instructions that do nothing when not under valgrind).
 * What the library itself reads and writes without a lock is covered by the
 * suppression file (share/switchyard/switchyard.supp). Without valgrind's
 * headers at build time (an optional build dependency) only the file is
 * there, and reports from the program's side remain.
 */
#if defined(__has_include) && !defined(SY__NO_VG_ANNOTATE)
#if __has_include(<valgrind/helgrind.h>) && __has_include(<valgrind/drd.h>)
#include <valgrind/helgrind.h>
#include <valgrind/drd.h>
#define SY_VG_ANNOTATE 1
#endif
#endif

void sy_vg_benign_race(const void *addr, size_t len)
{
#ifdef SY_VG_ANNOTATE
	VALGRIND_HG_DISABLE_CHECKING(addr, len);
	VALGRIND_DO_CLIENT_REQUEST_STMT(VG_USERREQ__DRD_START_SUPPRESSION,
					addr, len, 0, 0, 0);
#else
	(void)addr;
	(void)len;
#endif
}

/* The count, for the above: every entry point that may write it. */
static inline struct static_key *vg(struct static_key *key)
{
	if (key)
		sy_vg_benign_race(&key->enabled, sizeof(key->enabled));
	return key;
}

static int load(const struct static_key *key)
{
	return __atomic_load_n(&key->enabled, __ATOMIC_RELAXED);
}

/* Report a misuse of `key` once: `bit` is one of SY_KEY_WARNED_*. */
static void warn_once(struct static_key *key, unsigned bit, const char *fmt,
		      ...) __attribute__((format(printf, 3, 4)));

static void warn_once(struct static_key *key, unsigned bit, const char *fmt,
		      ...)
{
	va_list ap;

	/* Relaxed: the flag only has to be set exactly once; the fetch_or is
	 * atomic, which is all that "once" needs. */
	char text[400];

	if (__atomic_fetch_or(&key->sy_type, bit, __ATOMIC_RELAXED) & bit)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* named by report.c: SY_REPORT_KEY in fmt stands for the key */
	sy_report(SWITCHYARD_LOG_WARN, key, 0, "%s", text);
}

static int overflow(struct static_key *key)
{
	warn_once(key, SY_KEY_WARNED_OVERFLOW,
		     "static key " SY_REPORT_KEY ": reference count overflow");
	return -EOVERFLOW;
}

/* Impossible states abort: continuing would patch from a wrong belief. */
static void impossible(struct static_key *key, int v)
{
	sy_log(SWITCHYARD_LOG_ERROR,
	       "static key %p: count %d seen under the patch lock (memory "
	       "corruption?)", (void *)key, v);
	abort();
}

/* 0 -> -1 -> patch -> 1. Patch lock held, count 0: no fast path acts on
 * 0 or -1 (inc needs > 0, dec > 1), so plain stores are safe. */
static int first_enable(struct static_key *key)
{
	int r;

	__atomic_store_n(&key->enabled, -1, __ATOMIC_RELAXED);
	r = sy_jump_label_update(key, true);
	if (r) {
		__atomic_store_n(&key->enabled, 0, __ATOMIC_RELAXED);
		return r;
	}
	/*
	 * Release: pairs with the acquire load/cmpxchg of the lock-free
	 * paths (inc_not_disabled(), dec_not_one(), dec_deferred()), which
	 * act only on a count above 0: a thread whose increment succeeds
	 * there has seen this 1, hence every site written and the cores
	 * synchronised. Not with static_key_count()/static_key_enabled():
	 * they are relaxed loads and report the -1 above as 1, so a reader
	 * of those may be early, never late (documented in the header).
	 */
	__atomic_store_n(&key->enabled, 1, __ATOMIC_RELEASE);
	return 0;
}

/*
 * 1 -> 0 -> patch. Patch lock held. A compare-and-swap, not a store: the
 * lock-free fast path of an increment may turn the 1 we saw into 2 at any
 * moment, and a store would lose that reference. Returns 1 if *v changed
 * under us (it now holds the new count), else 0 or the patching error (on
 * which the count goes back to 1; at 0 no fast path acts, so a store is
 * safe there).
 */
static int last_disable(struct static_key *key, int *v)
{
	int r;

	if (!__atomic_compare_exchange_n(&key->enabled, v, 0, false,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return 1;
	r = sy_jump_label_update(key, false);
	if (r)
		__atomic_store_n(&key->enabled, 1, __ATOMIC_RELAXED);
	return r;
}

/* Lock-free increment while the key is enabled (count > 0). */
static bool inc_not_disabled(struct static_key *key, int *err)
{
	int v = __atomic_load_n(&key->enabled, __ATOMIC_ACQUIRE);

	*err = 0;
	while (v > 0) {
		if (v == INT_MAX) {
			*err = overflow(key);
			return true;
		}
		if (__atomic_compare_exchange_n(&key->enabled, &v, v + 1, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_ACQUIRE))
			return true;
	}
	return false;
}

/* Lock-free decrement while the count stays above zero. */
static bool dec_not_one(struct static_key *key)
{
	int v = __atomic_load_n(&key->enabled, __ATOMIC_ACQUIRE);

	while (v > 1) {
		if (__atomic_compare_exchange_n(&key->enabled, &v, v - 1, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_ACQUIRE))
			return true;
	}
	return false;
}

static int inc_locked(struct static_key *key)
{
	int r, v = load(key);

	if (v == 0)
		return first_enable(key);
	if (v < 0)
		impossible(key, v);
	if (inc_not_disabled(key, &r))
		return r;
	impossible(key, load(key));
	return -EINVAL;
}

/*
 * Patch lock held, but the lock-free fast paths of other threads still
 * move the count between 1 and above (inc from n > 0, dec from n > 1):
 * every step here is a compare-and-swap that retries on their changes.
 */
static int dec_locked(struct static_key *key)
{
	int r, v = load(key);

	for (;;) {
		if (v < 0)
			impossible(key, v);
		if (v == 0) {
			warn_once(key, SY_KEY_WARNED_DEC,
				     "static key " SY_REPORT_KEY ": decrement below "
				     "zero (more dec than inc); ignored");
			return -EINVAL;
		}
		if (v == 1) {
			r = last_disable(key, &v);
			if (r != 1)
				return r;
			continue;
		}
		if (__atomic_compare_exchange_n(&key->enabled, &v, v - 1, false,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return 0;
	}
}

static int slow_inc(struct static_key *key)
{
	int r;

	if (inc_not_disabled(key, &r))
		return r;
	return SY_LOCKED(inc_locked(key));
}

int static_key_slow_inc(struct static_key *key)
{
	return SY_GUARDED(slow_inc(vg(key)));
}

int sy_key_dec(struct static_key *key)
{
	if (dec_not_one(vg(key)))
		return 0;
	return SY_LOCKED(dec_locked(key));
}

int static_key_slow_dec(struct static_key *key)
{
	return SY_GUARDED(sy_key_dec(key));
}

static int busy(struct static_key *key, const char *what)
{
	warn_once(key, SY_KEY_WARNED_BUSY,
		     "static key " SY_REPORT_KEY ": %s with reference count "
		     "%d (use inc/dec on reference counted keys); ignored",
		     what, static_key_count(key));
	return -EBUSY;
}

static int enable_locked(struct static_key *key)
{
	int v = load(key);

	if (v == 0)
		return first_enable(key);
	if (v < 0)
		impossible(key, v);
	return v == 1 ? 0 : busy(key, "enable");
}

static int disable_locked(struct static_key *key)
{
	int r, v = load(key);

	if (v == 1) {
		r = last_disable(key, &v);
		if (r != 1)
			return r;
		/* an increment got in first: v > 1 now */
	}
	if (v < 0)
		impossible(key, v);
	return v == 0 ? 0 : busy(key, "disable");
}

static int not_locked(struct static_key *key, const char *fn)
{
	warn_once(key, SY_KEY_WARNED_LOCK,
		     "%s(" SY_REPORT_KEY ") called without the patch lock "
		     "held (switchyard_patch_lock()); ignored", fn);
	return -EPERM;
}

int static_key_enable(struct static_key *key)
{
	return SY_GUARDED(SY_LOCKED(enable_locked(vg(key))));
}

int static_key_disable(struct static_key *key)
{
	return SY_GUARDED(SY_LOCKED(disable_locked(vg(key))));
}

/*
 * sy_keys_change(): the transitions of enable/disable/inc/dec above, for
 * several keys under one hold of the patch lock, and one batch for every
 * key whose sites must change. Per key, the same protocol as one key:
 * 0 -> -1 before the batch -> 1 after it (first_enable()), 1 -> 0 by
 * compare-and-swap before it (last_disable()), and back on failure;
 * changes that need no patching (a count above 1) made at once.
 * need[i]: 0 nothing to patch, 1 to enabled, 2 to disabled.
 */
static void keys_prepare(struct static_key *key, int op, int *res,
			 unsigned char *need)
{
	int v, r;

	*res = 0;
	*need = 0;
	switch (op) {
	case SY_KEYS_INC:
		if (inc_not_disabled(key, &r)) {
			*res = r;
			return;
		}
		/* 0: as an enable */
		__attribute__((fallthrough));
	case SY_KEYS_ON:
		v = load(key);
		if (v < 0)
			impossible(key, v);
		if (v == 0) {
#if defined(SY__KEYS_BATCH_BROKEN) && SY__KEYS_BATCH_BROKEN == 2
			/* negative control of tests/static_key/test_keys_batch.c (a
			 * test-only build): the enable published before the
			 * batch writes the sites */
			__atomic_store_n(&key->enabled, 1, __ATOMIC_RELEASE);
#else
			__atomic_store_n(&key->enabled, -1, __ATOMIC_RELAXED);
#endif
			*need = 1;
		} else if (v > 1 && op == SY_KEYS_ON) {
			*res = busy(key, "enable");
		} else if (op == SY_KEYS_INC) {
			/* above 0 since the fast path failed: an increment of
			 * another thread got in. It cannot drop to 0 again:
			 * only a holder of the patch lock (us) does that, so a
			 * failure here is impossible (inc_locked()'s rule). Its
			 * result is ours (-EOVERFLOW at INT_MAX). */
			if (!inc_not_disabled(key, &r))
				impossible(key, load(key));
			*res = r;
		}
		return;
	case SY_KEYS_OFF:
	case SY_KEYS_DEC:
		if (op == SY_KEYS_DEC && dec_not_one(key))
			return;
		v = load(key);
		for (;;) {
			if (v < 0)
				impossible(key, v);
			if (v == 0) {
				if (op == SY_KEYS_DEC) {
					warn_once(key, SY_KEY_WARNED_DEC,
						     "static key " SY_REPORT_KEY
						     ": decrement below zero "
						     "(more dec than inc); "
						     "ignored");
					*res = -EINVAL;
				}
				return;
			}
			if (v == 1) {
				if (__atomic_compare_exchange_n(&key->enabled,
						&v, 0, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
					*need = 2;
					return;
				}
				continue;	/* an increment got in */
			}
			if (op == SY_KEYS_OFF) {
				*res = busy(key, "disable");
				return;
			}
			if (__atomic_compare_exchange_n(&key->enabled, &v,
							v - 1, false,
							__ATOMIC_RELAXED,
							__ATOMIC_RELAXED))
				return;
		}
	}
}

/* After the batch (r its result): the enabled keys to 1 (release: see
 * first_enable()), or every key back where it was on failure. */
static void keys_finish(struct static_key *key, unsigned char need, int r)
{
	if (need == 1)
		__atomic_store_n(&key->enabled, r ? 0 : 1,
				 r ? __ATOMIC_RELAXED : __ATOMIC_RELEASE);
	else if (need == 2 && r)
		__atomic_store_n(&key->enabled, 1, __ATOMIC_RELAXED);
}

static int keys_change_locked(struct static_key *const *keys, const int *ops,
			      int *res, size_t n)
{
	unsigned char *need = calloc(n ? n : 1, 1);
	struct static_key **pk = calloc(n ? n : 1, sizeof(*pk));
	bool *en = calloc(n ? n : 1, sizeof(*en));
	size_t m = 0;
	int r;

	if (!need || !pk || !en) {
		free(need);
		free(pk);
		free(en);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		keys_prepare(keys[i], ops[i], &res[i], &need[i]);
		if (need[i]) {
			pk[m] = keys[i];
			en[m++] = need[i] == 1;
		}
	}
	r = sy_jump_label_update_n(pk, en, m);
	for (size_t i = 0; i < n; i++) {
		int ri = r;

		if (!need[i])
			continue;
		if (r == -EAGAIN)	/* one at a time */
			ri = sy_jump_label_update(keys[i], need[i] == 1);
		keys_finish(keys[i], need[i], ri);
		res[i] = ri;
	}
	free(need);
	free(pk);
	free(en);
	return r == -EAGAIN ? 0 : r;
}

int sy_keys_change(struct static_key *const *keys, const int *ops,
		   int *results, size_t n)
{
	for (size_t i = 0; keys && i < n; i++)
		if (keys[i])
			vg(keys[i]);
	return SY_GUARDED(SY_LOCKED(keys_change_locked(keys, ops, results, n)));
}

static int enable_cpuslocked(struct static_key *key)
{
	if (!sy_lock_held())
		return not_locked(key, "static_key_enable_cpuslocked");
	return enable_locked(key);
}

static int disable_cpuslocked(struct static_key *key)
{
	if (!sy_lock_held())
		return not_locked(key, "static_key_disable_cpuslocked");
	return disable_locked(key);
}

int static_key_enable_cpuslocked(struct static_key *key)
{
	return SY_GUARDED(enable_cpuslocked(vg(key)));
}

int static_key_disable_cpuslocked(struct static_key *key)
{
	return SY_GUARDED(disable_cpuslocked(vg(key)));
}

static int slow_inc_cpuslocked(struct static_key *key)
{
	int r;

	if (!sy_lock_held())
		return not_locked(key, "static_key_slow_inc_cpuslocked");
	if (inc_not_disabled(key, &r))
		return r;
	return inc_locked(key);
}

static int slow_dec_cpuslocked(struct static_key *key)
{
	if (!sy_lock_held())
		return not_locked(key, "static_key_slow_dec_cpuslocked");
	if (dec_not_one(key))
		return 0;
	return dec_locked(key);
}

int static_key_slow_inc_cpuslocked(struct static_key *key)
{
	return SY_GUARDED(slow_inc_cpuslocked(vg(key)));
}

int static_key_slow_dec_cpuslocked(struct static_key *key)
{
	return SY_GUARDED(slow_dec_cpuslocked(vg(key)));
}

/* Lock-free and without the guard: it touches nothing but the count. */
bool static_key_fast_inc_not_disabled(struct static_key *key)
{
	int r;

	return inc_not_disabled(vg(key), &r) && !r;
}

/* Nothing needs initialising before a key can change (the lock and the
 * deferred queue set themselves up on first use): static_key_initialized is
 * the constant true, and this does nothing. */
void jump_label_init(void)
{
}
