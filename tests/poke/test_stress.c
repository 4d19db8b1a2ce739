/* SPDX-License-Identifier: MIT */
/*
 * test_stress.c - flip keys while threads run their sites.
 *
 * 2 x cores runner threads call random sites of 16 keys (1,024 sites) in a
 * tight loop; flipper threads enable and disable random keys; a watcher
 * thread reads /proc/self/maps and fails on any mapping writable and
 * executable at once. Every pass checks its path against the key's state
 * as published after the change returned, with a per-key sequence count
 * (odd while a change is in progress): a pass that began and ended with
 * the same even count must have taken the published path. Every flip is
 * one batch of STRESS_SITES_PER_KEY sites, one sync: the library's
 * counters must agree with the flips made. Then threads inc/dec one key
 * concurrently and the count must come out exact.
 *
 *   test_stress [seconds] [min-flips]     defaults: 3 s, 300
 * The run lasts the time, and then goes on until the flippers completed
 * min-flips flips between them (each at least a quarter of its share), the
 * runners checked 1,000 passes and the watcher scanned the maps: on a
 * loaded machine (or under valgrind, which runs one thread at a time) the
 * time alone may not give the threads that much, and a test must not
 * depend on what the scheduler gives. It fails if that has not happened
 * after ten times the time and 30 s more: a flipper that stalls, or
 * changes that fail, do not go unnoticed. The default is far below what a
 * 2-core machine does in 3 s (tens of thousands). The torture target runs
 * it with a longer time and 200,000 flips.
 * SWITCHYARD_PATCH_METHOD=mprotect: every write must go through an RWX
 * window (the switch must not be ignored), which maps W+X by design: the
 * watcher's W+X mappings are then not a failure (the cross suite runs so
 * under qemu-user, which sees no code written through /proc/self/mem);
 * without it, no write may open one and no W+X mapping may be seen.
 * SY_STRESS_ALLOW_WX=1: something else maps W+X (valgrind's code cache).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include "stress_sites.h"
#include "sy_test.h"

#define FLIPPERS 2

static _Atomic unsigned seq[STRESS_KEYS];
static _Atomic int state[STRESS_KEYS];
static atomic_bool stop;
static _Atomic unsigned long passes, checked, wrong, flips, maps_scans, wx_seen;

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *runner(void *arg)
{
	uint64_t rnd = 0x9e3779b97f4a7c15ull * (uintptr_t)(1 + (intptr_t)arg);
	unsigned long n = 0, c = 0, bad = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		unsigned long n0 = n, c0 = c;

		for (int i = 0; i < 256; i++) {
			unsigned site = (unsigned)(xorshift(&rnd) % STRESS_SITES);
			unsigned k = site / STRESS_SITES_PER_KEY;
			unsigned s1 = atomic_load_explicit(&seq[k], memory_order_acquire);
			int st = atomic_load_explicit(&state[k], memory_order_relaxed);
			int path = stress_fn[site]();

			atomic_thread_fence(memory_order_seq_cst);
			unsigned s2 = atomic_load_explicit(&seq[k], memory_order_relaxed);
			n++;
			if (s1 == s2 && !(s1 & 1)) {
				c++;
				if (path != st) {
					bad++;
					if (bad < 5)
						fprintf(stderr, "site %u of key %u: "
							"path %d, published state %d\n",
							site, k, path, st);
				}
			}
		}
		/* as they go: the main thread waits for enough of them */
		atomic_fetch_add_explicit(&passes, n - n0, memory_order_relaxed);
		atomic_fetch_add_explicit(&checked, c - c0, memory_order_relaxed);
	}
	atomic_fetch_add(&wrong, bad);
	return NULL;
}

struct flipper_arg {
	int id;
	_Atomic unsigned long done;	/* flips that succeeded, so far */
};

/* Flipper f owns the keys k with k % FLIPPERS == f: one writer per key. */
static void *flipper(void *argp)
{
	struct flipper_arg *a = argp;
	uint64_t rnd = 0x2545f4914f6cdd1dull * (uintptr_t)(a->id + 7);
	unsigned long n = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		unsigned k = (unsigned)(xorshift(&rnd) % (STRESS_KEYS / FLIPPERS)) *
			     FLIPPERS + (unsigned)a->id;
		struct static_key *key = stress_key((int)k);
		bool on = !static_key_enabled(key);
		int r;

		/* odd: a change is in progress (full barrier: the runners
		 * must see it before the first byte changes) */
		atomic_fetch_add_explicit(&seq[k], 1, memory_order_seq_cst);
		r = on ? static_key_enable(key) : static_key_disable(key);
		if (r || static_key_enabled(key) != on) {
			fprintf(stderr, "flip of key %u failed: %d\n", k, r);
			atomic_fetch_add(&wrong, 1);
		} else {
			n++;	/* only what really changed counts */
			atomic_store_explicit(&a->done, n, memory_order_relaxed);
		}
		atomic_store_explicit(&state[k], static_key_enabled(key),
				      memory_order_relaxed);
		atomic_fetch_add_explicit(&seq[k], 1, memory_order_release);
	}
	atomic_fetch_add(&flips, n);
	return NULL;
}

/* Fail on any mapping that is writable and executable at once. */
static void *watcher(void *arg)
{
	char buf[65536];

	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
		ssize_t n, have = 0;

		if (fd < 0)
			break;
		while ((n = read(fd, buf + have, sizeof(buf) - 1 - (size_t)have)) > 0)
			have += n;
		close(fd);
		buf[have] = 0;
		for (char *line = buf; line && *line;) {
			char *sp = strchr(line, ' ');

			if (sp && sp[2] == 'w' && sp[3] == 'x') {
				char *nl = strchr(line, '\n');

				if (nl)
					*nl = 0;
				fprintf(stderr, "W+X mapping: %s\n", line);
				atomic_fetch_add(&wx_seen, 1);
				if (!nl)
					break;
				*nl = '\n';
			}
			line = strchr(line, '\n');
			if (line)
				line++;
		}
		atomic_fetch_add(&maps_scans, 1);
		usleep(500);
	}
	return NULL;
}

/* TSan runs this phase ~50x slower: fewer rounds keep it within the
 * sanitizer target's timeout (the plain build keeps the full count, which
 * is what found the lost-reference race). */
#if defined(__SANITIZE_THREAD__)
#define INCDEC_ROUNDS 5000
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define INCDEC_ROUNDS 5000
#endif
#endif
#ifndef INCDEC_ROUNDS
#define INCDEC_ROUNDS 50000
#endif

/* What the run must have done before it may stop. */
static bool enough(struct flipper_arg *fa, unsigned long min_flips)
{
	unsigned long total = 0;

	for (int i = 0; i < FLIPPERS; i++) {
		unsigned long d = atomic_load(&fa[i].done);

		if (d < min_flips / FLIPPERS / 4 || d == 0)
			return false;
		total += d;
	}
	return total >= min_flips && atomic_load(&checked) > 1000 &&
	       atomic_load(&maps_scans) > 0;
}

static void *incdec(void *arg)
{
	struct static_key *key = arg;

	for (int i = 0; i < INCDEC_ROUNDS; i++) {
		if (static_key_slow_inc(key) || static_key_slow_dec(key))
			atomic_fetch_add(&wrong, 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3.0;
	unsigned long min_flips = argc > 2 ? strtoul(argv[2], NULL, 10) : 300;
	const char *method = getenv("SWITCHYARD_PATCH_METHOD");
	bool want_rwx = method && !strcmp(method, "mprotect");
	int nrun = 2 * (int)sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t run[64], flip[FLIPPERS], watch, id[4];
	struct flipper_arg fa[FLIPPERS];
	struct switchyard_stats st0, st1;
	double t0;

	if (nrun > 64)
		nrun = 64;
	for (int k = 0; k < STRESS_KEYS; k++)
		atomic_store(&state[k], static_key_enabled(stress_key(k)));
	switchyard_get_stats(&st0);
	t0 = now_s();
	pthread_create(&watch, NULL, watcher, NULL);
	for (int i = 0; i < nrun; i++)
		pthread_create(&run[i], NULL, runner, (void *)(intptr_t)i);
	for (int i = 0; i < FLIPPERS; i++) {
		fa[i].id = i;
		atomic_store(&fa[i].done, 0);
		pthread_create(&flip[i], NULL, flipper, &fa[i]);
	}
	while (now_s() - t0 < seconds ||
	       (!enough(fa, min_flips) && now_s() - t0 < 10 * seconds + 30))
		usleep(10000);
	atomic_store(&stop, true);
	for (int i = 0; i < FLIPPERS; i++)
		pthread_join(flip[i], NULL);
	for (int i = 0; i < nrun; i++)
		pthread_join(run[i], NULL);
	pthread_join(watch, NULL);
	switchyard_get_stats(&st1);

	printf("%d runners, %d flippers, %.1f s: %lu flips, %lu passes (%lu "
	       "checked), %lu wrong, %lu maps scans, %lu W+X, %llu batches, "
	       "%llu syncs, %llu writes (%llu RWX)\n", nrun, FLIPPERS,
	       now_s() - t0,
	       (unsigned long)flips, (unsigned long)passes,
	       (unsigned long)checked, (unsigned long)wrong,
	       (unsigned long)maps_scans, (unsigned long)wx_seen,
	       (unsigned long long)(st1.patch_batches - st0.patch_batches),
	       (unsigned long long)(st1.sync_calls - st0.sync_calls),
	       (unsigned long long)(st1.write_calls - st0.write_calls),
	       (unsigned long long)(st1.rwx_windows - st0.rwx_windows));
	CHECK_EQ(wrong, 0);
	/* The mprotect fallback opens RWX windows by design. */
	if (!getenv("SY_STRESS_ALLOW_WX") && !want_rwx)
		CHECK_EQ(wx_seen, 0);
	if (flips < min_flips)
		fprintf(stderr, "%lu flips in %.1f s, want at least %lu\n",
			(unsigned long)flips, now_s() - t0, min_flips);
	CHECK(flips >= min_flips);
	for (int i = 0; i < FLIPPERS; i++) {
		if (fa[i].done < min_flips / FLIPPERS / 4)
			fprintf(stderr, "flipper %d: %lu flips\n", i, fa[i].done);
		CHECK(fa[i].done >= min_flips / FLIPPERS / 4);
		CHECK(fa[i].done > 0);
	}
	CHECK(checked > 1000);
	CHECK(maps_scans > 0);
	if (SY_TEST_HAVE_SITES) {
		/* Nothing else changed code meanwhile: each flip was one batch
		 * of all the key's sites, and one sync, whatever their number. */
		CHECK_EQ(st1.patch_batches - st0.patch_batches, flips);
		CHECK_EQ(st1.patched_sites - st0.patched_sites,
			 flips * STRESS_SITES_PER_KEY);
		CHECK_EQ(st1.sync_calls - st0.sync_calls, flips);
		CHECK(st1.write_calls - st0.write_calls >= flips);
		/* The write path the environment asked for was taken. */
		if (want_rwx) {
			CHECK(st1.rwx_windows - st0.rwx_windows > 0);
			CHECK_EQ(st1.rwx_windows - st0.rwx_windows,
				 st1.write_calls - st0.write_calls);
		} else {
			CHECK_EQ(st1.rwx_windows - st0.rwx_windows, 0);
		}
	} else {
		CHECK_EQ(st1.patch_batches - st0.patch_batches, 0);
	}
	for (int k = 0; k < STRESS_KEYS; k++) {
		int n = sy_test_check_sites(stress_key(k));

		if (SY_TEST_HAVE_SITES)
			CHECK_EQ(n, STRESS_SITES_PER_KEY);
	}

	/* Concurrent inc/dec on one key from 0: every 0 <-> 1 transition
	 * patches, under the lock, while the other threads' lock-free fast
	 * paths move the count; it must come out exact, sites included. */
	{
		struct static_key *key = stress_key(3);
		int before;

		if (static_key_enabled(key))
			CHECK_EQ(static_key_disable(key), 0);
		before = static_key_count(key);
		CHECK_EQ(before, 0);
		for (int i = 0; i < 4; i++)
			pthread_create(&id[i], NULL, incdec, key);
		for (int i = 0; i < 4; i++)
			pthread_join(id[i], NULL);
		CHECK_EQ(static_key_count(key), before);
		CHECK_EQ(wrong, 0);
		sy_test_check_sites(key);
	}
	return sy_test_done("stress");
}
