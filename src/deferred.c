/* SPDX-License-Identifier: MIT */
/*
 * deferred.c - deferred keys: the final decrement waits `timeout` ms on a
 * background thread, so that dec/inc pairs within the window never patch.
 *
 * The queue, every work's sy_pending/sy_due_ns/sy_next, and the worker's
 * state are protected by dq_lock. Lock order: the patch lock, then dq_lock
 * (lock_order.c); nobody waits for the patch lock while holding dq_lock.
 *
 * The worker takes the patch lock before it takes a due work off the queue
 * and keeps it until that work's decrement is done. So a work is either
 * queued or done whenever someone else holds the patch lock, never "being
 * run":
 *  - static_key_deferred_flush() takes the patch lock (or finds it held by
 *    its caller), and then only has to take the work off the queue and
 *    decrement itself: it never waits for the worker (which may be waiting
 *    for the very lock the flusher holds);
 *  - an object being unloaded drops its queued works under the patch lock
 *    (sy_deferred_forget()): the worker cannot be holding one;
 *  - fork() takes the patch lock in its prepare handler: no decrement is
 *    half done in the child.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "internal.h"

static pthread_mutex_t dq_lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t dq_owner;		/* sy_self_id() of the holder, or 0 */
static pthread_cond_t dq_cond;		/* queue changed or quit: worker wakes */
static struct sy_delayed_work *queue;	/* unordered; a handful of works */
static bool worker_up;
static pthread_t worker_tid;
static bool quitting;	/* the library is going away: no worker any more */

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull +
	       (unsigned long long)ts.tv_nsec;
}

/* The owner is recorded for the fork handler only (see sy_deferred_atfork);
 * the same relaxed-owner argument as the patch lock's (lock.c). */
static void dq_take(void)
{
	pthread_mutex_lock(&dq_lock);
	__atomic_store_n(&dq_owner, sy_self_id(), __ATOMIC_RELAXED);
}

static void dq_release(void)
{
	__atomic_store_n(&dq_owner, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&dq_lock);
}

/* dq_lock held; a condition wait gives the lock up, so the owner too. */
static void dq_wait(const struct timespec *until)
{
	__atomic_store_n(&dq_owner, 0, __ATOMIC_RELAXED);
	if (until)
		pthread_cond_timedwait(&dq_cond, &dq_lock, until);
	else
		pthread_cond_wait(&dq_cond, &dq_lock);
	__atomic_store_n(&dq_owner, sy_self_id(), __ATOMIC_RELAXED);
}

static void unqueue(struct sy_delayed_work *w)
{
	for (struct sy_delayed_work **pp = &queue; *pp; pp = &(*pp)->sy_next)
		if (*pp == w) {
			*pp = w->sy_next;
			break;
		}
	w->sy_next = NULL;
	w->sy_pending = 0;
}

/* dq_lock held: the first due work, or NULL and *next = the earliest due
 * time (~0 when the queue is empty). */
static struct sy_delayed_work *first_due(unsigned long long *next)
{
	unsigned long long now = now_ns();

	*next = ~0ull;
	for (struct sy_delayed_work *w = queue; w; w = w->sy_next) {
		if (w->sy_due_ns <= now)
			return w;
		if (w->sy_due_ns < *next)
			*next = w->sy_due_ns;
	}
	return NULL;
}

/* Patch lock held: run every work that is due now. */
static void run_due(void)
{
	for (;;) {
		unsigned long long next;
		struct sy_delayed_work *due;
		struct static_key *key = NULL;

		dq_take();
		due = first_due(&next);
		if (due) {
			key = due->sy_key;
			unqueue(due);
		}
		dq_release();
		if (!key)
			return;
		sy_key_dec(key);
	}
}

/*
 * The worker. It waits for the patch lock in slices so that it notices
 * `quitting` even when the thread that unloads the library holds the lock
 * (dlclose between switchyard_patch_lock() and _unlock()).
 */
static void *worker(void *arg)
{
	(void)arg;
	dq_take();
	while (!quitting) {
		unsigned long long next;

		if (first_due(&next)) {
			int r;

			dq_release();
			while ((r = sy_lock_timed(20)) == -ETIMEDOUT &&
			       !__atomic_load_n(&quitting, __ATOMIC_RELAXED))
				;
			if (!r) {
				run_due();
				sy_unlock();
				sy_report_flush();
			}
			dq_take();
			continue;
		}
		if (next == ~0ull) {
			dq_wait(NULL);
		} else {
			struct timespec ts = {
				.tv_sec = (time_t)(next / 1000000000ull),
				.tv_nsec = (long)(next % 1000000000ull),
			};
			dq_wait(&ts);
		}
	}
	dq_release();
	return NULL;
}

static void deferred_setup(void);

/* dq_lock held. The worker blocks every signal: the application's handlers
 * must never run on a thread it does not know about. Joinable: the library's
 * destructor waits for it to leave the library's code. */
static int start_worker(void)
{
	sigset_t all, old;
	int r;

	if (worker_up)
		return 0;
	if (quitting)
		return -ESHUTDOWN;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&worker_tid, NULL, worker, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r)
		return -r;
	worker_up = true;
	return 0;
}

static int dec_deferred(struct static_key *key, struct sy_delayed_work *work,
			unsigned long timeout)
{
	int v;
	int r = 0;

	sy_vg_benign_race(&key->enabled, sizeof(key->enabled)); /* static_key.c */
	v = __atomic_load_n(&key->enabled, __ATOMIC_ACQUIRE);
	deferred_setup();
	/* Above 1: an ordinary decrement, at once (lock-free cmpxchg). */
	while (v > 1)
		if (__atomic_compare_exchange_n(&key->enabled, &v, v - 1, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_ACQUIRE))
			return 0;
	if (v <= 0)
		return sy_key_dec(key);	/* reports the misuse */

	dq_take();
	if (queue && !worker_up)
		start_worker();	/* works left queued by fork (see below) */
	if (!work->sy_pending) {
		r = start_worker();
		if (!r) {
			work->sy_key = key;
			work->sy_due_ns = now_ns() + 1000000ull * timeout;
			work->sy_pending = 1;
			work->sy_next = queue;
			queue = work;
			pthread_cond_signal(&dq_cond);
		}
	}
	dq_release();
	if (r) {
		/* No thread to wait on: decrement now, correct if not lazy. */
		return sy_key_dec(key);
	}
	return 0;
}

int __static_key_slow_dec_deferred(struct static_key *key,
				   struct sy_delayed_work *work,
				   unsigned long timeout)
{
	return SY_GUARDED(dec_deferred(key, work, timeout));
}

/* Patch lock held: the work is queued or done (see the top of this file). */
static int flush_locked(struct sy_delayed_work *work)
{
	struct static_key *k = NULL;

	dq_take();
	if (work->sy_pending) {
		k = work->sy_key;
		unqueue(work);
	}
	dq_release();
	return k ? sy_key_dec(k) : 0;
}

int __static_key_deferred_flush(void *key, struct sy_delayed_work *work)
{
	(void)key;
	deferred_setup();
	return SY_GUARDED(SY_LOCKED(flush_locked(work)));
}

/* Parenthesised: the header also defines a macro of this name. */
void (jump_label_rate_limit)(struct static_key_deferred *key, unsigned long rl)
{
	__atomic_store_n(&key->timeout, rl, __ATOMIC_RELAXED);
}

void sy_deferred_forget(const struct sy_obj *o)
{
	dq_take();
	for (struct sy_delayed_work **pp = &queue; *pp;) {
		struct sy_delayed_work *w = *pp;

		if (sy_obj_contains(o, (uintptr_t)w)) {
			/* Its key goes away with it: the final decrement
			 * would change nothing anyone can run any more. */
			*pp = w->sy_next;
			w->sy_next = NULL;
			w->sy_pending = 0;
			continue;
		}
		pp = &w->sy_next;
	}
	dq_release();
}

/*
 * fork(), called by lock_order.c's handlers with the patch lock held (or owned by
 * the forking thread). The worker does not exist in the child, and starting
 * a thread in a fork handler is not allowed (only async-signal-safe calls
 * until exec; ThreadSanitizer refuses it). So the child runs its pending
 * final decrements at once, from the child handler: it is single-threaded
 * there and holds the patch lock, and a decrement allocates nothing (poke.c).
 * The rate limit only delays a decrement; doing it early is what a flush
 * does. Exception: when the forking thread was inside a switchyard call (a
 * signal handler that interrupted one called fork()), a batch may be half
 * made in the child: the works stay queued, and the next deferred call
 * starts a worker for them.
 * dq_lock is not taken again if the forking thread holds it.
 */
static __thread bool fork_took_dq __attribute__((tls_model("initial-exec")));

void sy_deferred_atfork(enum sy_atfork_phase phase, bool inside_call)
{
	struct sy_delayed_work *pending = NULL;

	switch (phase) {
	case SY_ATFORK_PREPARE:
		fork_took_dq = __atomic_load_n(&dq_owner, __ATOMIC_RELAXED) !=
			       sy_self_id();
		if (fork_took_dq)
			dq_take();
		return;
	case SY_ATFORK_CHILD:
		worker_up = false;
		if (!inside_call) {
			pending = queue;
			queue = NULL;
		}
		break;
	case SY_ATFORK_PARENT:
		break;
	}
	if (fork_took_dq) {
		fork_took_dq = false;
		dq_release();
	}
	while (pending) {
		struct sy_delayed_work *w = pending;
		struct static_key *key = w->sy_key;

		pending = w->sy_next;
		w->sy_next = NULL;
		w->sy_pending = 0;
		sy_key_dec(key);
	}
}

static void deferred_init(void)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&dq_cond, &ca);
	pthread_condattr_destroy(&ca);
}

/*
 * Once, at the first deferred decrement or from the constructor, whichever
 * comes first: in a static link, the application's own constructors may
 * run before this library's.
 */
static pthread_once_t deferred_once = PTHREAD_ONCE_INIT;

static void deferred_setup(void)
{
	pthread_once(&deferred_once, deferred_init);
}

__attribute__((constructor)) static void deferred_ctor(void)
{
	deferred_setup();
}

/*
 * The library is being unloaded (dlclose of the last object that needed it)
 * or the process exits: stop the worker and wait until it has left our
 * code, which is about to be unmapped in the first case. Later deferred
 * decrements happen at once (start_worker() refuses). The worker wakes from
 * its wait, or gives up waiting for the patch lock within 20 ms; pending
 * works are dropped: every object that could use them is going away with
 * the library, or the process is ending.
 */
__attribute__((destructor)) static void deferred_dtor(void)
{
	bool up;

	dq_take();
	__atomic_store_n(&quitting, true, __ATOMIC_RELAXED);
	up = worker_up;
	worker_up = false;
	if (up)
		pthread_cond_broadcast(&dq_cond);
	dq_release();
	if (up && !pthread_equal(worker_tid, pthread_self()))
		pthread_join(worker_tid, NULL);
}
