/* SPDX-License-Identifier: MIT */
/*
 * e5_unlock.c - seed 004 (LKML 2015, "locking/pvqspinlock, x86:
 * Optimize PV unlock code path") in user space. There the PV unlock went
 * through PV_CALLEE_SAVE_REGS_THUNK(), which saves and restores 8
 * registers around the C function; Waiman Long hand-wrote the callee-save
 * function instead: it saves only the register its fast path uses (push
 * %rdx; lock cmpxchg), and calls the slow path through another thunk only
 * when the lock has waiters to wake. His table: a 5M lock-unlock loop with
 * 1-4 threads, 134.1 -> 119.3 ms (-11%) with one thread.
 *
 * Here the lock is a futex lock shaped like the PV qspinlock's locked
 * byte: 0 free, 1 locked, 2 locked with sleepers (the pv _Q_SLOW_VAL). A
 * waiter spins a while, then marks the lock 2 and sleeps on the futex (the
 * PV "halt"); the unlock fast path is cmpxchg 1 -> 0, and when it finds 2
 * the slow path stores 0 and wakes one sleeper (the PV "kick"). The lock's
 * fast path is inline (cmpxchg), as queued_spin_lock()'s is; its slow path
 * is an ordinary call on a cold path. The unlock is a static call, three
 * ways:
 *
 *   full    ordinary static call to the C fx_unlock(): the site clobbers
 *           every caller-saved register, so the "register save" is the
 *           compiler's: values live across it sit in the 5 callee-saved
 *           registers left (rbp is the frame pointer) or spill to the stack
 *   thunk   callee-save static call to SWITCHYARD_CALLEE_SAVE_THUNK(
 *           fx_unlock): the thunk pushes and pops 8 registers (and aligns
 *           the stack) around the C function, the kernel's
 *           PV_CALLEE_SAVE_REGS_THUNK
 *   fast    callee-save static call to fx_unlock_fast, hand-written with
 *           SWITCHYARD_CALLEE_SAVE_ASM_ENTRY: push %rdx; lock cmpxchg;
 *           if the lock had sleepers, call the slow path's thunk; the
 *           seed's __raw_callee_save___pv_queued_spin_unlock
 *
 * The loop keeps ten 64-bit values live across the unlock (each iteration
 * mixes them), so register pressure matters, as in the kernel's callers.
 * Threads: 1, 2, 3, 4 on a 2-CPU machine (3 and 4 oversubscribe; thread i
 * is pinned to CPU i mod 2), all on one lock, N pairs per thread. Times:
 * wall ms per run (and, with one thread, its CPU time too: the machine is
 * shared), medians with 95% CIs, variants interleaved (starting
 * variant rotated each round), % change as the median of per-round ratios
 * with its 95% CI, "~" where Mann-Whitney finds no difference.
 * Instructions per uncontended pair: single-stepped on the patched path
 * (seeds.h); "e5_unlock callgrind" runs each loop once for valgrind,
 * where the sites are parked on their detour (and a callee-save detour
 * saves what a C function may change).
 *
 * The perf lane (bench/common/perfctr.h, with SY_BENCH_RAW): counters count
 * the calling thread only, so each worker opens its own group in its thread
 * and counts its own run (seed_team's around hook, outside the thread's
 * CPU-time readings, inside the wall clock's: a few us of ioctl()s in a
 * run of milliseconds). A (threads, variant, round)'s counts are the sum
 * over its workers, per lock/unlock pair of all of them: the spinning of
 * waiters is user space and counts, their futex sleeps do not. Rows under
 * the thread counts' labels ("1" .. "4"); the one-thread run is the same
 * batch for "1" and "1, CPU time", written once.
 *
 *   e5_unlock [callgrind | PAIRS]    PAIRS per thread per run (a
 *                                         quick check; default 5M)
 *
 * Checks (exit 1): the counter under the lock equals threads x N, the lock
 * is free, each thread's ten values equal the same mixing computed without
 * the lock (a register lost across the unlock would show), the sites hold
 * direct calls to the expected targets.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sys/syscall.h>

#include "perfctr.h"
#include "seeds.h"

#if !defined(__x86_64__) || !defined(SY__ARCH_HAVE_STATIC_CALL)
#error "e5_unlock measures x86-64 patched static call sites"
#endif

#ifndef SEED004_N
#define SEED004_N 5000000	/* lock/unlock pairs per thread per run (the seed: 5M) */
#endif
#define ROUNDS 21
#define MAXT 4
#define CG_N 100000
#define SPINS 256		/* a waiter's spins before it sleeps */

struct fx_lock {
	uint32_t v;	/* 0 free, 1 locked, 2 locked with sleepers */
} __attribute__((aligned(64)));

void fx_lock_slow(struct fx_lock *l);
void fx_unlock(struct fx_lock *l);
void fx_unlock_slow(struct fx_lock *l, uint32_t val);
void fx_unlock_fast(struct fx_lock *l);

static long kicks;	/* slow unlocks (wakes), all threads */

static long futex(uint32_t *uaddr, int op, uint32_t val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

__attribute__((noinline, cold)) void fx_lock_slow(struct fx_lock *l)
{
	uint32_t c;

	for (int i = 0; i < SPINS; i++) {
		c = 0;
		if (__atomic_load_n(&l->v, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&l->v, &c, 1, 0,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		__builtin_ia32_pause();
	}
	/* sleep: mark the lock as having sleepers (taken as 2: the unlock
	 * that follows wakes one more, harmless) */
	c = __atomic_exchange_n(&l->v, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		futex(&l->v, FUTEX_WAIT_PRIVATE, 2);
		c = __atomic_exchange_n(&l->v, 2, __ATOMIC_ACQUIRE);
	}
}

static inline __attribute__((always_inline)) void fx_lock(struct fx_lock *l)
{
	uint32_t c = 0;

	if (__builtin_expect(!__atomic_compare_exchange_n(&l->v, &c, 1, 0,
							  __ATOMIC_ACQUIRE,
							  __ATOMIC_RELAXED),
			     0))
		fx_lock_slow(l);
}

/* the slow path: the lock had sleepers (val 2) */
__attribute__((noinline)) void fx_unlock_slow(struct fx_lock *l, uint32_t val)
{
	(void)val;
	__atomic_fetch_add(&kicks, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&l->v, 0, __ATOMIC_RELEASE);
	futex(&l->v, FUTEX_WAKE_PRIVATE, 1);
}

/* the C unlock: fast path, then the slow path if there are sleepers */
__attribute__((noinline)) void fx_unlock(struct fx_lock *l)
{
	uint32_t c = 1;

	if (__builtin_expect(__atomic_compare_exchange_n(&l->v, &c, 0, 0,
							 __ATOMIC_RELEASE,
							 __ATOMIC_RELAXED),
			     1))
		return;
	fx_unlock_slow(l, c);
}

SWITCHYARD_CALLEE_SAVE_THUNK(fx_unlock);
SWITCHYARD_CALLEE_SAVE_THUNK(fx_unlock_slow);

/*
 * The hand-written callee-save unlock (the seed's, with a 32-bit lock
 * word): rdi = lock, rdx = 0 for the cmpxchg, rsi = the value found for
 * the slow path. Only rax and the flags change, as a callee-save function
 * may; the slow path's thunk saves the rest and aligns the stack.
 */
__asm__(".text\n\t"
	SWITCHYARD_CALLEE_SAVE_ASM_ENTRY(fx_unlock_fast)
	"push %rdx\n\t"
	"mov $1, %eax\n\t"
	"xor %edx, %edx\n\t"
	"lock cmpxchg %edx, (%rdi)\n\t"
	"cmp $1, %eax\n\t"
	"jne 1f\n\t"
	"pop %rdx\n\t"
	"ret\n"
	"1:\tpush %rsi\n\t"
	"mov %eax, %esi\n\t"
	"call sy__callee_save_fx_unlock_slow\n\t"
	"pop %rsi\n\t"
	"pop %rdx\n\t"
	"ret\n\t"
	".size fx_unlock_fast, . - fx_unlock_fast");

DEFINE_STATIC_CALL(sc_unlock_full, fx_unlock);
DEFINE_STATIC_CALL_CALLEE_SAVE(sc_unlock_thunk,
			       SWITCHYARD_CALLEE_SAVE(fx_unlock));
DEFINE_STATIC_CALL_CALLEE_SAVE(sc_unlock_fast, fx_unlock_fast);

static struct fx_lock lk;
long seed004_counter;	/* under lk */
static volatile uint64_t seed_in[10] = { 1, 2, 3, 5, 7, 11, 13, 17, 19, 23 };

/* ten values, mixed each iteration: all live across the unlock */
#define LIVE_INIT                                                              \
	uint64_t a = seed_in[0], b = seed_in[1], c = seed_in[2],               \
		 d = seed_in[3], e = seed_in[4], f = seed_in[5],               \
		 g = seed_in[6], h = seed_in[7], j = seed_in[8],               \
		 m = seed_in[9]
#define LIVE_MIX(i)                                                            \
	do {                                                                   \
		a += b ^ (uint64_t)(i);                                        \
		b += c;                                                        \
		c ^= d + 3;                                                    \
		d += e;                                                        \
		e ^= f;                                                        \
		f += g * 5;                                                    \
		g ^= h;                                                        \
		h += j;                                                        \
		j ^= m + 1;                                                    \
		m += a;                                                        \
	} while (0)
#define LIVE_SUM (a * 3 ^ b * 5 ^ c * 7 ^ d * 11 ^ e * 13 ^ f * 17 ^ g * 19 ^ \
		  h * 23 ^ j * 29 ^ m * 31)

#define LOOP(name, unlock)                                                     \
	SEED_BENCHFN name(long n)                                              \
	{                                                                      \
		LIVE_INIT;                                                     \
                                                                               \
		for (long i = 0; i < n; i++) {                                 \
			fx_lock(&lk);                                          \
			seed004_counter++;                                     \
			unlock(&lk);                                           \
			LIVE_MIX(i);                                           \
		}                                                              \
		return (long)LIVE_SUM;                                         \
	}

LOOP(v_full, static_call(sc_unlock_full))
LOOP(v_thunk, static_call(sc_unlock_thunk))
LOOP(v_fast, static_call(sc_unlock_fast))

/* what every thread's values must come to */
__attribute__((noinline)) static long expect(long n)
{
	LIVE_INIT;

	for (long i = 0; i < n; i++) {
		LIVE_MIX(i);
		__asm__ volatile("" : "+r"(a));
	}
	return (long)LIVE_SUM;
}

#define NV 3
static long (*const fns[NV])(long) = { v_full, v_thunk, v_fast };
static const char *const names[NV] = {
	"full: ordinary site, C fx_unlock", "thunk: callee-save, 8 regs saved",
	"fast: callee-save, hand-written"
};

static int failed;

static void check(int v, int threads, long n, const long *res)
{
	long want = expect(n);

	if (seed004_counter != threads * n || lk.v) {
		printf("FAIL: %s, %d threads: counter %ld, want %ld; lock "
		       "word %u\n", names[v], threads, seed004_counter,
		       threads * n, lk.v);
		failed = 1;
	}
	for (int t = 0; t < threads; t++)
		if (res[t] != want) {
			printf("FAIL: %s, thread %d: live values %ld, want "
			       "%ld\n", names[v], t, res[t], want);
			failed = 1;
		}
	seed004_counter = 0;
}

static void check_sites(void)
{
	static const struct {
		struct static_call_key *key;
		void *target;
	} s[NV] = {
		{ &STATIC_CALL_KEY(sc_unlock_full), (void *)fx_unlock },
		{ &STATIC_CALL_KEY(sc_unlock_thunk),
		  (void *)SWITCHYARD_CALLEE_SAVE(fx_unlock) },
		{ &STATIC_CALL_KEY(sc_unlock_fast), (void *)fx_unlock_fast },
	};

	printf("sites as patched:\n");
	for (int v = 0; v < NV; v++) {
		const uint8_t *c = seed_site(s[v].key);
		int32_t rel;

		seed_print_site(names[v], s[v].key);
		if (!seed_site_patched(s[v].key)) {
			printf("note: parked on its detour: measures the "
			       "detour\n");
			continue;
		}
		memcpy(&rel, c + SEED_SC_PAYLOAD + 1, 4);
		if (c[SEED_SC_PAYLOAD] != 0xe8 ||
		    (uintptr_t)(c + SEED_SC_PAYLOAD + 5) + (uintptr_t)(intptr_t)rel !=
			    (uintptr_t)s[v].target) {
			printf("FAIL: %s: no direct call to its target\n",
			       names[v]);
			failed = 1;
		}
	}
}

/* ---- the perf lane, per worker thread ---------------------------------- */

static struct bench_perf wpc[MAXT];	/* the running team's, per worker */
static struct bench_perf tpc[MAXT + 1];	/* per thread count: summed */
static int cur_v, cur_r;		/* the run's slot and round (-1: warm-up) */

static void perf_around(struct seed_team *t, int idx, int begin)
{
	static __thread int opened;

	if (begin) {
		if (!opened) {	/* in the worker: its thread's counters */
			bench_perf_open(&wpc[idx], NV, ROUNDS);
			opened = 1;
		}
		bench_perf_start(&wpc[idx]);
	} else {
		bench_perf_stop(&wpc[idx], cur_v, cur_r, (double)t->iters);
	}
}

/*
 * The team's counts into tpc[threads], summed over its workers: each
 * worker's value is its count per its own pairs, so the sum over threads
 * workers, divided by threads, is the count per pair of all of them.
 * Only when every worker opened the same events (else no perf lines, and
 * it says why); the workers' groups are closed either way.
 */
static void perf_sum(int threads)
{
	struct bench_perf *s = &tpc[threads];
	size_t ns = (size_t)NV * ROUNDS;
	int same = wpc[0].n > 0;

	for (int i = 1; i < threads && same; i++) {
		same = wpc[i].n == wpc[0].n;
		for (int e = 0; same && e < wpc[0].n; e++)
			same = wpc[i].ev[e] == wpc[0].ev[e];
	}
	if (!same && wpc[0].n)
		fprintf(stderr, "perf: %d threads: the workers opened different "
			"events: no perf lines\n", threads);
	memset(s, 0, sizeof(*s));
	if (same) {
		s->val = (double *)calloc(ns * (size_t)wpc[0].n, sizeof(double));
		s->bad = (unsigned char *)calloc(ns, 1);
		s->scaled = (int *)calloc(NV, sizeof(int));
	}
	if (same && s->val && s->bad && s->scaled) {
		s->n = wpc[0].n;
		memcpy(s->ev, wpc[0].ev, sizeof(s->ev));
		s->nslots = NV;
		s->rounds = ROUNDS;
		for (int i = 0; i < threads; i++) {
			for (size_t k = 0; k < ns * (size_t)s->n; k++)
				s->val[k] += wpc[i].val[k] / threads;
			for (size_t k = 0; k < ns; k++)
				s->bad[k] |= wpc[i].bad[k];
			for (int v = 0; v < NV; v++)
				s->scaled[v] += wpc[i].scaled[v];
		}
	} else {
		free(s->val);
		free(s->bad);
		free(s->scaled);
		memset(s, 0, sizeof(*s));
	}
	for (int i = 0; i < threads; i++)
		bench_perf_close(&wpc[i]);
}

static double samples[MAXT + 1][NV][ROUNDS];
static double cpu1[NV][ROUNDS];	/* one thread: its CPU time */
static long kicks_of[MAXT + 1][NV];

static void print_row(const char *label, double (*s)[ROUNDS], const long *k,
		      const struct bench_perf *pc)
{
	struct bench_summary m[NV];

	for (int v = 0; v < NV; v++) {
		double ms[ROUNDS];

		m[v] = bench_summarize(s[v], ROUNDS);
		for (int r = 0; r < ROUNDS; r++)	/* the seed's unit */
			ms[r] = s[v][r] / 1e6;
		bench_raw(label, names[v], "ms/run", ms, ROUNDS);
		if (pc)		/* counts per pair, not per run */
			bench_perf_raw(pc, v, label, names[v], "ns/pair");
	}
	printf("| %s |", label);
	for (int v = 0; v < NV; v++) {
		printf(" %.1f [%.1f, %.1f] |", m[v].median / 1e6, m[v].lo / 1e6,
		       m[v].hi / 1e6);
		for (int b = 0; b < v; b++) {
			struct bench_summary q = seed_ratio(s[v], s[b], ROUNDS);
			double z = bench_mann_whitney_z(s[v], ROUNDS, s[b],
							ROUNDS);

			printf(" %s%+.1f%% [%+.1f, %+.1f] |",
			       bench_verdict(z)[0] == '~' ? "~ " : "",
			       100 * (q.median - 1), 100 * (q.lo - 1),
			       100 * (q.hi - 1));
		}
	}
	if (k)
		printf(" %ld / %ld / %ld |\n", k[0] / ROUNDS, k[1] / ROUNDS,
		       k[2] / ROUNDS);
	else
		printf(" |\n");
}

int main(int argc, char **argv)
{
	double ic[NV];
	long n = SEED004_N;

	if (argc > 1 && strcmp(argv[1], "callgrind")) {
		n = atol(argv[1]);
		if (n < 10) {
			fprintf(stderr, "usage: e5_unlock [callgrind | "
				"PAIRS>=10]\n");
			return 2;
		}
	}
	if (argc > 1 && !strcmp(argv[1], "callgrind")) {
		/* under valgrind: each loop once (sites parked on the detour) */
		for (int v = 0; v < NV; v++) {
			long r = fns[v](CG_N);

			check(v, 1, CG_N, &r);
		}
		printf("ran each loop %d times\n", CG_N);
		return failed;
	}
	seed_banner("seed 004: unlock through an ordinary site, a callee-save "
		    "thunk, a hand-written callee-save fast path");
	check_sites();

	for (int threads = 1; threads <= MAXT; threads++) {
		struct seed_team team;

		seed_team_start(&team, threads);
		team.around = perf_around;
		cur_r = -1;	/* counted, not kept */
		for (int v = 0; v < NV; v++) {	/* warm up */
			cur_v = v;
			seed_team_run(&team, fns[v], n / 10);
			check(v, threads, n / 10, team.result);
		}
		kicks = 0;
		for (int r = 0; r < ROUNDS; r++)
			for (int k = 0; k < NV; k++) {
				int v = (r + k) % NV;
				long k0 = kicks;

				cur_v = v;
				cur_r = r;
				samples[threads][v][r] =
					seed_team_run(&team, fns[v], n);
				if (threads == 1)
					cpu1[v][r] = team.cpu[0];
				kicks_of[threads][v] += kicks - k0;
				check(v, threads, n, team.result);
			}
		seed_team_stop(&team);
		perf_sum(threads);
	}
	for (int v = 0; v < NV; v++)
		ic[v] = seed_icount(fns[v], 200);

	printf("\nms per run of %ld lock/unlock pairs per thread (all threads "
	       "on one lock), %d rounds, interleaved\n", n, ROUNDS);
	printf("| threads | full (ms) | thunk (ms) | thunk vs full | fast (ms)"
	       " | fast vs full | fast vs thunk | wakes per run (full/thunk/"
	       "fast) |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n");
	print_row("1, CPU time", cpu1, NULL, NULL);
	for (int t = 1; t <= MAXT; t++) {
		char label[32];

		snprintf(label, sizeof(label), "%d", t);
		print_row(label, samples[t], kicks_of[t], &tpc[t]);
		bench_perf_close(&tpc[t]);
	}
	printf("instructions per uncontended pair (single-stepped): full %.0f,"
	       " thunk %.0f, fast %.0f\n", ic[0], ic[1], ic[2]);
	printf("(%% change: median of the per-round ratios - 1, 95%% CI; \"~\":"
	       " not different, Mann-Whitney at 5%%; 2 CPUs: 3 and 4 threads "
	       "oversubscribe)\n");
	if (failed) {
		printf("FAILED\n");
		return 1;
	}
	printf("check: counts under the lock add up, every thread's live "
	       "values are right\n");
	return 0;
}
