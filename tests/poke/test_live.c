/* SPDX-License-Identifier: MIT */
/*
 * test_live.c - what live patching must not break:
 *  - the application's SIGTRAP and SIGILL handlers stay installed and are
 *    called for the application's own traps, during and after flips;
 *  - a thread that blocks every signal runs sites safely while keys flip;
 *  - a change requested from a signal handler works when the interrupted
 *    thread was outside switchyard, and fails with -EDEADLK (instead of
 *    deadlocking) when it was inside a switchyard call;
 *  - fork() while another thread flips keys: the child never sees a key
 *    whose sites disagree with it, and patches its own memory, not the
 *    parent's;
 *  - patched text stays file-backed (profilers symbolise it).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "stress_sites.h"
#include "sy_test.h"

static atomic_bool stop;
static _Atomic unsigned long flips;

/*
 * What the flipper publishes around each change, as a seqlock: seq[k] is
 * odd while key k changes, state[k] is the key's state once the change has
 * returned (when every thread must take the new path). A site run between
 * two reads of the same even seq[k] must take the path of state[k].
 */
static _Atomic unsigned seq[STRESS_KEYS];
static _Atomic int state[STRESS_KEYS];

static void publish_states(void)
{
	for (int k = 0; k < STRESS_KEYS; k++)
		atomic_store(&state[k], static_key_enabled(stress_key(k)));
}

/* Flip keys 0..7 until told to stop. */
static void *flipper(void *arg)
{
	unsigned i = 0;

	(void)arg;
	while (!atomic_load(&stop)) {
		unsigned k = i++ % 8;
		struct static_key *key = stress_key((int)k);

		atomic_fetch_add_explicit(&seq[k], 1, memory_order_seq_cst);
		if (static_key_enabled(key))
			static_key_disable(key);
		else
			static_key_enable(key);
		atomic_store_explicit(&state[k], static_key_enabled(key),
				      memory_order_relaxed);
		atomic_fetch_add_explicit(&seq[k], 1, memory_order_release);
		atomic_fetch_add(&flips, 1);
	}
	return NULL;
}

static void wait_flips(unsigned long n)
{
	unsigned long start = atomic_load(&flips);

	while (atomic_load(&flips) - start < n)
		usleep(100);
}

/* ---- the application's own trap handlers ------------------------------ */

static volatile sig_atomic_t traps, ills;

#if defined(__x86_64__)
#define TRAP() __asm__ volatile("int3")	/* leaves RIP after itself */
#define ILL() __asm__ volatile("ud2")
#define TRAP_SKIP(uc) ((void)(uc))
#define ILL_SKIP(uc) ((uc)->uc_mcontext.gregs[REG_RIP] += 2)
#elif defined(__aarch64__)
#define TRAP() __asm__ volatile("brk #0")	/* leaves PC on itself */
#define ILL() __asm__ volatile(".inst 0x00000000")	/* udf #0 */
#define TRAP_SKIP(uc) ((uc)->uc_mcontext.pc += 4)
#define ILL_SKIP(uc) ((uc)->uc_mcontext.pc += 4)
#else
#error "add the trap instructions of this architecture"
#endif

static void on_trap(int sig, siginfo_t *si, void *ucp)
{
	ucontext_t *uc = ucp;

	(void)sig;
	(void)si;
	(void)uc;
	traps++;
	TRAP_SKIP(uc);
}

static void on_ill(int sig, siginfo_t *si, void *ucp)
{
	ucontext_t *uc = ucp;

	(void)sig;
	(void)si;
	ills++;
	ILL_SKIP(uc);	/* skip our invalid instruction */
}

static void test_foreign_handlers(void)
{
	struct sigaction sa, cur;
	pthread_t t;

	memset(&sa, 0, sizeof(sa));
	sa.sa_flags = SA_SIGINFO;
	sa.sa_sigaction = on_trap;
	sigaction(SIGTRAP, &sa, NULL);
	sa.sa_sigaction = on_ill;
	sigaction(SIGILL, &sa, NULL);

	atomic_store(&stop, false);
	pthread_create(&t, NULL, flipper, NULL);
	wait_flips(50);
	for (int i = 0; i < 100; i++) {
		TRAP();
		ILL();
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	CHECK_EQ(traps, 100);
	CHECK_EQ(ills, 100);
	sigaction(SIGTRAP, NULL, &cur);
	CHECK(cur.sa_sigaction == on_trap);
	sigaction(SIGILL, NULL, &cur);
	CHECK(cur.sa_sigaction == on_ill);
}

/* ---- a thread that blocks every signal --------------------------------- */

static _Atomic unsigned long blocked_passes, blocked_checked, blocked_bad;

/* No signal reaches this thread, so nothing but the sync after each change
 * can make it drop stale code: every pass that no change overlapped must
 * take the path of the state published after the last change. */
static void *blocked_runner(void *arg)
{
	unsigned long checked = 0, bad = 0;
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	while (!atomic_load(&stop)) {
		for (int s = 0; s < STRESS_SITES; s++) {
			unsigned k = (unsigned)s / STRESS_SITES_PER_KEY;
			unsigned s1 = atomic_load_explicit(&seq[k],
							   memory_order_acquire);
			int st = atomic_load_explicit(&state[k],
						      memory_order_acquire);
			int path = stress_fn[s]();

			atomic_thread_fence(memory_order_seq_cst);
			if (s1 != atomic_load_explicit(&seq[k],
						       memory_order_relaxed) ||
			    (s1 & 1))
				continue;	/* a change overlapped */
			checked++;
			if (path != st && ++bad < 5)
				fprintf(stderr, "site %d of key %u: path %d, "
					"published state %d\n", s, k, path, st);
		}
		atomic_fetch_add(&blocked_passes, STRESS_SITES);
	}
	atomic_fetch_add(&blocked_checked, checked);
	atomic_fetch_add(&blocked_bad, bad);
	return NULL;
}

static void test_blocked_signals(void)
{
	pthread_t r[2], f;
	unsigned long before;

	atomic_store(&stop, false);
	publish_states();
	for (int i = 0; i < 2; i++)
		pthread_create(&r[i], NULL, blocked_runner, NULL);
	/* Both runners running before the flips start, and flips go on
	 * until they made passes meanwhile: on a loaded machine (or in
	 * fallback mode, where a flip costs nothing) the flipper could
	 * otherwise do all its flips before a runner is scheduled. */
	while (atomic_load(&blocked_passes) < 2 * STRESS_SITES)
		sched_yield();
	before = atomic_load(&blocked_passes);
	pthread_create(&f, NULL, flipper, NULL);
	wait_flips(3000);
	for (int i = 0; i < 10000 && atomic_load(&blocked_passes) == before; i++)
		wait_flips(10);
	atomic_store(&stop, true);
	pthread_join(f, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	CHECK(blocked_passes > before);	/* passes during the flips */
	CHECK(blocked_checked > 0);
	CHECK_EQ(blocked_bad, 0);
	printf("blocked-signal threads: %lu passes during flips (%lu checked "
	       "against the published state), %lu wrong\n",
	       (unsigned long)blocked_passes, (unsigned long)blocked_checked,
	       (unsigned long)blocked_bad);
}

/* ---- changes from signal handlers --------------------------------------- */

DEFINE_STATIC_KEY_FALSE(k_sig);
static struct static_key_false k_misuse = STATIC_KEY_FALSE_INIT;
static volatile int handler_result = 1;

__attribute__((noinline)) static int sig_site(void)
{
	return static_branch_unlikely(&k_sig);
}

static void on_usr1(int sig)
{
	(void)sig;
	handler_result = static_branch_enable(&k_sig);
}

/* Called by the library inside a call (a misuse report): a signal that
 * arrives here interrupts a switchyard call. */
static int callback_calls;

static void log_and_raise(enum switchyard_log_level level, const char *msg,
			  void *arg)
{
	(void)level;
	(void)msg;
	(void)arg;
	callback_calls++;
	raise(SIGUSR1);
}

static void test_signal_handler_changes(void)
{
	signal(SIGUSR1, on_usr1);

	/* Outside any switchyard call: the change is made. */
	CHECK_EQ(sig_site(), 0);
	raise(SIGUSR1);
	CHECK_EQ(handler_result, 0);
	CHECK_EQ(sig_site(), 1);
	CHECK_EQ(static_branch_disable(&k_sig), 0);

	/* Inside one: refused with -EDEADLK, nothing changes, no deadlock. */
	handler_result = 1;
	switchyard_set_log(log_and_raise, NULL);
	CHECK_EQ(static_branch_dec(&k_misuse), -EINVAL);
	switchyard_set_log(NULL, NULL);
	CHECK_EQ(callback_calls, 1);
	CHECK_EQ(handler_result, -EDEADLK);
	CHECK(!static_key_enabled(&k_sig));
	CHECK_EQ(sig_site(), 0);
	sy_test_check_sites(&k_sig.key);
	signal(SIGUSR1, SIG_DFL);
}

/* ---- fork while flipping ------------------------------------------------ */

static int child_check(void)
{
	int bad = 0;

	/* Every key's sites agree with the key: no half-done change. */
	for (int k = 0; k < STRESS_KEYS; k++) {
		struct static_key *key = stress_key(k);

		for (int j = 0; j < STRESS_SITES_PER_KEY; j++)
			if (stress_fn[k * STRESS_SITES_PER_KEY + j]() !=
			    static_key_enabled(key))
				bad++;
	}
	/* The child patches its own copy. */
	if (static_key_enabled(stress_key(12)))
		bad += static_key_disable(stress_key(12)) != 0;
	else
		bad += static_key_enable(stress_key(12)) != 0;
	for (int j = 0; j < STRESS_SITES_PER_KEY; j++)
		bad += stress_fn[12 * STRESS_SITES_PER_KEY + j]() !=
		       static_key_enabled(stress_key(12));
	return bad;
}

static void test_fork(void)
{
	pthread_t f;
	int before12 = static_key_enabled(stress_key(12));

	atomic_store(&stop, false);
	pthread_create(&f, NULL, flipper, NULL);
	wait_flips(10);
	for (int i = 0; i < 100; i++) {
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			alarm(10);	/* a lock inherited held would hang */
			_exit(child_check() ? 1 : 0);
		}
		CHECK(pid > 0);
		CHECK_EQ(waitpid(pid, &st, 0), pid);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	atomic_store(&stop, true);
	pthread_join(f, NULL);
	/* The children's flips of key 12 did not reach the parent. */
	CHECK_EQ(static_key_enabled(stress_key(12)), before12);
	for (int j = 0; j < STRESS_SITES_PER_KEY; j++)
		CHECK_EQ(stress_fn[12 * STRESS_SITES_PER_KEY + j](), before12);
	for (int k = 0; k < STRESS_KEYS; k++)
		sy_test_check_sites(stress_key(k));
}

/* ---- text stays file-backed --------------------------------------------- */

static void test_file_backed(void)
{
	char buf[65536], self[4096];
	uintptr_t site = (uintptr_t)stress_fn[0];
	ssize_t n, have = 0;
	int fd = open("/proc/self/maps", O_RDONLY), found = 0;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK(n > 0);
	self[n > 0 ? n : 0] = 0;
	CHECK(fd >= 0);
	while ((n = read(fd, buf + have, sizeof(buf) - 1 - (size_t)have)) > 0)
		have += n;
	close(fd);
	buf[have] = 0;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 || site < lo || site >= hi)
			continue;
		found = 1;
		CHECK(strstr(line, self) != NULL);	/* still the file */
		CHECK(strstr(line, " r-xp ") != NULL);	/* never writable */
	}
	CHECK(found);
}

int main(void)
{
	if (!SY_TEST_HAVE_SITES)
		printf("(fallback build: no code is patched, the API is checked)\n");
	test_foreign_handlers();
	test_blocked_signals();
	test_signal_handler_changes();
	test_fork();
	test_file_backed();
	return sy_test_done("live");
}
