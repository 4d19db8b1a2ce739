/* SPDX-License-Identifier: MIT */
/*
 * arch/membarrier_sync.c - synchronise the cores after a change of code,
 * on x86-64 and AArch64 (Linux's membarrier is the same call on both; the
 * rule it satisfies is each architecture's, below).
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../internal.h"

/*
 * Cross-modifying code (Intel SDM vol. 3A, "Handling Self- and
 * Cross-Modifying Code", 8.1.3 in older editions, 9.1.3 in newer ones): a
 * processor may keep executing stale instruction bytes until it executes a
 * serialising instruction. membarrier(PRIVATE_EXPEDITED_SYNC_CORE) returns
 * only once every running thread of the process has done so (the kernel
 * IPIs them; the return to user mode through IRET serialises); threads not
 * running serialise when they are next scheduled in.
 *
 * AArch64 (Arm ARM B2.4.4, "Instruction cache maintenance", and B2.2.5,
 * "Concurrent modification and execution of instructions"): after the
 * writer's cache maintenance (sy_arch_code_written(): DC CVAU, DSB ISH, IC
 * IVAU, DSB ISH, ISB), another core may still run instructions it fetched
 * before, until it takes a context synchronisation event.
 * membarrier(PRIVATE_EXPEDITED_SYNC_CORE) (arm64 has it, Linux 4.16 on)
 * returns once every running thread of the process has taken one (the
 * IPI, and the exception return, ERET, that ends it); a thread not
 * running takes one when it is next scheduled in (ERET again).
 *
 * On x86-64 the writing thread itself needs nothing. For self-modifying code the same
 * section allows "store modified code (as data), jump to the new code or an
 * intermediate location, execute the new code" (its option 1), and the
 * processor snoops stores to code by physical address and drops the
 * prefetched bytes they hit (vol. 3A "Self-Modifying Code", 11.6 / 12.6).
 * Our writes reach the page through the kernel (/proc/self/mem) or through
 * our own stores, and many a jump and return lie between them and the
 * first execution of a site.
 *
 * So a process that has one thread needs no system call here at all. That
 * is what lets a program merely load (its sites and the library's own are
 * written at start-up, single-threaded) under a sandbox that kills on
 * membarrier, and it is why registration waits for the first sync that
 * needs it. The test is glibc's __libc_single_threaded (>= 2.32; weak, so
 * that an older glibc or another libc, where it is absent, always syncs).
 * Its contract (<sys/single_threaded.h>): non-zero means "the current
 * thread is the only thread in the process image"; zero means "might be
 * multi-threaded". pthread_create() clears it before the new thread
 * exists, and it never goes back to true when threads exit (glibc 2.36);
 * a child of fork() has one thread, so either value is sound there. It is
 * read after the writes, with the patch lock held:
 *  - a thread created before the read (even by a signal handler that
 *    interrupted our writes) has cleared it: we sync;
 *  - a thread created after it starts after our writes, and the kernel
 *    starts every new thread with a return to user mode through IRET
 *    (ret_from_fork), which serialises its core (ERET on AArch64: a
 *    context synchronisation event);
 *  - our own thread cleared it, so a plain load sees its latest value.
 * Threads made with a raw clone(CLONE_VM) behind glibc's back are not
 * counted; glibc itself (malloc, stdio) then skips its locks in the same
 * way, so such a program is unsupported by glibc already.
 */
extern char __libc_single_threaded __attribute__((weak));

bool sy_arch_single_threaded(void)
{
	return &__libc_single_threaded &&
	       __atomic_load_n(&__libc_single_threaded, __ATOMIC_RELAXED);
}

static int membarrier(int cmd)
{
	return syscall(__NR_membarrier, cmd, 0, 0) ? -errno : 0;
}

/* What a failed membarrier means, for the user. EPERM comes from a seccomp
 * filter or another sandbox (registration itself never fails with it);
 * ENOSYS or EINVAL from a kernel without the call or its command. */
const char *sy_membarrier_why(int err)
{
	switch (err) {
	case -EPERM:
	case -EACCES:
		return "denied (by a seccomp filter or another sandbox?)";
	case -ENOSYS:
		return "not supported (the kernel has no membarrier)";
	case -EINVAL:
		return "not supported (the kernel lacks the command)";
	default:
		return strerror(-err);
	}
}

static int membarrier_state;	/* 0 not registered, 1 registered, -errno */

/*
 * Returns 0 (every thread serialised, or there is only ours), or -errno
 * when membarrier is refused or missing (then only the calling thread is
 * known to be in sync; poke.c falls back to a TLB shootdown). The reason is
 * logged once. Patch lock held.
 */
int sy_arch_sync_cores(void)
{
	static int reported;
	int st = __atomic_load_n(&membarrier_state, __ATOMIC_RELAXED);
	int r = 0;

	if (sy_arch_single_threaded())
		return 0;
	if (st < 0)
		return st;
	for (int pass = 0; pass < 2; pass++) {
		if (st == 0) {
			r = membarrier(
			      MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE);
			st = r ? r : 1;
			__atomic_store_n(&membarrier_state, st,
					 __ATOMIC_RELAXED);
			if (r)
				break;
		}
		r = membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE);
		/* EPERM after our registration: a child of fork(), whose
		 * new mm is not registered. Register again, once. */
		if (r != -EPERM || pass)
			break;
		st = 0;
	}
	if (r && !reported) {
		reported = 1;
		sy_log(SWITCHYARD_LOG_INFO, "membarrier(PRIVATE_EXPEDITED_"
		       "SYNC_CORE): %s; cores are synchronised by a TLB "
		       "shootdown instead", sy_membarrier_why(r));
	}
	return r;
}
