/* SPDX-License-Identifier: MIT */
/*
 * e2_pvlock_locks.c - the lock functions of e2_pvlock.c, in a translation
 * unit of their own as the kernel's are: the callers' compiler knows
 * nothing of them (no inlining, no interprocedural register allocation),
 * whichever way they are called. tas_unlock_nat() is tas_unlock() under
 * another address: a native is registered per function, and the static
 * call variant (c) must keep calling the plain one.
 */
#define _GNU_SOURCE
#include "seeds.h"

#define SPINS_BEFORE_YIELD 4096

__attribute__((noinline)) SEED_NO_ICF void tas_lock(struct tas_lock *l)
{
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE)) {
		unsigned spins = 0;

		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED)) {
			__builtin_ia32_pause();
			if (++spins == SPINS_BEFORE_YIELD) {
				sched_yield();
				spins = 0;
			}
		}
	}
}

__attribute__((noinline)) SEED_NO_ICF void tas_unlock(struct tas_lock *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

__attribute__((noinline)) SEED_NO_ICF void tas_unlock_nat(struct tas_lock *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}
