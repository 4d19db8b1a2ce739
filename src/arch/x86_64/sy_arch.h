/* SPDX-License-Identifier: MIT */
/*
 * arch/x86_64/sy_arch.h - encode and verify x86-64 jump label sites (the
 * per-arch contract of src/internal.h; inline, because registration calls
 * them for every site).
 *
 *   form     bytes             length  effect
 *   TEST8    a8 rel8           2       test al, imm8: writes flags only
 *   JMP8     eb rel8           2       jump to the out-of-line code
 *   TEST32   a9 rel32          5       test eax, imm32: writes flags only
 *   JMP32    e9 rel32          5       jump to the out-of-line code
 *
 * rel is the target minus the address of the next instruction. A site keeps
 * its length for life: the assembler chose it from the distance, so the
 * jump always fits.
 *
 * Why TEST and not NOP for the disabled form: each TEST form differs from
 * its JMP in the first byte only, so every change of a site is a one-byte
 * store. Another thread executing the site meanwhile fetches either the old
 * or the new opcode byte, never a mix of two instructions: a single byte
 * cannot be torn, and the bytes after it are the same immediate/rel in both
 * instructions (this is the property the kernel gets from its one-byte INT3
 * in text_poke_bp(); Intel SDM vol. 3 8.1.3 asks for serialisation only so
 * that the executing thread stops using stale bytes, which the sync step
 * gives). A NOP differs from the JMP in every byte, and patching it while
 * threads run needs the kernel's breakpoint protocol: a trap that a thread
 * blocking SIGTRAP turns into a crash (the kernel forces the signal and
 * resets it to SIG_DFL). TEST writes only the flags, which the site's asm
 * declares clobbered; it reads al/eax, whose value is irrelevant. It is one
 * instruction and one ALU uop, as cheap as a NOP in the measurements of
 * doc/BENCHMARKS.md.
 */
#ifndef SY_ARCH_X86_64_H
#define SY_ARCH_X86_64_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define SY_ARCH_MAX_INSN 16

#define SY_X86_JMP8 0xeb
#define SY_X86_JMP32 0xe9
#define SY_X86_TEST8 0xa8	/* test al, imm8 */
#define SY_X86_TEST32 0xa9	/* test eax, imm32 */

/* The site must hold the jump the assembler emitted, to target. */
static inline int sy_arch_jump_decode(uintptr_t code, uintptr_t target,
				      unsigned *len)
{
	const uint8_t *p = (const uint8_t *)code;
	intptr_t rel;

	if (p[0] == SY_X86_JMP8) {
		rel = (intptr_t)target - (intptr_t)(code + 2);
		if (rel == (int8_t)p[1]) {
			*len = 2;
			return 0;
		}
	} else if (p[0] == SY_X86_JMP32) {
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

static inline void sy_arch_jump_encode(uintptr_t code, uintptr_t target,
				       unsigned len, bool jump, uint8_t *out)
{
	if (len == 2) {
		out[0] = jump ? SY_X86_JMP8 : SY_X86_TEST8;
		out[1] = (uint8_t)(int8_t)((intptr_t)target - (intptr_t)(code + 2));
	} else {
		int32_t r32 = (int32_t)((intptr_t)target - (intptr_t)(code + 5));

		out[0] = jump ? SY_X86_JMP32 : SY_X86_TEST32;
		memcpy(out + 1, &r32, 4);
	}
}

/* Both forms at once (old, new): they share everything but the opcode. */
static inline void sy_arch_jump_encode_pair(uintptr_t code, uintptr_t target,
					    unsigned len, bool old_jump,
					    bool new_jump, uint8_t *old,
					    uint8_t *new_)
{
	sy_arch_jump_encode(code, target, len, new_jump, new_);
	memcpy(old, new_, len);
	old[0] = len == 2 ? (old_jump ? SY_X86_JMP8 : SY_X86_TEST8)
			  : (old_jump ? SY_X86_JMP32 : SY_X86_TEST32);
}

#endif /* SY_ARCH_X86_64_H */
