/* SPDX-License-Identifier: MIT */
/*
 * guard.c - the re-entry guard: is the calling thread already inside a
 * switchyard call?
 *
 * Every API call that takes a lock or changes state runs between
 * sy_enter() and sy_leave() (SY_GUARDED(), internal.h). A call that finds
 * the calling thread already inside one can only come from a signal
 * handler that interrupted it (or from the log callback): going on could
 * deadlock on the patch, log or deferred lock it holds, or act on a
 * half-made change, so it is refused with -EDEADLK, silently (logging
 * takes a lock too). Thread-local and lock-free, hence async-signal-safe.
 *
 *   depth   the thread is                          a switchyard call gets
 *   0       outside the library                    in
 *   1       inside a call, or in fork()'s window   -EDEADLK
 *           between the prepare handler and the
 *           release (fork.c)
 *
 * The lowest layer with lock.c: it calls no other file. sy_leave() is
 * internal.h's inline, which writes the call's queued reports
 * (report.c) before sy_guard_exit() here.
 */
#include <errno.h>

#include "internal.h"

static __thread int depth __attribute__((tls_model("initial-exec")));

int sy_enter(void)
{
	if (depth)
		return -EDEADLK;
	depth = 1;
	/* Compiler barrier: the handler that interrupts us must see depth
	 * set before we touch any lock. A signal is delivered to this very
	 * thread, so no hardware ordering is involved. Pairs with the one
	 * in sy_guard_exit(). */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return 0;
}

void sy_guard_exit(void)
{
	/* Pairs with sy_enter()'s: every lock is dropped before the guard. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	depth = 0;
}

int sy_guard_raise(void)
{
	int saved = depth;

	depth = 1;
	/* Pairs with sy_guard_restore()'s: the guard is up before any lock
	 * is taken (a handler on this thread sees it). */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	return saved;
}

void sy_guard_restore(int saved)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	depth = saved;
}
