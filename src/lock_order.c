/* SPDX-License-Identifier: MIT */
/*
 * lock_order.c - the library's locks as a whole: their order, the API that
 * takes the patch lock for the application, and the fork handlers that
 * take every lock around fork().
 *
 * Lock order, everywhere:
 *
 *   1. the dynamic linker's lock (held by dlopen and dlclose while they run
 *      an object's constructors and destructors)
 *   2. the patch lock (lock.c)
 *   3. the deferred queue's lock (deferred.c)
 *   4. the log lock (log.c)
 *
 * No thread that holds the patch lock calls into the dynamic linker
 * (dladdr, dl_iterate_phdr, dlopen, dlsym): the registering thread may
 * hold the linker's lock, another thread's would wait for it. Leaf locks
 * that are never held across a call into another file (the control
 * thread's, SWITCHYARD_KEYS's env_lock) are outside the order.
 *
 * The fork handlers are the one place that holds them all at once, in
 * this order. They live at the top of the layers (doc/DESIGN.md, "The
 * layers") because they drive the files below: lock.c and guard.c call
 * nothing.
 */
#include <errno.h>
#include <pthread.h>

#include "internal.h"

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

/* The reports queued by calls made under the lock are written here, by
 * SY_GUARDED()'s sy_leave() (report.c). */
int switchyard_patch_unlock(void)
{
	return SY_GUARDED(patch_unlock());
}

/*
 * fork(): the child must not inherit a change half done, nor a lock held by
 * a thread that does not exist in it. The prepare handler takes the patch
 * lock (so fork waits for a change in progress to finish, the deferred
 * worker's included: it decrements with the patch lock held), then the
 * deferred queue's lock, then the log lock (the order above); both sides
 * release them. A lock the forking thread already holds itself (fork from
 * a switchyard_patch_lock() section, or from a signal handler that
 * interrupted a switchyard call) is not taken again: the child inherits it
 * held by that same thread, which releases it as usual.
 *
 * From the prepare handler to the release the forking thread counts as
 * inside a switchyard call (guard.c): a signal handler that runs on it in
 * that window and calls switchyard gets -EDEADLK instead of blocking on a
 * lock its own thread holds. Thread-local: two threads may fork at once
 * (the second waits for the patch lock in its prepare handler).
 */
static __thread int fork_saved_depth __attribute__((tls_model("initial-exec")));
static __thread bool fork_took_lock __attribute__((tls_model("initial-exec")));

static void atfork_prepare(void)
{
	fork_saved_depth = sy_guard_raise();
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
	sy_guard_restore(fork_saved_depth);
}

static void atfork_parent(void)
{
	atfork_release(SY_ATFORK_PARENT);
}

static void atfork_child(void)
{
	atfork_release(SY_ATFORK_CHILD);
}

/*
 * The handlers must be in place before any fork that could find a lock
 * held. The first priority a program may use: in a static link, before
 * every constructor of the application that could take the patch lock
 * (those without a priority run after all that have one); in a shared
 * link the library's constructors run before those of the objects that
 * use it anyway.
 */
__attribute__((constructor(101))) static void lock_order_init(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}
