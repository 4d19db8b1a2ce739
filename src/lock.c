/* SPDX-License-Identifier: MIT */
/*
 * lock.c - the patch lock: one mutex for every change of code, with its
 * owner recorded so that the _cpuslocked() variants can check their caller
 * and the other calls can refuse to deadlock.
 */
#include <errno.h>
#include <pthread.h>

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

static uintptr_t self_id(void)
{
	return (uintptr_t)&self_anchor;
}

static void lock_setup(void);

void sy_lock(void)
{
	lock_setup();
	pthread_mutex_lock(&patch_mutex);
	__atomic_store_n(&patch_owner, self_id(), __ATOMIC_RELAXED);
}

void sy_unlock(void)
{
	__atomic_store_n(&patch_owner, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&patch_mutex);
}

bool sy_lock_held(void)
{
	return __atomic_load_n(&patch_owner, __ATOMIC_RELAXED) == self_id();
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
 * fork(): the child must not inherit a change half done, nor a mutex held
 * by a thread that does not exist in it. The prepare handler takes the lock
 * (so fork waits for a change in progress to finish), both sides release
 * it. A thread that forks while holding the lock itself keeps holding it in
 * both processes.
 */
static int fork_took_lock;

static void atfork_prepare(void)
{
	if (sy_lock_held())
		return;
	sy_lock();
	fork_took_lock = 1;
}

static void atfork_release(void)
{
	if (!fork_took_lock)
		return;
	fork_took_lock = 0;
	sy_unlock();
}

static void lock_init(void)
{
	pthread_atfork(atfork_prepare, atfork_release, atfork_release);
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
