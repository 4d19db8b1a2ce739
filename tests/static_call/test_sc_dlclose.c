/* SPDX-License-Identifier: MIT */
/*
 * test_sc_dlclose.c - unloading a plugin whose static call sites armed
 * another thread's rseq area does not kill that thread.
 *
 * A patched site stores the address of its struct rseq_cs descriptor in the
 * calling thread's rseq->rseq_cs and leaves it there after the call. The
 * kernel reads that descriptor, and the signature in front of its abort
 * handler, the next time the thread returns to user space after a
 * preemption, a migration or a signal, and kills the process with SIGSEGV
 * if it cannot: a descriptor (or an abort handler) inside a dlclose()d
 * library is fatal at that thread's next context switch. The library keeps
 * its descriptors in runs that are never unmapped and empties them
 * (post_commit_offset 0) when their object is unloaded (doc/DESIGN.md,
 * "Static calls").
 *
 * Each round: dlopen the plugin (libsc_plugin.c); a second thread calls
 * through both of its sites and reads, right after the last call, its
 * rseq_cs: it must point to a descriptor of that plugin site (start_ip in
 * the plugin, the signature before abort_ip), new in this round. The thread
 * then waits without touching its rseq area, either blocked in read() (the
 * kernel fixes rseq up on the way back to user space only, so rseq_cs is
 * still armed while the plugin goes) or spinning without a system call on
 * a CPU of its own (armed if nothing preempted it: checked). The main
 * thread dlcloses the plugin and checks that it is unmapped, that the
 * descriptor now has post_commit_offset 0 and whether the thread's rseq_cs
 * still points to it ("armed at dlclose", counted); then the thread is
 * woken and forced through a signal, sched_yield() and sleeps, after which
 * the kernel must have cleared its rseq_cs. The process must survive every
 * round. Rounds alternate the way of waiting and the site called last; the
 * plugin is usually mapped at the same address again (counted).
 *
 * Negative controls (each must die of SIGSEGV, after the unmapping): the
 * same thread and the same forcing, the thread's rseq_cs pointed by hand at
 * a valid descriptor (the kernel first accepts and clears it) that is then
 * unmapped:
 *   munmap   a descriptor in an anonymous page, munmap()ed
 *   dlclose  a descriptor in the plugin's data, dlclose()d
 * They show that this mechanism catches a descriptor left in an unloaded
 * object.
 *
 *   test_sc_dlclose PLUGIN            the rounds, in a child process
 *   test_sc_dlclose control PLUGIN    both controls, each in a child
 *   test_sc_dlclose run MODE PLUGIN   one of rounds|munmap|dlclose here
 */
#include <linux/rseq.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#define HAVE_SYS_RSEQ 1
#endif
#endif

#include "sy_test.h"

#define ROUNDS 16

/* The key the plugin's second site calls: defined here (-rdynamic). */
int main_impl(int x)
{
	return x + 1;
}

DEFINE_STATIC_CALL(sc_main, main_impl);

#define SIG_X86 0x53053053u	/* RSEQ_SIG, what glibc registers on x86 */

/* A valid abort handler in this program, for the munmap control. */
__asm__(".pushsection .text\n\t"
	".globl exe_ctl_abort\n\t"
	".hidden exe_ctl_abort\n\t"
	".long 0x53053053\n"
	"exe_ctl_abort:\n\t"
	"ud2\n\t"
	".popsection");
extern const char exe_ctl_abort[] __attribute__((visibility("hidden")));

/* ---- what a child reports to its parent (shared memory) ---------------- */

enum stage {
	ST_START, ST_ARMED, ST_UNLOADED, ST_FORCING, ST_SURVIVED,
};

static const char *const stage_name[] = {
	"arming the thread, object loaded", "armed, object still loaded",
	"object unloaded, thread not yet woken",
	"waking and signalling the thread", "the thread came through",
};

struct progress {
	int stage;
	int round;
};

static struct progress *prog;

static void set_stage(int round, enum stage st)
{
	__atomic_store_n(&prog->round, round, __ATOMIC_RELAXED);
	__atomic_store_n(&prog->stage, st, __ATOMIC_RELEASE);
}

/* ---- the thread whose rseq area is armed -------------------------------- */

static int sigs;	/* SIGUSR1 handled, any thread */

static void on_usr1(int sig)
{
	(void)sig;
	__atomic_fetch_add(&sigs, 1, __ATOMIC_RELAXED);
}

enum wait_how { WAIT_BLOCK, WAIT_SPIN };

struct caller {
	/* in */
	int (*own)(int);		/* the plugin's sites */
	int (*main_)(int);
	int own_last;			/* which one is called last */
	const struct rseq_cs *ctl;	/* control: armed by hand */
	enum wait_how how;
	int pipe_r;
	/* out */
	uint64_t *rcs;			/* &rseq->rseq_cs of the thread */
	pid_t tid;
	int bad_calls;			/* a call returned a wrong value */
	int tries;			/* calls until rseq_cs read non-zero */
	int ctl_cleared;		/* control: the kernel took it, cleared */
	uint64_t seen;			/* rseq_cs right after the call */
	uint64_t after;			/* rseq_cs after the forcing */
	int state;			/* 1 armed and waiting, 2 done */
	int go;				/* WAIT_SPIN: released */
};

static uint64_t *rseq_cs_of_self(void)
{
#ifdef HAVE_SYS_RSEQ
	return (uint64_t *)((char *)__builtin_thread_pointer() +
			    __rseq_offset + 8);
#else
	return NULL;
#endif
}

/* Through signal delivery and the scheduler; the rseq area untouched. */
static void force_through(void)
{
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < 100; i++)
		sched_yield();
	for (int i = 0; i < 3; i++)
		nanosleep(&ms, NULL);
}

static void *caller_main(void *arg)
{
	struct caller *c = arg;
	uint64_t *rcs = rseq_cs_of_self();
	int s0;

	c->rcs = rcs;
	c->tid = gettid();
	if (c->ctl) {
		/* the control arms by hand, as a site does; first a pass
		 * through the kernel while the descriptor is mapped: it is
		 * valid (else this dies, too early: the parent checks) */
		__atomic_store_n(rcs, (uintptr_t)c->ctl, __ATOMIC_RELAXED);
		s0 = __atomic_load_n(&sigs, __ATOMIC_RELAXED);
		raise(SIGUSR1);
		while (__atomic_load_n(&sigs, __ATOMIC_RELAXED) == s0)
			sched_yield();
		force_through();
		c->ctl_cleared = __atomic_load_n(rcs, __ATOMIC_RELAXED) == 0;
		__atomic_store_n(rcs, (uintptr_t)c->ctl, __ATOMIC_RELAXED);
		c->seen = __atomic_load_n(rcs, __ATOMIC_RELAXED);
		c->tries = 1;
	}
	while (!c->ctl && !c->seen && c->tries < 100) {
		int a, b;

		c->tries++;
		if (c->own_last) {
			a = c->main_(1);
			b = c->own(1);
		} else {
			b = c->own(1);
			a = c->main_(1);
		}
		/* right after the call: a preemption in between clears it
		 * (then call again) */
		c->seen = __atomic_load_n(rcs, __ATOMIC_RELAXED);
		if (a != 2 || b != 1001)
			c->bad_calls++;
	}
	s0 = __atomic_load_n(&sigs, __ATOMIC_RELAXED);
	__atomic_store_n(&c->state, 1, __ATOMIC_RELEASE);
	if (c->how == WAIT_BLOCK) {
		char b;

		while (read(c->pipe_r, &b, 1) < 0 && errno == EINTR)
			;
	} else {
		while (!__atomic_load_n(&c->go, __ATOMIC_ACQUIRE))
			__builtin_ia32_pause();
	}
	/* the main thread sends SIGUSR1 once it has woken us */
	while (__atomic_load_n(&sigs, __ATOMIC_RELAXED) == s0)
		sched_yield();
	force_through();
	c->after = __atomic_load_n(rcs, __ATOMIC_RELAXED);
	__atomic_store_n(&c->state, 2, __ATOMIC_RELEASE);
	return NULL;
}

/* ---- the main thread's side --------------------------------------------- */

/* The scheduler state of thread tid ('S': blocked). */
static char thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

static bool mapped(uintptr_t addr)
{
	void *page = (void *)(addr & ~(uintptr_t)4095);

	return !(msync(page, 1, MS_ASYNC) && errno == ENOMEM);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* Put this thread on the first CPU allowed and attr's on another one, if
 * there are two: a spinning caller is then seldom preempted. */
static void split_cpus(pthread_attr_t *attr)
{
	cpu_set_t all, one;
	int first = -1, second = -1;

	if (sched_getaffinity(0, sizeof(all), &all))
		return;
	for (int i = 0; i < CPU_SETSIZE && second < 0; i++)
		if (CPU_ISSET(i, &all))
			*(first < 0 ? &first : &second) = i;
	if (second < 0)
		return;
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	sched_setaffinity(0, sizeof(one), &one);
	CPU_ZERO(&one);
	CPU_SET(second, &one);
	pthread_attr_setaffinity_np(attr, sizeof(one), &one);
}

/* Force the thread through the kernel (wake-up, a signal, the scheduler),
 * and join it. */
static void release(struct caller *c, pthread_t th, int fds[2])
{
	if (c->how == WAIT_BLOCK)
		CHECK(write(fds[1], "x", 1) == 1);
	else
		__atomic_store_n(&c->go, 1, __ATOMIC_RELEASE);
	sleep_ms(1);
	CHECK_EQ(pthread_kill(th, SIGUSR1), 0);
	pthread_join(th, NULL);
	close(fds[0]);
	close(fds[1]);
}

struct tally {
	int armed[2], rounds[2];	/* per wait_how */
	int same_base;
	uint64_t descs[ROUNDS];
};

/*
 * One round (or one control: ctl_mode "munmap" or "dlclose"). Returns
 * false if it could not run (the reason is a failed CHECK).
 */
static bool one_round(int r, const char *plugin, const char *ctl_mode,
		      struct tally *t, void **last_base)
{
	struct caller c = { 0 };
	struct rseq_cs *d, *page = NULL;
	pthread_attr_t attr;
	pthread_t th;
	Dl_info di;
	void *h = NULL, *base = NULL;
	int fds[2], rc, armed;

	c.how = ctl_mode || r % 2 == 0 ? WAIT_BLOCK : WAIT_SPIN;
	c.own_last = r / 2 % 2 == 0;
	if (!ctl_mode || !strcmp(ctl_mode, "dlclose")) {
		h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			fprintf(stderr, "dlopen: %s\n", dlerror());
		CHECK(h != NULL);
		if (!h)
			return false;
		c.own = (int (*)(int))dlsym(h, "plug_call_own");
		c.main_ = (int (*)(int))dlsym(h, "plug_call_main");
		CHECK(c.own && c.main_);
		CHECK(dladdr((void *)c.own, &di) != 0);
		if (!c.own || !c.main_ || !di.dli_fbase)
			return false;
		base = di.dli_fbase;
		if (base == *last_base)
			t->same_base++;
		*last_base = base;
	}
	if (ctl_mode && !strcmp(ctl_mode, "dlclose")) {
		struct rseq_cs *(*get)(void) = (struct rseq_cs *(*)(void))
			dlsym(h, "plug_ctl_descriptor");

		CHECK(get != NULL);
		if (!get)
			return false;
		c.ctl = get();
	} else if (ctl_mode) {
		page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(page != MAP_FAILED);
		if (page == MAP_FAILED)
			return false;
		page->start_ip = (uintptr_t)main_impl;
		page->post_commit_offset = 0;
		page->abort_ip = (uintptr_t)exe_ctl_abort;
		c.ctl = page;
	}
	CHECK(pipe(fds) == 0);
	c.pipe_r = fds[0];
	pthread_attr_init(&attr);
	if (c.how == WAIT_SPIN)
		split_cpus(&attr);
	rc = pthread_create(&th, &attr, caller_main, &c);
	pthread_attr_destroy(&attr);
	CHECK_EQ(rc, 0);
	if (rc)
		return false;
	while (__atomic_load_n(&c.state, __ATOMIC_ACQUIRE) < 1)
		sleep_ms(1);

	/* the thread's rseq_cs points to a descriptor of a plugin site */
	CHECK_EQ(c.bad_calls, 0);
	CHECK(c.seen != 0);
	d = (struct rseq_cs *)(uintptr_t)c.seen;
	if (ctl_mode) {
		CHECK(c.ctl_cleared);	/* valid while mapped */
	} else if (c.seen) {
		Dl_info ds;
		uint32_t sig;

		if (c.tries > 1)	/* preempted right after the call */
			printf("round %d: rseq_cs read non-zero after %d "
			       "calls\n", r + 1, c.tries);
		CHECK(c.seen < 0x80000000u && c.seen % 32 == 0);
		CHECK_EQ(d->version, 0);
		CHECK(d->post_commit_offset > 0 && d->post_commit_offset < 64);
		CHECK(dladdr((void *)(uintptr_t)d->start_ip, &ds) &&
		      ds.dli_fbase == base);
		memcpy(&sig, (const void *)(uintptr_t)(d->abort_ip - 4), 4);
		CHECK_EQ(sig, SIG_X86);
		for (int i = 0; i < r; i++)
			CHECK(t->descs[i] != c.seen);	/* never reused */
		t->descs[r] = c.seen;
	}
	if (!c.seen || (ctl_mode && !c.ctl_cleared)) {
		/* nothing to test (the failed CHECK says why): give up */
		release(&c, th, fds);
		if (h)
			dlclose(h);
		if (page)
			munmap(page, 4096);
		return false;
	}
	if (c.how == WAIT_BLOCK)
		for (int i = 0; i < 2000 && thread_state(c.tid) != 'S'; i++)
			sleep_ms(1);
	set_stage(r, ST_ARMED);

	/* unload what the descriptor lies in, or points into */
	if (page) {
		CHECK(munmap(page, 4096) == 0);
	} else {
		uintptr_t abort_ip = d->abort_ip, start_ip = d->start_ip;

		CHECK(dlclose(h) == 0);
		h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
		CHECK(h == NULL);	/* really unloaded */
		if (h)
			dlclose(h);
		CHECK(!mapped(abort_ip) && !mapped(start_ip));
		if (!ctl_mode)
			CHECK_EQ(__atomic_load_n(&d->post_commit_offset,
						 __ATOMIC_RELAXED), 0);
	}
	set_stage(r, ST_UNLOADED);
	armed = __atomic_load_n(c.rcs, __ATOMIC_RELAXED) == c.seen;
	t->armed[c.how] += armed;
	t->rounds[c.how]++;
	if (!ctl_mode)	/* the evidence, should the thread die */
		printf("round %d (%s, %s): rseq_cs %#llx {start_ip %#llx, "
		       "post_commit_offset %llu, abort_ip %#llx}, %sarmed "
		       "after dlclose\n", r + 1,
		       c.how == WAIT_BLOCK ? "blocked" : "spinning",
		       c.own_last ? "own site last" : "program's site last",
		       (unsigned long long)c.seen,
		       (unsigned long long)d->start_ip,
		       (unsigned long long)d->post_commit_offset,
		       (unsigned long long)d->abort_ip, armed ? "" : "not ");
	fflush(stdout);

	set_stage(r, ST_FORCING);
	release(&c, th, fds);
	CHECK(c.after == 0);	/* the kernel cleared it */
	set_stage(r, ST_SURVIVED);
	return true;
}

static bool rseq_registered(void)
{
#ifdef HAVE_SYS_RSEQ
	return __rseq_size >= 20;
#else
	return false;
#endif
}

static int run(const char *mode, const char *plugin)
{
	struct sigaction sa;
	struct tally t = { 0 };
	void *last_base = NULL;
	/* a control gets a few rounds: one whose thread was preempted
	 * before read() (the kernel then cleared rseq_cs: not armed after
	 * the unload) proves nothing either way and is run again; one that
	 * was armed and survived fails (below) */
	int rounds = strcmp(mode, "rounds") ? 8 : ROUNDS;
	const char *ctl = strcmp(mode, "rounds") ? mode : NULL;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;	/* no SA_RESTART: read() may be cut */
	sigaction(SIGUSR1, &sa, NULL);
	alarm(30);	/* a hang dies of SIGALRM, reported by the parent */
	for (int r = 0; r < rounds; r++) {
		int armed = t.armed[WAIT_BLOCK] + t.armed[WAIT_SPIN];

		if (!one_round(r, plugin, ctl, &t, &last_base))
			break;
		if (ctl && t.armed[WAIT_BLOCK] + t.armed[WAIT_SPIN] > armed)
			break;	/* armed, unloaded, and still alive */
	}
	if (ctl) {
		/* a control that gets here has survived: it failed */
		printf("control %s: the thread survived its unmapped "
		       "descriptor\n", ctl);
		sy_test_done(ctl);
		return 4;
	}
	printf("%d rounds: armed at dlclose %d/%d blocked, %d/%d spinning; "
	       "plugin mapped at the same address again %d times\n", ROUNDS,
	       t.armed[WAIT_BLOCK], t.rounds[WAIT_BLOCK], t.armed[WAIT_SPIN],
	       t.rounds[WAIT_SPIN], t.same_base);
	/* blocked threads keep rseq_cs armed unless preempted in the few
	 * instructions before read(): most rounds must have tested it */
	CHECK(t.armed[WAIT_BLOCK] >= t.rounds[WAIT_BLOCK] / 2);
	return sy_test_done("sc_dlclose");
}

/* Run a mode in a child: its exit status, or 128 + the signal. */
static int child(const char *mode, const char *plugin)
{
	pid_t p;
	int st;

	prog->stage = ST_START;
	prog->round = 0;
	fflush(NULL);
	p = fork();
	if (p == 0) {
		st = run(mode, plugin);
		fflush(NULL);
		_exit(st);
	}
	if (p < 0 || waitpid(p, &st, 0) != p)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
	static struct progress local;
	const char *e = getenv("SWITCHYARD_STATIC_CALL");
	int st;

	prog = &local;
	if (argc == 4 && !strcmp(argv[1], "run"))
		return run(argv[2], argv[3]);
	if (!(argc == 2 || (argc == 3 && !strcmp(argv[1], "control")))) {
		fprintf(stderr, "usage: test_sc_dlclose [control] PLUGIN | "
			"run rounds|munmap|dlclose PLUGIN\n");
		return 2;
	}
#ifndef SY__ARCH_HAVE_STATIC_CALL
	SKIP("static call sites are not patched on this architecture");
#endif
	if (!rseq_registered())
		SKIP("rseq is not registered by libc (__rseq_size 0: glibc < "
		     "2.35, or GLIBC_TUNABLES=glibc.pthread.rseq=0)");
	prog = mmap(NULL, sizeof(*prog), PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (prog == MAP_FAILED)
		return 2;

	if (argc == 3) {
		const char *modes[] = { "munmap", "dlclose" };

		for (int i = 0; i < 2; i++) {
			st = child(modes[i], argv[2]);
			printf("control %s: status %d (want %d, SIGSEGV), "
			       "stage: %s\n", modes[i], st, 128 + SIGSEGV,
			       stage_name[prog->stage]);
			CHECK_EQ(st, 128 + SIGSEGV);
			/* killed by the unmapping, not before */
			CHECK_EQ(prog->stage, ST_FORCING);
		}
		return sy_test_done("sc_dlclose control");
	}
	if (e && !strcmp(e, "detour"))
		SKIP("SWITCHYARD_STATIC_CALL=detour: no site arms rseq");
	st = child("rounds", argv[1]);
	if (st > 128)
		printf("FAIL: round %d of %d: the process died of signal %d "
		       "(%s), stage: %s\n", prog->round + 1, ROUNDS, st - 128,
		       strsignal(st - 128), stage_name[prog->stage]);
	CHECK_EQ(st, 0);
	return sy_test_done("sc_dlclose");
}
