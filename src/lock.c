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
static __thread char self_anchor;

static uintptr_t self_id(void)
{
	return (uintptr_t)&self_anchor;
}

void sy_lock(void)
{
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

int switchyard_patch_lock(void)
{
	if (sy_lock_held())
		return -EDEADLK;
	sy_lock();
	return 0;
}

int switchyard_patch_unlock(void)
{
	if (!sy_lock_held())
		return -EPERM;
	sy_unlock();
	return 0;
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

__attribute__((constructor)) static void lock_init(void)
{
	pthread_atfork(atfork_prepare, atfork_release, atfork_release);
}
