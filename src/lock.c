/* SPDX-License-Identifier: MIT */
/*
 * lock.c - the patch lock: one mutex for every change of code, with its
 * owner recorded so that the _cpuslocked() variants can check their caller
 * and the other calls can refuse to deadlock.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "internal.h"

static pthread_mutex_t patch_mutex = PTHREAD_MUTEX_INITIALIZER;

/*
 * The owner's identity: the address of a thread-local byte (unique among
 * live threads), 0 when free. Written only by the owner, under the mutex.
 * Any thread may read it to ask "do I hold it?"; only the owner can get its
 * own identity back, and coherence guarantees that a thread never reads an
 * older value than its own last write (the 0 it stored at unlock), so
 * relaxed loads and stores are enough.
 */
static uintptr_t patch_owner;
/* initial-exec: no lazy TLS allocation (malloc) on first use, which a
 * signal handler must not trigger. */
static __thread char self_anchor __attribute__((tls_model("initial-exec")));

uintptr_t sy_self_id(void)
{
	return (uintptr_t)&self_anchor;
}

static void lock_setup(void);

void sy_lock(void)
{
	lock_setup();
	pthread_mutex_lock(&patch_mutex);
	__atomic_store_n(&patch_owner, sy_self_id(), __ATOMIC_RELAXED);
}

/*
 * pthread_mutex_timedlock() measures against CLOCK_REALTIME, so a clock step
 * lengthens or shortens one wait; callers wait in slices and only use the
 * timeout to look at a flag. (Not pthread_mutex_clocklock(): ThreadSanitizer
 * does not intercept it and then reports every unlock as wrong.)
 */
int sy_lock_timed(unsigned ms)
{
	struct timespec ts;
	int r;

	lock_setup();
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	ts.tv_sec += (time_t)(ms / 1000) + ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	r = pthread_mutex_timedlock(&patch_mutex, &ts);
	if (r)
		return -r;
	__atomic_store_n(&patch_owner, sy_self_id(), __ATOMIC_RELAXED);
	return 0;
}

int sy_lock_try(void)
{
	lock_setup();
	if (pthread_mutex_trylock(&patch_mutex))
		return -EBUSY;
	__atomic_store_n(&patch_owner, sy_self_id(), __ATOMIC_RELAXED);
	return 0;
}

void sy_unlock(void)
{
	__atomic_store_n(&patch_owner, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&patch_mutex);
}

bool sy_lock_held(void)
{
	return __atomic_load_n(&patch_owner, __ATOMIC_RELAXED) == sy_self_id();
}

/*
 * Re-entry guard. Every API call that takes a lock or changes state runs
 * between sy_enter() and sy_leave(). A call that finds the calling thread
 * already inside one can only come from a signal handler that interrupted
 * it (or from the log callback): going on could deadlock on the patch,
 * log or deferred lock it holds, or act on a half-made change, so it is
 * refused with -EDEADLK, silently (logging takes a lock too). Thread-local
 * and lock-free, hence async-signal-safe.
 */
static __thread int depth __attribute__((tls_model("initial-exec")));

int sy_enter(void)
{
	if (depth)
		return -EDEADLK;
	depth = 1;
	/* Compiler barrier: the handler that interrupts us must see depth
	 * set before we touch any lock. A signal is delivered to this very
	 * thread, so no hardware ordering is involved. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return 0;
}

void sy_leave(void)
{
	/* Still inside: a handler that interrupts the naming gets -EDEADLK. */
	sy_report_flush();
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	depth = 0;
}

static int patch_lock(void)
{
	if (sy_lock_held())
		return -EDEADLK;
	sy_lock();
	return 0;
}

static int patch_unlock(void)
{
	if (!sy_lock_held())
		return -EPERM;
	sy_unlock();
	return 0;
}

int switchyard_patch_lock(void)
{
	return SY_GUARDED(patch_lock());
}

int switchyard_patch_unlock(void)
{
	return SY_GUARDED(patch_unlock());
}

/*
 * fork(): the child must not inherit a change half done, nor a lock held by
 * a thread that does not exist in it. The prepare handler takes the patch
 * lock (so fork waits for a change in progress to finish, the deferred
 * worker's included: it decrements with the patch lock held), then the
 * deferred queue's lock, then the log lock (the lock order of internal.h);
 * both sides release them. A lock the forking thread already holds
 * itself (fork from a switchyard_patch_lock() section, or from a signal
 * handler that interrupted a switchyard call) is not taken again: the child
 * inherits it held by that same thread, which releases it as usual.
 *
 * From the prepare handler to the release the forking thread counts as
 * inside a switchyard call: a signal handler that runs on it in that window
 * and calls switchyard gets -EDEADLK instead of blocking on a lock its own
 * thread holds. Thread-local: two threads may fork at once (the second
 * waits for the patch lock in its prepare handler).
 */
static __thread int fork_saved_depth __attribute__((tls_model("initial-exec")));
static __thread bool fork_took_lock __attribute__((tls_model("initial-exec")));

static void atfork_prepare(void)
{
	fork_saved_depth = depth;
	depth = 1;
	/* Pairs with the fence in atfork_release(): the guard is up before
	 * any lock is taken (a handler on this thread sees it). */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	fork_took_lock = !sy_lock_held();
	if (fork_took_lock)
		sy_lock();
	sy_deferred_atfork(SY_ATFORK_PREPARE, fork_saved_depth != 0);
	/* A handler that forked while its thread held the log lock (inside
	 * the log callback) would deadlock here: the callback must not call
	 * back into switchyard, nor fork. */
	sy_log_atfork(SY_ATFORK_PREPARE);
}

static void atfork_release(enum sy_atfork_phase phase)
{
	sy_log_atfork(phase);
	sy_deferred_atfork(phase, fork_saved_depth != 0);
	if (fork_took_lock) {
		fork_took_lock = false;
		sy_unlock();
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	depth = fork_saved_depth;
}

static void atfork_parent(void)
{
	atfork_release(SY_ATFORK_PARENT);
}

static void atfork_child(void)
{
	atfork_release(SY_ATFORK_CHILD);
}

static void lock_init(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* Once, at the first lock or from the constructor, whichever comes first
 * (in a static link the application's constructors may run before ours). */
static pthread_once_t lock_once = PTHREAD_ONCE_INIT;

static void lock_setup(void)
{
	pthread_once(&lock_once, lock_init);
}

__attribute__((constructor)) static void lock_ctor(void)
{
	lock_setup();
}
