/* SPDX-License-Identifier: MIT */
/*
 * seeds.h - what the three reproductions of the seed documents share
 * (e3_popf.c, e2_pvlock.c, e5_unlock.c):
 *
 *  - the machine line every report starts with;
 *  - the bytes of a static call's sites as this process runs them (the
 *    record table of <switchyard/arch/x86_64_static_call.h>), to show what
 *    the registry wrote and whether a site is patched or parked;
 *  - an instruction counter for the patched path: this machine has no
 *    hardware counters, and under valgrind the sites park on their detour
 *    (valgrind does not implement rseq, so libc registers none and the
 *    library does not patch). seed_icount() single-steps a forked copy of
 *    the process with ptrace instead. A trap inside a site's rseq critical
 *    section would send the thread to the detour at its next return to
 *    user space (the trap stops it: a preemption), so at every stop the
 *    counter clears the thread's rseq->rseq_cs: the section is not armed
 *    when the thread resumes. The copy runs alone and nothing updates a
 *    key meanwhile, so the protocol has nothing to protect there;
 *  - ratios of interleaved samples, round by round, for "% of the
 *    baseline" with a confidence interval;
 *  - a team of threads started and stopped together, timed by the wall
 *    clock.
 *
 * Define _GNU_SOURCE before any include.
 */
#ifndef SY_BENCH_SEEDS_H
#define SY_BENCH_SEEDS_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <switchyard.h>

#include "stats.h"

#if defined(__GNUC__) && !defined(__clang__)
#define SEED_NO_ICF __attribute__((no_icf))
#else
#define SEED_NO_ICF
#endif

#define SEED_BENCHFN __attribute__((noinline, aligned(64))) static long

/* ---- the machine -------------------------------------------------------- */

static inline void seed_banner(const char *what)
{
	char model[256] = "unknown", line[512];
	FILE *f = fopen("/proc/cpuinfo", "r");
	struct utsname u;
	double load[3] = { 0, 0, 0 };

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "model name", 10)) {
				char *p = strchr(line, ':');

				if (p) {
					snprintf(model, sizeof(model), "%s",
						 p + 2);
					model[strcspn(model, "\n")] = 0;
				}
				break;
			}
		fclose(f);
	}
	uname(&u);
	if (getloadavg(load, 3) < 0)
		load[0] = -1;
	printf("== %s\n", what);
	printf("CPU: %s, %ld CPUs online; %s %s; compiler %s; load average "
	       "%.2f at start\n", model, sysconf(_SC_NPROCESSORS_ONLN),
	       u.sysname, u.release, __VERSION__, load[0]);
}

/*
 * CPU time of the calling thread, in ns: what a single-threaded loop is
 * timed with here. The machine is shared (2 CPUs, other work running):
 * wall time would also count the time the thread waited for a CPU.
 */
static inline double seed_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ---- the sites of a static call ------------------------------------------ */

#ifdef SY__ARCH_HAVE_STATIC_CALL
struct seed_sc_rec {
	const struct sy__sc_meta *meta;
	int32_t code;	/* the arm, relative to this field */
	uint32_t flags;
};
extern struct seed_sc_rec __start_sy_static_call_sites[]
	__attribute__((visibility("hidden")));
extern struct seed_sc_rec __stop_sy_static_call_sites[]
	__attribute__((visibility("hidden")));

#define SEED_SC_GUARD 13	/* arm: test/mov $imm32,%fs:disp32 */
#define SEED_SC_PAYLOAD 18	/* guard: TEST32 (patched) / CALL32 (parked) */

/* The arm of key's first site in this executable (NULL if none). */
static inline const uint8_t *seed_site(struct static_call_key *key)
{
	for (struct seed_sc_rec *r = __start_sy_static_call_sites;
	     r < __stop_sy_static_call_sites; r++)
		if (r->meta->key == key)
			return (const uint8_t *)&r->code + r->code;
	return NULL;
}

static inline unsigned seed_site_room(struct static_call_key *key)
{
	for (struct seed_sc_rec *r = __start_sy_static_call_sites;
	     r < __stop_sy_static_call_sites; r++)
		if (r->meta->key == key)
			return (unsigned)(r->meta->kind & 15);
	return 0;
}

/* Whether key's site holds its payload (guard TEST32) or goes through its
 * detour (guard CALL32). */
static inline int seed_site_patched(struct static_call_key *key)
{
	const uint8_t *c = seed_site(key);

	return c && c[SEED_SC_GUARD] == 0xa9;
}

/* Prints the payload of key's site as it is now, and whether it runs. */
static inline void seed_print_site(const char *name,
				   struct static_call_key *key)
{
	const uint8_t *c = seed_site(key);
	unsigned room = seed_site_room(key);

	if (!c) {
		printf("  %-28s no site\n", name);
		return;
	}
	printf("  %-28s %s, room %u, payload:", name,
	       c[SEED_SC_GUARD] == 0xa9 ? "patched" : "parked on its detour",
	       room);
	for (unsigned i = 0; i < room; i++)
		printf(" %02x", c[SEED_SC_PAYLOAD + i]);
	printf("\n");
}
#else
#define seed_site_patched(key) ((void)(key), 0)
#define seed_print_site(name, key) ((void)(key), printf("  %s: no patched sites in this build\n", name))
#endif

/* ---- instructions, single-stepped ---------------------------------------- */

extern const ptrdiff_t __rseq_offset __attribute__((weak));

/* Instructions that f(k) executes in a forked copy of this process (plus a
 * constant: the ends of the two raise() calls around it); -1 on failure. */
static inline long seed_icount_raw(long (*f)(long), long k)
{
	uintptr_t tp, rseq_cs = 0;
	long steps = 0;
	int st;
	pid_t p;

	__asm__("mov %%fs:0, %0" : "=r"(tp));
	if (&__rseq_offset)
		rseq_cs = tp + (uintptr_t)__rseq_offset + 8;
	fflush(stdout);
	p = fork();
	if (p < 0)
		return -1;
	if (!p) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		raise(SIGSTOP);
		f(k);
		raise(SIGSTOP);
		_exit(0);
	}
	if (waitpid(p, &st, 0) != p || !WIFSTOPPED(st))
		return -1;
	for (;;) {
		if (ptrace(PTRACE_SINGLESTEP, p, 0, 0))
			goto fail;
		if (waitpid(p, &st, 0) != p || !WIFSTOPPED(st))
			goto fail;
		if (WSTOPSIG(st) == SIGSTOP)
			break;
		if (WSTOPSIG(st) != SIGTRAP)
			goto fail;
		steps++;
		/* not armed when it resumes: no abort to the detour */
		if (rseq_cs)
			ptrace(PTRACE_POKEDATA, p, (void *)rseq_cs, 0);
	}
	kill(p, SIGKILL);
	waitpid(p, &st, 0);
	return steps;
fail:
	kill(p, SIGKILL);
	waitpid(p, &st, 0);
	return -1;
}

/* Instructions per iteration of f: (count(2k) - count(k)) / k. */
static inline double seed_icount(long (*f)(long), long k)
{
	long a = seed_icount_raw(f, k), b = seed_icount_raw(f, 2 * k);

	return a < 0 || b < 0 ? -1 : (double)(b - a) / (double)k;
}

/* ---- ratios of interleaved samples --------------------------------------- */

/* Median and 95% CI of x[r] / base[r] over the rounds. */
static inline struct bench_summary seed_ratio(const double *x,
					      const double *base, int rounds)
{
	double *q = (double *)malloc((size_t)rounds * sizeof(*q));
	struct bench_summary s;

	for (int r = 0; r < rounds; r++)
		q[r] = x[r] / base[r];
	s = bench_summarize(q, (size_t)rounds);
	free(q);
	return s;
}

/* ---- a team of threads ---------------------------------------------------- */

#define SEED_MAX_THREADS 8

struct seed_team {
	int n;
	pthread_t tid[SEED_MAX_THREADS];
	pthread_barrier_t start, end;
	long (*fn)(long);
	long iters;
	long result[SEED_MAX_THREADS];
	double cpu[SEED_MAX_THREADS];	/* each thread's CPU time, ns */
	int quit;
	/* optional, set after seed_team_start(): called in worker idx just
	 * before (begin 1) and just after (begin 0) its timed run - a
	 * thread's own perf counters can be opened and read only there */
	void (*around)(struct seed_team *t, int idx, int begin);
};

struct seed_worker {
	struct seed_team *team;
	int idx;
};

static void *seed_worker_main(void *arg)
{
	struct seed_worker *w = (struct seed_worker *)arg;
	struct seed_team *t = w->team;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET((int)(w->idx % (ncpu > 0 ? ncpu : 1)), &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	for (;;) {
		pthread_barrier_wait(&t->start);
		if (t->quit)
			break;
		if (t->around)
			t->around(t, w->idx, 1);
		double c0 = seed_cpu_ns();

		t->result[w->idx] = t->fn(t->iters);
		t->cpu[w->idx] = seed_cpu_ns() - c0;
		if (t->around)
			t->around(t, w->idx, 0);
		pthread_barrier_wait(&t->end);
	}
	free(w);
	return NULL;
}

/* n threads, thread i pinned to CPU i mod the CPUs online. */
static inline void seed_team_start(struct seed_team *t, int n)
{
	memset(t, 0, sizeof(*t));
	t->n = n;
	pthread_barrier_init(&t->start, NULL, (unsigned)n + 1);
	pthread_barrier_init(&t->end, NULL, (unsigned)n + 1);
	for (int i = 0; i < n; i++) {
		struct seed_worker *w = (struct seed_worker *)malloc(sizeof(*w));

		w->team = t;
		w->idx = i;
		if (pthread_create(&t->tid[i], NULL, seed_worker_main, w)) {
			perror("pthread_create");
			exit(2);
		}
	}
}

/* Every thread runs fn(iters) once, together; returns the wall time in ns
 * from the start barrier to the last thread's end. */
static inline double seed_team_run(struct seed_team *t, long (*fn)(long),
				   long iters)
{
	double t0;

	t->fn = fn;
	t->iters = iters;
	pthread_barrier_wait(&t->start);
	t0 = bench_now_ns();
	pthread_barrier_wait(&t->end);
	return bench_now_ns() - t0;
}

static inline void seed_team_stop(struct seed_team *t)
{
	t->quit = 1;
	pthread_barrier_wait(&t->start);
	for (int i = 0; i < t->n; i++)
		pthread_join(t->tid[i], NULL);
	pthread_barrier_destroy(&t->start);
	pthread_barrier_destroy(&t->end);
}

/* ---- seed 002's lock (e2_pvlock_locks.c) ------------------------------ */

/* A test-and-set spinlock: xchg to take it, a byte store to release it
 * (`movb $0,(%rdi)`: the inline native of tas_unlock_nat). Waiters spin on
 * a load with pause and yield the CPU now and then (2 CPUs, and other work
 * may preempt the holder). */
struct tas_lock {
	unsigned char locked;
} __attribute__((aligned(64)));

void tas_lock(struct tas_lock *l);
void tas_unlock(struct tas_lock *l);
void tas_unlock_nat(struct tas_lock *l);	/* the same; has a native */

#endif /* SY_BENCH_SEEDS_H */
