/* SPDX-License-Identifier: MIT */
/*
 * perfctr.h - the suite's "perf" lane: the calling thread's counters
 * through perf_event_open(2), read once per measured batch, written to
 * the raw file (SY_BENCH_RAW) beside the clock samples.
 *
 * What opens: a group led by cycles, with instructions, branches,
 * branch-misses and L1I read misses, counting user space of the calling
 * thread only. An event that cannot join the group (a PMU without it, or
 * without a free counter for it) is opened alone, as its own group; one
 * that cannot open at all is left out and named on stderr. When nothing
 * opens (no PMU: these KVM guests answer ENOENT for every hardware
 * event), every call below is a no-op and the program writes clock rows
 * only: the lane is absent, never an error.
 *
 * SY_BENCH_PERF selects the events:
 *   unset, "hw"   the hardware set above
 *   "off", "0"    none
 *   "sw"          software events (page-faults, task-clock,
 *                 minor-faults): the same code path,
 *                 open, enable, disable, read, record, on a machine
 *                 without a PMU; their rows say what they are
 *   a,b,c         those events by name (either set), e.g.
 *                 "task-clock,cycles,page-faults" (a group whose leader
 *                 cannot open: the fallback)
 * Counters open only when SY_BENCH_RAW is set: nothing else reads them.
 *
 * Use, around a batch of n iterations (slot: a variant, or a variant
 * and condition; round: the round):
 *
 *	bench_perf_open(&pc, nslots, rounds);
 *	...
 *	bench_perf_start(&pc);
 *	t0 = clock; <the batch>; t1 = clock;
 *	bench_perf_stop(&pc, slot, round, n);
 *	...
 *	bench_raw(loop, variant, "ns/call", s, rounds);
 *	bench_perf_raw(&pc, slot, loop, variant, "ns/call");
 *	bench_perf_close(&pc);
 *
 * A program that measures the same slots again at another point (a
 * grid of sizes) calls bench_perf_reset(&pc) before each point.
 *
 * The counters are enabled just before the clock's first reading and
 * disabled just after its last: the clock does not time the ioctl()s, and
 * the counts include the few user-space instructions of clock_gettime()
 * (vDSO) and of the ioctl() wrappers, constant per batch and divided by
 * its n.
 */
#ifndef SY_BENCH_PERFCTR_H
#define SY_BENCH_PERFCTR_H

#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BENCH_PERF_MAX 8

struct bench_perf_event {
	const char *name;	/* perf(1)'s name of the event */
	const char *unit;	/* what one count is, for the row's unit */
	uint32_t type;
	uint64_t config;
	int hw;			/* a hardware event (else software) */
};

#define BENCH_PERF_L1I_MISS                                                    \
	(PERF_COUNT_HW_CACHE_L1I | (PERF_COUNT_HW_CACHE_OP_READ << 8) |        \
	 (PERF_COUNT_HW_CACHE_RESULT_MISS << 16))

/* each set's leader first: the group is read through it */
static const struct bench_perf_event bench_perf_events[] = {
	{ "cycles", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 1 },
	{ "instructions", "instructions", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_INSTRUCTIONS, 1 },
	{ "branches", "branches", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 1 },
	{ "branch-misses", "branch-misses", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_MISSES, 1 },
	{ "L1-icache-load-misses", "L1I misses", PERF_TYPE_HW_CACHE,
	  BENCH_PERF_L1I_MISS, 1 },
	/* the software set leads with page-faults so that its one count
	 * that is never 0, task-clock, is a member: found by its id in the
	 * group's read, as instructions are in the hardware set. Not
	 * context-switches or cpu-migrations: raised in the kernel,
	 * exclude_kernel (below) drops every one of them; not cpu-clock:
	 * this KVM guest (6.18) gives it 0 for short batches */
	{ "page-faults", "page-faults", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_PAGE_FAULTS, 0 },
	{ "task-clock", "task-clock ns", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_TASK_CLOCK, 0 },
	{ "minor-faults", "minor-faults", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_PAGE_FAULTS_MIN, 0 },
};
#define BENCH_PERF_NEVENTS                                                     \
	(int)(sizeof(bench_perf_events) / sizeof(bench_perf_events[0]))

/* one group's read(): PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED |
 * TOTAL_TIME_RUNNING | ID */
struct bench_perf_read {
	uint64_t nr, enabled, running;
	struct {
		uint64_t value, id;
	} v[BENCH_PERF_MAX];
};

struct bench_perf {
	int n;				/* events open; 0: the lane is off */
	const struct bench_perf_event *ev[BENCH_PERF_MAX];
	int fd[BENCH_PERF_MAX];
	int group[BENCH_PERF_MAX];	/* index of the event's leader */
	uint64_t id[BENCH_PERF_MAX];
	struct bench_perf_read before[BENCH_PERF_MAX];	/* per leader */
	int nslots, rounds;
	double *val;		/* [event][slot][round]: count per iteration */
	unsigned char *bad;	/* [slot][round]: a read failed, or the
				   group never ran on the PMU */
	int *scaled;		/* [slot]: batches multiplexed, scaled */
};

static inline int bench_perf_sys(struct perf_event_attr *a, int group_fd)
{
	/* pid 0, cpu -1: the calling thread, on whichever CPU it runs */
	return (int)syscall(SYS_perf_event_open, a, 0, -1, group_fd,
			    PERF_FLAG_FD_CLOEXEC);
}

static inline int bench_perf_open1(const struct bench_perf_event *e,
				   int group_fd)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = e->type;
	a.config = e->config;
	/* a leader starts disabled: it counts only between the ENABLE and
	 * DISABLE around a batch; a member follows its leader */
	a.disabled = group_fd < 0;
	/* user space only: the code measured is user code, and an
	 * unprivileged process may count no more (perf_event_paranoid 2) */
	a.exclude_kernel = 1;
	/* nor the hypervisor's work on the thread's behalf (a VM's exits) */
	a.exclude_hv = 1;
	/* inherit 0: the thread's own counts, not its children's or other
	 * threads' (e1_pipe's echo thread is not counted) */
	a.inherit = 0;
	/* one read of the leader gives the whole group; the times tell
	 * whether the group was multiplexed (running < enabled); the ids
	 * tell which value is which */
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
	return bench_perf_sys(&a, group_fd);
}

static inline const struct bench_perf_event *bench_perf_find(const char *name,
							     size_t len)
{
	for (int i = 0; i < BENCH_PERF_NEVENTS; i++)
		if (strlen(bench_perf_events[i].name) == len &&
		    !strncmp(bench_perf_events[i].name, name, len))
			return &bench_perf_events[i];
	return NULL;
}

/* The events SY_BENCH_PERF asks for, into want[]; returns how many. */
static inline int bench_perf_wanted(const struct bench_perf_event **want)
{
	const char *env = getenv("SY_BENCH_PERF");
	int n = 0;

	if (!env || !*env || !strcmp(env, "hw") || !strcmp(env, "sw")) {
		int hw = !env || strcmp(env, "sw");

		for (int i = 0; i < BENCH_PERF_NEVENTS; i++)
			if (bench_perf_events[i].hw == hw)
				want[n++] = &bench_perf_events[i];
		return n;
	}
	if (!strcmp(env, "off") || !strcmp(env, "0"))
		return 0;
	for (const char *p = env; *p && n < BENCH_PERF_MAX;) {
		size_t len = strcspn(p, ",");
		const struct bench_perf_event *e = bench_perf_find(p, len);

		if (e)
			want[n++] = e;
		else
			fprintf(stderr, "perf: no event %.*s (SY_BENCH_PERF)\n",
				(int)len, p);
		p += len + (p[len] == ',');
	}
	return n;
}

/*
 * Opens the counters for nslots x rounds batches. Never fails the
 * benchmark: without SY_BENCH_RAW, with SY_BENCH_PERF=off, or when no
 * event opens, pc->n is 0 and the other calls do nothing.
 */
static inline void bench_perf_open(struct bench_perf *pc, int nslots,
				   int rounds)
{
	const struct bench_perf_event *want[BENCH_PERF_MAX];
	char missing[512] = "";
	size_t mlen = 0;
	int nw, leader = -1;

	memset(pc, 0, sizeof(*pc));
	if (!getenv("SY_BENCH_RAW") || nslots < 1 || rounds < 1)
		return;
	nw = bench_perf_wanted(want);
	for (int i = 0; i < nw; i++) {
		int fd = bench_perf_open1(want[i], leader < 0 ? -1 :
						   pc->fd[leader]);
		int g = leader < 0 ? pc->n : leader;

		/* it could not join the group: alone, its own group
		 * (counted in another slice of time if multiplexed) */
		if (fd < 0 && leader >= 0) {
			fd = bench_perf_open1(want[i], -1);
			g = pc->n;
		}
		if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_ID, &pc->id[pc->n])) {
			int err = errno;

			if (fd >= 0)
				close(fd);
			if (mlen < sizeof(missing))
				mlen += (size_t)snprintf(missing + mlen,
					sizeof(missing) - mlen, "%s%s (%s)",
					mlen ? ", " : "", want[i]->name,
					strerror(err));
			continue;
		}
		if (leader < 0)
			leader = pc->n;
		pc->ev[pc->n] = want[i];
		pc->fd[pc->n] = fd;
		pc->group[pc->n] = g;
		pc->n++;
	}
	if (pc->n) {
		size_t ns = (size_t)nslots * (size_t)rounds;

		pc->val = (double *)calloc(ns * (size_t)pc->n,
					   sizeof(*pc->val));
		pc->bad = (unsigned char *)calloc(ns, 1);
		pc->scaled = (int *)calloc((size_t)nslots, sizeof(int));
		if (!pc->val || !pc->bad || !pc->scaled) {
			for (int i = 0; i < pc->n; i++)
				close(pc->fd[i]);
			free(pc->val);
			free(pc->bad);
			free(pc->scaled);
			pc->n = 0;
		}
		pc->nslots = nslots;
		pc->rounds = rounds;
	}
	/* say so when asked for, or when only part of the set opened; a
	 * default run on a machine without a PMU stays quiet (the machine
	 * record says it) */
	if (getenv("SY_BENCH_PERF") || (pc->n && *missing)) {
		fprintf(stderr, "perf:");
		for (int i = 0; i < pc->n; i++)
			fprintf(stderr, "%s %s%s", i ? "," : " opened",
				pc->ev[i]->name,
				pc->group[i] != pc->group[0] ? " (alone)" : "");
		if (*missing)
			fprintf(stderr, "%s could not open %s", pc->n ? ";" : "",
				missing);
		else if (!pc->n)
			fprintf(stderr, " none (SY_BENCH_PERF=%s)",
				getenv("SY_BENCH_PERF"));
		fprintf(stderr, "\n");
	}
}

static inline int bench_perf_read_group(int fd, struct bench_perf_read *r)
{
	ssize_t got = read(fd, r, sizeof(*r));

	return got >= (ssize_t)(3 * sizeof(uint64_t)) ? 0 : -1;
}

/* Just before the batch: each group's counts so far, then enable it. */
static inline void bench_perf_start(struct bench_perf *pc)
{
	for (int i = 0; i < pc->n; i++)
		if (pc->group[i] == i &&
		    bench_perf_read_group(pc->fd[i], &pc->before[i]))
			pc->before[i].nr = 0;
	for (int i = 0; i < pc->n; i++)
		if (pc->group[i] == i)
			ioctl(pc->fd[i], PERF_EVENT_IOC_ENABLE,
			      PERF_IOC_FLAG_GROUP);
}

static inline int bench_perf_value(const struct bench_perf_read *r,
				   uint64_t id, uint64_t *v)
{
	for (uint64_t k = 0; k < r->nr && k < BENCH_PERF_MAX; k++)
		if (r->v[k].id == id) {
			*v = r->v[k].value;
			return 0;
		}
	return -1;
}

/*
 * Just after the batch of n iterations: disable, read, and keep each
 * event's count per iteration for (slot, round). A group multiplexed
 * with others (running < enabled) is scaled as perf stat scales it, and
 * counted; one that never ran, or a failed read, spoils the sample.
 */
static inline void bench_perf_stop(struct bench_perf *pc, int slot, int round,
				   double n)
{
	struct bench_perf_read after[BENCH_PERF_MAX];
	size_t at;

	for (int i = 0; i < pc->n; i++)
		if (pc->group[i] == i)
			ioctl(pc->fd[i], PERF_EVENT_IOC_DISABLE,
			      PERF_IOC_FLAG_GROUP);
	/* a batch not to record (a warm-up): counted, disabled, dropped */
	if (!pc->n || slot < 0 || slot >= pc->nslots || round < 0 ||
	    round >= pc->rounds)
		return;
	at = (size_t)slot * (size_t)pc->rounds + (size_t)round;
	for (int i = 0; i < pc->n; i++) {
		const struct bench_perf_read *b = &pc->before[i];
		uint64_t en, run;

		if (pc->group[i] != i)
			continue;
		if (!b->nr || bench_perf_read_group(pc->fd[i], &after[i])) {
			pc->bad[at] = 1;
			continue;
		}
		en = after[i].enabled - b->enabled;
		run = after[i].running - b->running;
		if (!run)
			pc->bad[at] = 1;
		else if (run < en)
			pc->scaled[slot]++;
	}
	if (pc->bad[at])
		return;
	for (int e = 0; e < pc->n; e++) {
		int g = pc->group[e];
		uint64_t v0, v1;
		double en = (double)(after[g].enabled - pc->before[g].enabled);
		double run = (double)(after[g].running - pc->before[g].running);

		if (bench_perf_value(&pc->before[g], pc->id[e], &v0) ||
		    bench_perf_value(&after[g], pc->id[e], &v1)) {
			pc->bad[at] = 1;
			return;
		}
		pc->val[((size_t)e * (size_t)pc->nslots + (size_t)slot) *
			(size_t)pc->rounds + (size_t)round] =
			(double)(v1 - v0) * (en / run) / n;
	}
}

/*
 * Before a program reuses the slots for another point of its grid
 * (e4_memcpy.c: the same contenders at each size): forget the last
 * point's spoiled batches and multiplexed counts. The values need no
 * clearing: each (slot, round) measured is overwritten, and the program
 * writes out only the slots it measured at this point.
 */
static inline void bench_perf_reset(struct bench_perf *pc)
{
	if (!pc->n)
		return;
	memset(pc->bad, 0, (size_t)pc->nslots * (size_t)pc->rounds);
	memset(pc->scaled, 0, (size_t)pc->nslots * sizeof(*pc->scaled));
}

/*
 * The slot's samples into SY_BENCH_RAW, one line per event:
 * {"loop", "variant", "unit", "lane": "perf", "event", "type", "scope",
 * "scaled", "samples"}, the unit the event's per the clock row's own
 * denominator (clock_unit "ns/call": "instructions/call"). A slot with a
 * spoiled sample writes nothing (and says so): a row of fewer rounds
 * than its clock row would not pair with it.
 */
static inline void bench_perf_raw(const struct bench_perf *pc, int slot,
				  const char *loop, const char *variant,
				  const char *clock_unit)
{
	const char *path = getenv("SY_BENCH_RAW");
	const char *per = clock_unit ? strchr(clock_unit, '/') : NULL;
	FILE *f;

	if (!pc->n || !path || slot < 0 || slot >= pc->nslots)
		return;
	for (int r = 0; r < pc->rounds; r++)
		if (pc->bad[(size_t)slot * (size_t)pc->rounds + (size_t)r]) {
			fprintf(stderr, "perf: %s: %s: a batch was not counted "
				"(round %d): no perf lines\n", loop, variant, r);
			return;
		}
	f = fopen(path, "a");
	if (!f)
		return;
	for (int e = 0; e < pc->n; e++) {
		const double *s = pc->val + ((size_t)e * (size_t)pc->nslots +
					     (size_t)slot) * (size_t)pc->rounds;

		fprintf(f, "{\"loop\": \"%s\", \"variant\": \"%s\", \"unit\": "
			"\"%s%s\", \"lane\": \"perf\", \"event\": \"%s\", "
			"\"type\": \"%s\", \"scope\": \"%s\", \"scaled\": "
			"%d, \"samples\": [", loop, variant, pc->ev[e]->unit,
			per ? per : "/iter", pc->ev[e]->name,
			pc->ev[e]->hw ? "hardware" : "software",
			/* exclude_kernel does not filter a software clock,
			 * and keeps the faults of user-mode instructions */
			pc->ev[e]->hw ? "calling thread, user space" :
					"calling thread", pc->scaled[slot]);
		for (int r = 0; r < pc->rounds; r++)
			fprintf(f, "%s%.6g", r ? ", " : "", s[r]);
		fprintf(f, "]}\n");
	}
	fclose(f);
}

static inline void bench_perf_close(struct bench_perf *pc)
{
	for (int i = 0; i < pc->n; i++)
		close(pc->fd[i]);
	free(pc->val);
	free(pc->bad);
	free(pc->scaled);
	memset(pc, 0, sizeof(*pc));
}

#endif /* SY_BENCH_PERFCTR_H */
