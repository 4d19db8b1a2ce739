/* SPDX-License-Identifier: MIT */
/*
 * arch/x86_64/sy_arch.h - encode and verify x86-64 jump label sites (the
 * per-arch contract of src/internal.h; inline, because registration calls
 * them for every site).
 *
 *   form    bytes               length
 *   NOP2    66 90               2
 *   JMP8    eb rel8             2
 *   NOP5    0f 1f 44 00 00      5
 *   JMP32   e9 rel32            5
 *
 * rel is the target minus the address of the next instruction. A site keeps
 * its length for life: the assembler chose it from the distance, so the
 * jump form always fits. NOP5 is the form the SDM recommends for 5 bytes
 * (NOP DWORD ptr [EAX + EAX*1 + 00H]); NOP2 is the operand-size prefixed
 * NOP (66 90).
 */
#ifndef SY_ARCH_X86_64_H
#define SY_ARCH_X86_64_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define SY_ARCH_MAX_INSN 16

static const uint8_t sy_nop2[2] = { 0x66, 0x90 };
static const uint8_t sy_nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

static inline int sy_arch_jump_decode(uintptr_t code, uintptr_t target, unsigned *len)
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

static inline void sy_arch_jump_encode(uintptr_t code, uintptr_t target, unsigned len,
			 bool jump, uint8_t *out)
{
	if (len == 2) {
		if (jump) {
			out[0] = 0xeb;
			out[1] = (uint8_t)(int8_t)((intptr_t)target - (intptr_t)(code + 2));
		} else {
			memcpy(out, sy_nop2, 2);
		}
		return;
	}
	if (jump) {
		int32_t r32 = (int32_t)((intptr_t)target - (intptr_t)(code + 5));

		out[0] = 0xe9;
		memcpy(out + 1, &r32, 4);
	} else {
		memcpy(out, sy_nop5, 5);
	}
}

#endif /* SY_ARCH_X86_64_H */
