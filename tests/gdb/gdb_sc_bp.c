/* SPDX-License-Identifier: MIT */
/*
 * gdb_sc_bp.c - a debugger's breakpoint on a static call site keeps
 * working through updates (run by check_gdb_sc_bp.sh under gdb; see
 * there).
 *
 *   gdb_sc_bp list        the site's offsets in site(): arm, guard, call
 *   gdb_sc_bp none        no debugger (a control of the program)
 *   gdb_sc_bp before      gdb set the breakpoint before `run` (over the
 *                         compiled site, before registration)
 *   gdb_sc_bp during      gdb plants it at marker_insert(), over the
 *                         patched site
 *   gdb_sc_bp busy        the same, on the guard of the patched site:
 *                         every update while it is there fails with
 *                         -EBUSY and changes nothing (the debugger would
 *                         restore the TEST that lets threads into the
 *                         payload being rewritten), but one to the
 *                         current target (nothing to rewrite)
 *   gdb_sc_bp race        as during, on the call, but instead of the
 *                         sequence another thread updates the call from
 *                         fa to fb and back while this one runs the site
 *                         (at least RACE_PASSES times): every update succeeds, every
 *                         pass calls fa or fb exactly once, whether gdb
 *                         steps it over the breakpoint before, during or
 *                         after an update rewrites the call's rel32
 * The program updates the call to another function, to NULL, to RET0 and
 * back, and after every update runs the site PASSES times, checking that
 * each pass called the key's target exactly once (or nothing, for NULL)
 * and returned its result. At marker_delete() gdb deletes the breakpoint:
 * the site must then hold a whole form (guard TEST over the current
 * target's payload, or the JMP to its detour), and after two more updates
 * it must be patched (guard TEST, payload the call): nothing is left
 * parked on the detour for good. gdb counts the breakpoint's hits; the
 * script compares them with what this program reports (CALL_PASSES: passes
 * whose target is a function, all of them and those after marker_insert()).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "sy_test.h"

#define PASSES 3
#define RACE_UPDATES 100
#define RACE_PASSES 50

static volatile long hits_a, hits_b;

__attribute__((noinline)) long fa(long x)
{
	hits_a++;
	return x + 1;
}

__attribute__((noinline)) long fb(long x)
{
	hits_b++;
	return x + 2;
}

DEFINE_STATIC_CALL(gsc, fa);

__attribute__((noinline, used)) long site(long x)
{
	return static_call(gsc)(x);	/* SITE */
}

__attribute__((noinline, used)) void marker_insert(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline, used)) void marker_delete(void)
{
	__asm__ volatile("" ::: "memory");
}

static const unsigned char *arm;	/* the site in site() */
static long (*cur)(long);		/* what the key should call */
static int call_passes;			/* passes that called a function */
static int call_passes_late;		/* ... after marker_insert() */
static bool inserted;

static void find_site(void)
{
	const unsigned char *p = (const unsigned char *)(uintptr_t)site;

	/* 64 48 c7|f7 04 25: the arm (a breakpoint may sit on its first
	 * byte when gdb planted one before run) */
	for (int i = 0; i < 256; i++)
		if ((p[i] == 0x64 || p[i] == 0xcc) && p[i + 1] == 0x48 &&
		    (p[i + 2] == 0xc7 || p[i + 2] == 0xf7) && p[i + 3] == 0x04 &&
		    p[i + 4] == 0x25) {
			arm = p + i;
			return;
		}
	printf("gdb_sc_bp: no site found in site()\n");
	exit(1);
}

/* PASSES passes through the site: each calls cur once, or nothing */
static void run(const char *what)
{
	for (int i = 0; i < PASSES; i++) {
		long a = hits_a, b = hits_b, r = site(10);

		if (cur == fa) {
			CHECK_EQ(r, 11);
			CHECK_EQ(hits_a - a, 1);
			CHECK_EQ(hits_b - b, 0);
		} else if (cur == fb) {
			CHECK_EQ(r, 12);
			CHECK_EQ(hits_a - a, 0);
			CHECK_EQ(hits_b - b, 1);
		} else {
			if (cur)	/* RET0 */
				CHECK_EQ(r, 0);
			CHECK_EQ(hits_a - a, 0);
			CHECK_EQ(hits_b - b, 0);
		}
		if (cur == fa || cur == fb) {
			call_passes++;
			call_passes_late += inserted;
		}
	}
	if (sy_test_failures)
		printf("gdb_sc_bp: after %s: %d failed\n", what,
		       sy_test_failures);
}

static void update(long (*f)(long), int want, const char *what)
{
	int r = static_call_update(gsc, f);

	if (f == cur)	/* nothing to rewrite: never refused */
		want = 0;

	CHECK_EQ(r, want);
	if (r != want)
		printf("gdb_sc_bp: update to %s returned %d\n", what, r);
	if (!r)
		cur = f;
	CHECK((uintptr_t)static_call_query(gsc) == (uintptr_t)cur);
	run(what);
}

static volatile int race_done;	/* the updater finished */
static volatile long race_passes;	/* the site's, so far */
static int race_failed;

static volatile long race_go;		/* the pass about to start */

/* At least RACE_UPDATES updates, each started as the other thread starts a
 * pass (so that updates meet the passes stopped at the breakpoint, not
 * only the detour of a guard an update keeps on JMP), and on until the
 * site has run RACE_PASSES times; then fa. The other thread makes its
 * passes whatever the scheduler does, and waits for race_done. */
static void *updater(void *arg)
{
	long seen = 0;
	int i;

	(void)arg;
	for (i = 0; i < RACE_UPDATES ||
		    __atomic_load_n(&race_passes, __ATOMIC_RELAXED) < RACE_PASSES;
	     i++) {
		while (__atomic_load_n(&race_go, __ATOMIC_ACQUIRE) == seen)
			;
		seen = race_go;
		if (static_call_update(gsc, i % 2 ? fa : fb))
			race_failed++;
	}
	if (static_call_update(gsc, fa))
		race_failed++;
	__atomic_store_n(&race_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Passes through the site until the updater is done (joined: no reliance
 * on the scheduler), each calling fa or fb exactly once. */
static void race(void)
{
	pthread_t t;
	long passes = 0;

	CHECK_EQ(pthread_create(&t, NULL, updater, NULL), 0);
	while (!__atomic_load_n(&race_done, __ATOMIC_ACQUIRE)) {
		long a = hits_a, b = hits_b, r;

		__atomic_store_n(&race_go, passes + 1, __ATOMIC_RELEASE);
		r = site(10);
		CHECK((r == 11 && hits_a - a == 1 && hits_b == b) ||
		      (r == 12 && hits_b - b == 1 && hits_a == a));
		passes++;
		__atomic_store_n(&race_passes, passes, __ATOMIC_RELAXED);
	}
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(race_failed, 0);
	cur = fa;	/* the updater's last */
	CHECK((uintptr_t)static_call_query(gsc) == (uintptr_t)fa);
	printf("gdb_sc_bp: %ld passes during %d updates\n", passes,
	       RACE_UPDATES);
	run("race");
}

/* The site holds a whole form, with no breakpoint over it: the guard
 * TEST over the current target's payload, or the JMP to the detour. */
static void check_whole(bool patched)
{
	const unsigned char *g = arm + 13, *pl = arm + 18;
	uint8_t want[5];

	CHECK(arm[0] == 0x64 && arm[2] == 0xc7);
	CHECK(g[0] == 0xa9 || g[0] == 0xe9);
	if (patched)
		CHECK_EQ(g[0], 0xa9);
	if (g[0] != 0xa9)
		return;
	want[0] = 0xe8;
	if (cur == fa || cur == fb) {
		int32_t rel = (int32_t)((intptr_t)(uintptr_t)cur -
					(intptr_t)(uintptr_t)(pl + 5));

		memcpy(want + 1, &rel, 4);
	} else if (cur) {	/* RET0: nopl (%rax), xor %eax,%eax */
		memcpy(want, "\x0f\x1f\x00\x31\xc0", 5);
	} else {		/* NULL: nopl 0(%rax,%rax,1) */
		memcpy(want, "\x0f\x1f\x44\x00\x00", 5);
	}
	CHECK(!memcmp(pl, want, 5));
	if (memcmp(pl, want, 5))
		printf("gdb_sc_bp: payload %02x %02x %02x %02x %02x\n", pl[0],
		       pl[1], pl[2], pl[3], pl[4]);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "none";
	int busy = !strcmp(mode, "busy") ? -EBUSY : 0;
	long (*ret0)(long) = (long (*)(long))(uintptr_t)__static_call_return0;

	find_site();
	if (!strcmp(mode, "list")) {
		printf("site %td %td %td\n",
		       arm - (const unsigned char *)(uintptr_t)site,
		       arm + 13 - (const unsigned char *)(uintptr_t)site,
		       arm + 18 - (const unsigned char *)(uintptr_t)site);
		return 0;
	}
	if (!strcmp(mode, "none") && arm[13] != 0xa9)
		SKIP("static call sites are not patched in this process "
		     "(no rseq?): nothing for a breakpoint to get in the way of");
	cur = fa;
	run("start");
	marker_insert();
	inserted = true;
	if (!strcmp(mode, "race")) {
		race();
	} else {
		update(fb, busy, "fb");
		update(NULL, busy, "NULL");
		update(ret0, busy, "RET0");
		update(fa, busy, "fa");
		update(fb, busy, "fb again");
	}
	/* What gdb compares with its count of hits on the call. */
	printf("CALL_PASSES %d %d\n", call_passes, call_passes_late);
	marker_delete();
	check_whole(false);
	run("delete");
	update(fa, 0, "fa after delete");
	update(fb, 0, "fb after delete");
	check_whole(true);
	return sy_test_done("gdb_sc_bp");
}
