/* SPDX-License-Identifier: MIT */
/*
 * arch/x86_64/jump_label.c - encode and verify x86-64 jump label sites, and
 * synchronise the cores after a change.
 *
 *   form    bytes               length
 *   NOP2    66 90               2
 *   JMP8    eb rel8             2
 *   NOP5    0f 1f 44 00 00      5
 *   JMP32   e9 rel32            5
 *
 * rel is the target minus the address of the next instruction. A site keeps
 * its length for life: the assembler chose it from the distance, so the
 * jump form always fits.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../internal.h"

static const uint8_t nop2[2] = { 0x66, 0x90 };
static const uint8_t nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

int sy_arch_jump_decode(uintptr_t code, uintptr_t target, unsigned *len)
{
	const uint8_t *p = (const uint8_t *)code;
	intptr_t rel;

	if (p[0] == 0xeb) {
		rel = (intptr_t)target - (intptr_t)(code + 2);
		if (rel == (int8_t)p[1]) {
			*len = 2;
			return 0;
		}
	} else if (p[0] == 0xe9) {
		int32_t r32;

		memcpy(&r32, p + 1, 4);
		rel = (intptr_t)target - (intptr_t)(code + 5);
		if (rel == r32) {
			*len = 5;
			return 0;
		}
	}
	return -EFAULT;
}

void sy_arch_jump_encode(uintptr_t code, uintptr_t target, unsigned len,
			 bool jump, uint8_t *out)
{
	if (len == 2) {
		if (jump) {
			out[0] = 0xeb;
			out[1] = (uint8_t)(int8_t)((intptr_t)target - (intptr_t)(code + 2));
		} else {
			memcpy(out, nop2, 2);
		}
		return;
	}
	if (jump) {
		int32_t r32 = (int32_t)((intptr_t)target - (intptr_t)(code + 5));

		out[0] = 0xe9;
		memcpy(out + 1, &r32, 4);
	} else {
		memcpy(out, nop5, 5);
	}
}

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
