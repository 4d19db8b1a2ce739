/* SPDX-License-Identifier: MIT */
/*
 * arch/x86_64/sync.c - synchronise the cores after a change of code.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../internal.h"

/*
 * Cross-modifying code (Intel SDM vol. 3, 8.1.3): a processor may keep
 * executing stale instruction bytes until it executes a serialising
 * instruction. membarrier(PRIVATE_EXPEDITED_SYNC_CORE) returns only once
 * every running thread of the process has done so (the kernel IPIs them;
 * the return to user mode through IRET serialises); threads not running
 * serialise when they are next scheduled in. The writing thread itself
 * needs nothing: stores to code are snooped by physical address (SDM 11.6),
 * and our writes reach the page either through the kernel (/proc/self/mem)
 * or through our own stores, both before the system call that returns here.
 *
 * Returns 0, or -ENOSYS when the kernel lacks the command (then only the
 * calling thread is known to be in sync; [2/8] builds the fallback).
 */
static int membarrier_state;	/* 0 unknown, 1 registered, -errno failed */

int sy_arch_sync_cores(void)
{
	int st = __atomic_load_n(&membarrier_state, __ATOMIC_RELAXED);

	if (st == 0) {
		if (syscall(__NR_membarrier,
			    MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE,
			    0, 0) == 0)
			st = 1;
		else
			st = -errno;
		__atomic_store_n(&membarrier_state, st, __ATOMIC_RELAXED);
	}
	if (st < 0)
		return st;
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE,
		    0, 0) != 0)
		return -errno;
	return 0;
}
