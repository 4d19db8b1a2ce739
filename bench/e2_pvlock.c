/* SPDX-License-Identifier: MIT */
/*
 * e2_pvlock.c - seed 002 (kernel commit, 2009: "Fix performance
 * regression caused by paravirt_ops on native kernels") in user space.
 * There, spinlock calls through paravirt_ops cost ~2% CPI on native
 * hardware (nopv 100%, pv-nospin 99.9%, pv-spin 102.2% wallclock); the
 * ops table's indirect calls are patched into direct calls, and the
 * question is what each extra level costs. Here a lock/unlock loop (a
 * test-and-set spinlock, e2_pvlock_locks.c, in its own translation unit;
 * `counter++` under the lock) reaches lock and unlock four ways:
 *
 *   (a) direct    plain C calls to tas_lock() / tas_unlock()
 *   (b) ops       through a writable table of function pointers (indirect
 *                 calls: paravirt_ops before patching)
 *   (c) static    static_call() sites: direct calls patched in
 *   (d) native    lock by static call, unlock an inline native
 *                 `movb $0,(%rdi)` (3 bytes in the room of 5)
 *
 * Uncontended (one thread, timed by its CPU time: the machine is shared)
 * and with two threads on the same lock (one per CPU: this machine has 2;
 * wall time from start to the last thread's end). Printed as the seed's table: each variant
 * relative to (a) = 100%, as the median of the per-round ratios
 * (variants interleaved, the starting one rotated each round) with its
 * 95% CI, "~" where a Mann-Whitney test of the times finds no difference
 * from (a). Instructions per lock/unlock pair: single-stepped on the
 * patched path (seeds.h); "e2_pvlock callgrind" runs each loop once
 * for valgrind, where the sites are parked on their detour.
 * SY_BENCH_RAW=FILE dumps the samples for the suite (bench/sybench.py);
 * "e2_pvlock ROUNDS" runs ROUNDS rounds (5..101, default 41).
 *
 * Checks (exit 1): the counter equals the number of lock/unlock pairs of
 * every run, the lock is free at the end, the sites hold what the variants
 * say (a call in (c), the native in (d)).
 */
#define _GNU_SOURCE
#include "seeds.h"
#include "perfctr.h"

#if !defined(__x86_64__) || !defined(SY__ARCH_HAVE_STATIC_CALL)
#error "e2_pvlock measures x86-64 patched static call sites"
#endif

#define N1 10000000	/* pairs per run, one thread */
#define N2 1000000	/* pairs per thread per run, two threads */
#define MAXROUNDS 101
#define CG_N 100000

struct pv_lock_ops {
	void (*lock)(struct tas_lock *l);
	void (*unlock)(struct tas_lock *l);
};
struct pv_lock_ops pv_lock_ops = { tas_lock, tas_unlock };

DEFINE_STATIC_CALL(sc_lock, tas_lock);
DEFINE_STATIC_CALL(sc_unlock, tas_unlock);
DEFINE_STATIC_CALL(sc_unlock_nat, tas_unlock_nat);
SWITCHYARD_STATIC_CALL_NATIVE(tas_unlock_nat, "movb $0, (%rdi)");

static struct tas_lock lk;
long seed002_counter;	/* under lk; global: calls may touch it */

#define LOOP(name, lock, unlock)                                               \
	SEED_BENCHFN name(long n)                                              \
	{                                                                      \
		for (long i = 0; i < n; i++) {                                 \
			lock(&lk);                                             \
			seed002_counter++;                                     \
			unlock(&lk);                                           \
		}                                                              \
		return n;                                                      \
	}

LOOP(v_direct, tas_lock, tas_unlock)
LOOP(v_ops, pv_lock_ops.lock, pv_lock_ops.unlock)
LOOP(v_static, static_call(sc_lock), static_call(sc_unlock))
LOOP(v_native, static_call(sc_lock), static_call(sc_unlock_nat))

#define NV 4
static long (*const fns[NV])(long) = { v_direct, v_ops, v_static, v_native };
static const char *const names[NV] = {
	"(a) direct calls", "(b) ops table (indirect)", "(c) static calls",
	"(d) static lock + native unlock"
};

static int failed;
static struct bench_perf pc;

static void check(int v, long want, const char *how)
{
	if (seed002_counter != want || lk.locked) {
		printf("FAIL: %s, %s: counter %ld, want %ld; lock %s\n",
		       names[v], how, seed002_counter, want,
		       lk.locked ? "held" : "free");
		failed = 1;
	}
	seed002_counter = 0;
}

static void check_sites(void)
{
	static const uint8_t movb[3] = { 0xc6, 0x07, 0x00 };
	const uint8_t *c = seed_site(&STATIC_CALL_KEY(sc_unlock));
	const uint8_t *d = seed_site(&STATIC_CALL_KEY(sc_unlock_nat));

	printf("sites as patched:\n");
	seed_print_site("sc_lock", &STATIC_CALL_KEY(sc_lock));
	seed_print_site("sc_unlock (c)", &STATIC_CALL_KEY(sc_unlock));
	seed_print_site("sc_unlock_nat (d)", &STATIC_CALL_KEY(sc_unlock_nat));
	if (!seed_site_patched(&STATIC_CALL_KEY(sc_lock)) ||
	    !seed_site_patched(&STATIC_CALL_KEY(sc_unlock)) ||
	    !seed_site_patched(&STATIC_CALL_KEY(sc_unlock_nat))) {
		printf("note: sites parked on their detour; (c) and (d) "
		       "measure the detour\n");
		return;
	}
	/* a native ends its site's room (NOPs before it: its last
	 * instruction is the one before the return address) */
	if (c[SEED_SC_PAYLOAD] != 0xe8 ||
	    memcmp(d + SEED_SC_PAYLOAD +
		   seed_site_room(&STATIC_CALL_KEY(sc_unlock_nat)) - 3, movb, 3)) {
		printf("FAIL: (c) must hold a call, (d) the native\n");
		failed = 1;
	}
}

static double s1[NV][MAXROUNDS], s2[NV][MAXROUNDS];
static int rounds = 41;

static void print_row(const char *what, double (*s)[MAXROUNDS], double scale,
		      const char *unit)
{
	printf("| %s |", what);
	for (int v = 0; v < NV; v++) {
		struct bench_summary m = bench_summarize(s[v], rounds);

		bench_raw(what, names[v], "ns/pair", s[v], rounds);

		printf(" %.2f [%.2f, %.2f] %s |", m.median * scale,
		       m.lo * scale, m.hi * scale, unit);
	}
	printf("\n| %s, %% of (a) |", what);
	for (int v = 0; v < NV; v++) {
		struct bench_summary q = seed_ratio(s[v], s[0], rounds);
		double z = bench_mann_whitney_z(s[v], rounds, s[0], rounds);

		if (!v)
			printf(" 100%% |");
		else
			printf(" %s%.1f%% [%.1f, %.1f] |",
			       bench_verdict(z)[0] == '~' ? "~ " : "",
			       100 * q.median, 100 * q.lo, 100 * q.hi);
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	struct seed_team team;
	double ic[NV];

	if (argc > 1 && !strcmp(argv[1], "callgrind")) {
		/* under valgrind: each loop once (sites parked on the detour) */
		for (int v = 0; v < NV; v++) {
			fns[v](CG_N);
			check(v, CG_N, "callgrind run");
		}
		printf("ran each loop %d times\n", CG_N);
		return failed;
	}
	if (argc > 1) {
		rounds = atoi(argv[1]);
		if (rounds < 5 || rounds > MAXROUNDS) {
			fprintf(stderr, "usage: %s [callgrind | ROUNDS 5..%d]\n",
				argv[0], MAXROUNDS);
			return 2;
		}
	}
	seed_banner("seed 002: lock/unlock through direct calls, an ops "
		    "table, static calls, an inline native");
	check_sites();

	for (int v = 0; v < NV; v++) {	/* warm up */
		fns[v](N1 / 10);
		check(v, N1 / 10, "warm-up");
	}
	bench_perf_open(&pc, NV, rounds);	/* the perf lane: one thread */
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < NV; k++) {
			int v = (r + k) % NV;
			double t0;

			bench_perf_start(&pc);
			t0 = seed_cpu_ns();
			fns[v](N1);
			s1[v][r] = (seed_cpu_ns() - t0) / N1;
			bench_perf_stop(&pc, v, r, N1);
			check(v, N1, "one thread");
		}

	seed_team_start(&team, 2);
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < NV; k++) {
			int v = (r + k) % NV;

			s2[v][r] = seed_team_run(&team, fns[v], N2) / (2.0 * N2);
			check(v, 2 * N2, "two threads");
		}
	seed_team_stop(&team);

	for (int v = 0; v < NV; v++) {
		ic[v] = seed_icount(fns[v], 200);
		check(v, 0, "instruction count (in a child)");
	}

	printf("\nns per lock/unlock pair: one thread (CPU time) %d rounds of "
	       "%d pairs; "
	       "two threads %d rounds of 2 x %d pairs (wall time / pairs)\n",
	       rounds, N1, rounds, N2);
	printf("| |");
	for (int v = 0; v < NV; v++)
		printf(" %s |", names[v]);
	printf("\n| --- | --- | --- | --- | --- |\n");
	print_row("1 thread, ns/pair", s1, 1, "");
	for (int v = 0; v < NV; v++)
		bench_perf_raw(&pc, v, "1 thread, ns/pair", names[v], "ns/pair");
	bench_perf_close(&pc);
	print_row("2 threads, ns/pair", s2, 1, "");
	printf("| instructions/pair (single-stepped) |");
	for (int v = 0; v < NV; v++)
		printf(" %.0f |", ic[v]);
	printf("\n| instructions, %% of (a) |");
	for (int v = 0; v < NV; v++)
		printf(" %.1f%% |", 100 * ic[v] / ic[0]);
	printf("\n(%% of (a): median of the per-round ratios, 95%% CI; \"~\": "
	       "not different from (a), Mann-Whitney at 5%%)\n");
	if (failed) {
		printf("FAILED\n");
		return 1;
	}
	printf("check: every run counted exactly its pairs under the lock\n");
	return 0;
}
