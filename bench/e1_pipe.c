/* SPDX-License-Identifier: MIT */
/*
 * e1_pipe.c - seed 001's pipe test in user space (E1 of the suite): two
 * threads pass one byte back and forth through two pipes, with 8 disabled
 * tracepoints on each side of every message, written three ways:
 *
 *   none   no tracepoint (the floor)
 *   flags  `if (flag[i])`: a load, a test and a branch each; the flags on
 *          separate cache lines, as independent subsystems' would be
 *   keys   `if (static_branch_unlikely(&key[i]))`: one TEST each
 *
 * Both threads run on one CPU, as the seed ran its test (`taskset 1 perf
 * stat -r60 perf bench sched pipe`): the program pins itself to the last
 * CPU it may run on before it starts the echo thread, which inherits the
 * mask. A round trip is then two write()s, two read()s and two context
 * switches on that CPU, a few microseconds. Across two vCPUs (the form
 * measured before) each wake-up crossed to the other vCPU and a round trip
 * took 40-100 us with intervals of +-5-10%: what the 16 tracepoints of a
 * round trip cost, a few ns, was lost in that noise, so that form is gone.
 *
 * The variant travels in the byte, so both sides run the same one; the
 * three are interleaved round by round, the first rotated each round,
 * after a warm-up. Every round is M round trips; a sample is ns per round
 * trip (CLOCK_MONOTONIC). Many short rounds, because what resolves a
 * difference of a few ns in ~4 us is the per-round difference between
 * variants that ran within a millisecond of each other (the suite takes
 * its median and interval): the machine's slower drifts cancel there.
 * The seed's perf stat saw the difference mostly in instructions and
 * branches; its time moved by 1.4%. SY_BENCH_RAW=FILE dumps the samples
 * for bench/sybench.py; the loop is named "pipe round trip, one CPU", or
 * "pipe round trip, not pinned" when the CPU mask cannot be set (then the
 * threads run where the scheduler puts them, and the output says why).
 * And seed 001's getppid() example, with no tracepoint, a flag check or a
 * static key, for its size.
 *
 *   e1_pipe [ROUNDS [M]]      defaults 4001 and 125
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <switchyard.h>

#include "perfctr.h"
#include "stats.h"

#define NTP 8
#define NV 3

DEFINE_STATIC_KEY_ARRAY_FALSE(tp_key, NTP);
static struct {
	volatile int on;
	char pad[60];
} __attribute__((aligned(64))) tp_flag[NTP];
static unsigned long fired;	/* never: every tracepoint is off */

void e1_tp_flags(void);
void e1_tp_keys(void);

__attribute__((noinline, cold)) static void trace(int i)
{
	__atomic_add_fetch(&fired, (unsigned long)i + 1, __ATOMIC_RELAXED);
}

/* 8 tracepoints of one kind, written out (a loop over the flags would
 * be smaller code than 8 separate tracepoints in a real function) */
#define TP_FLAG(i)                                                             \
	do {                                                                   \
		if (__builtin_expect(tp_flag[i].on, 0))                        \
			trace(i);                                              \
	} while (0)
#define TP_FLAGS()                                                             \
	do {                                                                   \
		TP_FLAG(0); TP_FLAG(1); TP_FLAG(2); TP_FLAG(3);                \
		TP_FLAG(4); TP_FLAG(5); TP_FLAG(6); TP_FLAG(7);                \
	} while (0)
#define TP_KEY(i)                                                              \
	do {                                                                   \
		if (static_branch_unlikely(&tp_key[i]))                        \
			trace(i);                                              \
	} while (0)
#define TP_KEYS()                                                              \
	do {                                                                   \
		TP_KEY(0); TP_KEY(1); TP_KEY(2); TP_KEY(3);                    \
		TP_KEY(4); TP_KEY(5); TP_KEY(6); TP_KEY(7);                    \
	} while (0)

/* the two kinds in functions of their own, whose sizes (nm -S) are the
 * seed's other figure: the bytes tracepoints add to a function */
__attribute__((noinline, used)) void e1_tp_flags(void)
{
	TP_FLAGS();
}

__attribute__((noinline, used)) void e1_tp_keys(void)
{
	TP_KEYS();
}

/*
 * Seed 001's own example: getppid() with one tracepoint in front ("I am
 * the true branch"), its size the seed's text figure (80 bytes with a
 * flag check, 16 fewer with a jump label). The parent's pid is read
 * through the current task's parent pointer, as the system call does
 * under rcu_read_lock(); the three forms differ only in the tracepoint.
 * nm -S reads their sizes (the branch's printf goes to a .cold part).
 */
struct e1_task {
	struct e1_task *real_parent;
	int tgid;
};
static struct e1_task e1_init_task = { &e1_init_task, 1 };
static struct e1_task e1_task = { &e1_init_task, 2 };
static struct e1_task *volatile e1_current = &e1_task;
DEFINE_STATIC_KEY_FALSE(e1_ppid_key);
static volatile int e1_ppid_flag;

int e1_getppid_none(void);
int e1_getppid_flag(void);
int e1_getppid_key(void);

static inline int e1_ppid(void)
{
	struct e1_task *p = __atomic_load_n(&e1_current->real_parent,
					    __ATOMIC_ACQUIRE);

	return p->tgid;
}

__attribute__((noinline, used)) int e1_getppid_none(void)
{
	return e1_ppid();
}

__attribute__((noinline, used)) int e1_getppid_flag(void)
{
	if (__builtin_expect(e1_ppid_flag, 0))
		printf("I am the true branch\n");
	return e1_ppid();
}

__attribute__((noinline, used)) int e1_getppid_key(void)
{
	if (static_branch_unlikely(&e1_ppid_key))
		printf("I am the true branch\n");
	return e1_ppid();
}

__attribute__((noinline)) static void path(unsigned char v)
{
	if (v == 1)
		e1_tp_flags();
	else if (v == 2)
		e1_tp_keys();
}

static int ping[2], pong[2];

/* Both threads on one CPU, as the seed's taskset: this thread's mask set
 * to the last CPU it may run on (CPU 0 takes more of the machine's
 * interrupts), before the echo thread exists, which inherits it. The CPU,
 * or -1 with errno set. */
static int pin_one_cpu(void)
{
	cpu_set_t set;
	int cpu = -1;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &set))
			cpu = i;
	if (cpu < 0) {
		errno = EINVAL;
		return -1;
	}
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -1 : cpu;
}

static void *echo(void *arg)
{
	unsigned char c;

	(void)arg;
	while (read(ping[0], &c, 1) == 1) {
		path(c);
		if (write(pong[1], &c, 1) != 1 || c == 0xff)
			break;
	}
	return NULL;
}

/* the perf lane: this thread's counters, user space (the echo thread's
 * half of the round trip and the kernel's pipe work are not counted) */
static struct bench_perf pc;

/* m round trips of variant v; the counters' sample (v, r) (r < 0: a
 * warm-up, not recorded) */
static double round_trips(unsigned char v, long m, int r)
{
	double t0, t1;
	unsigned char c;

	bench_perf_start(&pc);
	t0 = bench_now_ns();
	for (long i = 0; i < m; i++) {
		path(v);
		if (write(ping[1], &v, 1) != 1 || read(pong[0], &c, 1) != 1 ||
		    c != v) {
			fprintf(stderr, "e1_pipe: the pipe broke\n");
			exit(1);
		}
	}
	t1 = bench_now_ns();
	bench_perf_stop(&pc, v, r, (double)m);
	return (t1 - t0) / (double)m;
}

int main(int argc, char **argv)
{
	static const char *const names[NV] = {
		"no tracepoint", "8 flag checks per side",
		"8 static keys per side",
	};
	int rounds = argc > 1 ? atoi(argv[1]) : 4001;
	long m = argc > 2 ? atol(argv[2]) : 125;
	const char *loop = "pipe round trip, one CPU";
	int cpu;
	double *s = malloc(sizeof(*s) * NV * (size_t)(rounds > 0 ? rounds : 1));
	unsigned char bye = 0xff, c;
	pthread_t t;

	if (rounds < 3 || m < 1 || !s || pipe(ping) || pipe(pong)) {
		fprintf(stderr, "usage: e1_pipe [ROUNDS>=3 [M>=1]]\n");
		return 2;
	}
	if (e1_getppid_none() != 1 || e1_getppid_flag() != 1 ||
	    e1_getppid_key() != 1) {
		fprintf(stderr, "e1_pipe: getppid() forms disagree\n");
		return 1;
	}
	cpu = pin_one_cpu();
	if (cpu < 0) {
		fprintf(stderr, "e1_pipe: cannot pin to one CPU (%s): the "
			"threads run unpinned\n", strerror(errno));
		loop = "pipe round trip, not pinned";
	}
	bench_perf_open(&pc, NV, rounds);
	if (pthread_create(&t, NULL, echo, NULL)) {
		fprintf(stderr, "e1_pipe: cannot start the echo thread\n");
		return 1;
	}
	for (int v = 0; v < NV; v++)	/* warm up */
		round_trips((unsigned char)v, m / 4 + 1, -1);
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < NV; k++) {
			int v = (r + k) % NV;

			s[v * rounds + r] = round_trips((unsigned char)v, m, r);
		}
	if (write(ping[1], &bye, 1) != 1 || read(pong[0], &c, 1) != 1)
		return 1;
	pthread_join(t, NULL);
	if (cpu >= 0)
		printf("seed 001's pipe test, both threads on CPU %d: ns per "
		       "round trip, %d rounds of %ld, interleaved\n", cpu,
		       rounds, m);
	else
		printf("seed 001's pipe test, threads not pinned: ns per round "
		       "trip, %d rounds of %ld, interleaved\n", rounds, m);
	for (int v = 0; v < NV; v++) {
		struct bench_summary q = bench_summarize(s + v * rounds,
							 (size_t)rounds);

		printf("  %-26s %8.1f [%8.1f, %8.1f]\n", names[v], q.median,
		       q.lo, q.hi);
		bench_raw(loop, names[v], "ns/round trip", s + v * rounds,
			  rounds);
		bench_perf_raw(&pc, v, loop, names[v], "ns/round trip");
	}
	/* per round, each variant minus the one it ran beside: what the
	 * suite's verdict rests on */
	printf("per-round difference, median [95%% CI], ns per round trip:\n");
	for (int v = 1; v < NV; v++) {
		static const int base[NV] = { 0, 0, 1 };
		double *d = malloc(sizeof(*d) * (size_t)rounds);
		struct bench_summary q;

		if (!d)
			return 1;
		for (int r = 0; r < rounds; r++)
			d[r] = s[v * rounds + r] - s[base[v] * rounds + r];
		q = bench_summarize(d, (size_t)rounds);
		printf("  %s - %s: %+.1f [%+.1f, %+.1f]\n", names[v],
		       names[base[v]], q.median, q.lo, q.hi);
		free(d);
	}
	bench_perf_close(&pc);
	free(s);
	if (fired) {
		fprintf(stderr, "e1_pipe: a disabled tracepoint fired\n");
		return 1;
	}
	return 0;
}
