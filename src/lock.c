/* SPDX-License-Identifier: MIT */
/*
 * lock.c - the patch lock: one mutex for every change of code, with its
 * owner recorded so that the _cpuslocked() variants can check their caller
 * and the other calls can refuse to deadlock.
 *
 * The lowest layer with guard.c: it calls no other file. The API that
 * takes it (switchyard_patch_lock()) and the fork handlers that take and
 * release it around fork() are lock_order.c's, which holds the written
 * lock order.
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

void sy_lock(void)
{
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
