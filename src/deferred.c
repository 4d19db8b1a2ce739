/* SPDX-License-Identifier: MIT */
/*
 * deferred.c - deferred keys: the final decrement waits `timeout` ms on a
 * background thread, so that dec/inc pairs within the window never patch.
 *
 * The queue, every work's sy_pending/sy_due_ns/sy_next and `running` are
 * protected by dq_lock. No thread holds dq_lock and the patch lock at once.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "internal.h"

static pthread_mutex_t dq_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t dq_cond;		/* queue changed: worker wakes */
static pthread_cond_t dq_done;		/* a work ran: flushers wake */
static struct sy_delayed_work *queue;	/* unordered; a handful of works */
static struct sy_delayed_work *running;
static bool worker_up;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull +
	       (unsigned long long)ts.tv_nsec;
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

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&dq_lock);
	for (;;) {
		struct sy_delayed_work *due = NULL;
		unsigned long long now = now_ns(), next = ~0ull;

		for (struct sy_delayed_work *w = queue; w; w = w->sy_next) {
			if (w->sy_due_ns <= now) {
				due = w;
				break;
			}
			if (w->sy_due_ns < next)
				next = w->sy_due_ns;
		}
		if (due) {
			struct static_key *key = due->sy_key;

			unqueue(due);
			running = due;
			pthread_mutex_unlock(&dq_lock);
			sy_key_dec(key);
			pthread_mutex_lock(&dq_lock);
			running = NULL;
			pthread_cond_broadcast(&dq_done);
			continue;
		}
		if (next == ~0ull) {
			pthread_cond_wait(&dq_cond, &dq_lock);
		} else {
			struct timespec ts = {
				.tv_sec = (time_t)(next / 1000000000ull),
				.tv_nsec = (long)(next % 1000000000ull),
			};
			pthread_cond_timedwait(&dq_cond, &dq_lock, &ts);
		}
	}
	return NULL;
}

static void deferred_setup(void);

/* dq_lock held. The worker blocks every signal: the application's handlers
 * must never run on a thread it does not know about. */
static int start_worker(void)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t tid;
	int r;

	if (worker_up)
		return 0;
	sigfillset(&all);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&tid, &attr, worker, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (r)
		return -r;
	worker_up = true;
	return 0;
}

static int dec_deferred(struct static_key *key, struct sy_delayed_work *work,
			unsigned long timeout)
{
	int v = __atomic_load_n(&key->enabled, __ATOMIC_ACQUIRE);
	int r = 0;

	deferred_setup();
	/* Above 1: an ordinary decrement, at once (lock-free cmpxchg). */
	while (v > 1)
		if (__atomic_compare_exchange_n(&key->enabled, &v, v - 1, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_ACQUIRE))
			return 0;
	if (v <= 0)
		return sy_key_dec(key);	/* reports the misuse */

	pthread_mutex_lock(&dq_lock);
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
	pthread_mutex_unlock(&dq_lock);
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

static int flush(struct sy_delayed_work *work)
{
	struct static_key *k = NULL;

	deferred_setup();
	pthread_mutex_lock(&dq_lock);
	if (work->sy_pending) {
		k = work->sy_key;
		unqueue(work);
	}
	while (running == work)
		pthread_cond_wait(&dq_done, &dq_lock);
	pthread_mutex_unlock(&dq_lock);
	return k ? sy_key_dec(k) : 0;
}

int __static_key_deferred_flush(void *key, struct sy_delayed_work *work)
{
	(void)key;
	return SY_GUARDED(flush(work));
}

void jump_label_rate_limit(struct static_key_deferred *key, unsigned long rl)
{
	__atomic_store_n(&key->timeout, rl, __ATOMIC_RELAXED);
}

/*
 * fork(): the worker does not exist in the child; if works are pending
 * there, start a new one so that their decrements still happen.
 */
static void dq_prepare(void)
{
	pthread_mutex_lock(&dq_lock);
}

static void dq_parent(void)
{
	pthread_mutex_unlock(&dq_lock);
}

static void dq_child(void)
{
	worker_up = false;
	running = NULL;
	if (queue)
		start_worker();
	pthread_mutex_unlock(&dq_lock);
}

static void deferred_init(void)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&dq_cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&dq_done, NULL);
	pthread_atfork(dq_prepare, dq_parent, dq_child);
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
