/* SPDX-License-Identifier: MIT */
/*
 * insn.h - the instructions the switchyard tool reads and writes in a
 * file, per machine (insn.c): the forms of a static key site (x86-64: the
 * jump the compiler emitted or its TEST form; AArch64: a B to the
 * out-of-line code or a NOP), the static call site's BL (AArch64), and
 * instructions as text, through capstone when the tool was built with it,
 * else through the tool's own decoder of those forms. Not library API.
 *
 * The tool has its own encoders rather than the library's
 * (src/arch/ARCH/sy_arch.h): those are built for the machine the library
 * runs on, and an x86-64 tool reads AArch64 files (cross-built products
 * are inspected on the build machine).
 */
#ifndef SY_TOOLS_INSN_H
#define SY_TOOLS_INSN_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* x86-64: a static key site's first byte (the rel8 or rel32 follows) */
#define X86_JMP8 0xeb
#define X86_JMP32 0xe9
#define X86_TEST8 0xa8		/* test $imm8, %al */
#define X86_TEST32 0xa9		/* test $imm32, %eax */

/* AArch64 (Arm ARM C6.2: NOP, B, BL, BRK), little-endian words */
#define A64_NOP 0xd503201fu
#define A64_B 0x14000000u
#define A64_BL 0x94000000u
#define A64_BRANCH_MASK 0xfc000000u	/* B and BL: opcode, imm26 */
#define A64_BRK 0xd4200000u
#define A64_BRK_MASK 0xffe0001fu

/* The little-endian word at p */
static inline uint32_t a64_word(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline void a64_put(uint8_t *p, uint32_t w)
{
	p[0] = (uint8_t)w;
	p[1] = (uint8_t)(w >> 8);
	p[2] = (uint8_t)(w >> 16);
	p[3] = (uint8_t)(w >> 24);
}

/* B (op A64_B) or BL (A64_BL) from pc to target, or 0 when target is
 * misaligned or beyond +-128 MiB */
static inline uint32_t a64_branch(uint32_t op, uint64_t pc, uint64_t target)
{
	int64_t d = (int64_t)(target - pc);

	if ((d & 3) || d < -(INT64_C(1) << 27) || d >= INT64_C(1) << 27)
		return 0;
	return op | ((uint32_t)(d >> 2) & 0x03ffffffu);
}

/* The destination of the B or BL w at pc */
static inline uint64_t a64_branch_target(uint32_t w, uint64_t pc)
{
	int64_t imm = (int64_t)(w & 0x03ffffffu);	/* imm26, signed */

	if (imm & 0x02000000)
		imm -= 0x04000000;
	return pc + (uint64_t)(imm * 4);
}

/* The machines the tool reads: EM_X86_64, EM_AARCH64 */
static inline bool insn_machine_known(unsigned machine)
{
	return machine == EM_X86_64 || machine == EM_AARCH64;
}

/* The tool's own machine (the one a live process's bytes are from when
 * nothing says otherwise) */
#if defined(__aarch64__)
#define INSN_HOST_MACHINE EM_AARCH64
#else
#define INSN_HOST_MACHINE EM_X86_64
#endif

/* "x86-64", "AArch64" */
const char *insn_machine_name(unsigned machine);

/*
 * A disassembler for one machine's code: capstone's when the tool has it,
 * else the tool's own, which knows the forms above (and RET) and calls
 * anything else "(not decoded)". Not thread-safe (one per thread).
 */
struct insn_dis {
	unsigned machine;
	uintptr_t cs;	/* capstone's handle, 0 without */
};

void insn_dis_open(struct insn_dis *d, unsigned machine);
void insn_dis_close(struct insn_dis *d);
/*
 * The first instruction of b[0, n), at address addr, as "mnemonic
 * operands" in buf: its length, or 0 and "(not decoded)".
 */
size_t insn_text(struct insn_dis *d, const uint8_t *b, size_t n,
		 uint64_t addr, char *buf, size_t size);
/*
 * Every instruction of b[0, n) at addr, "; " between them, in buf (cut
 * at size); an undecodable rest as its bytes in hex.
 */
void insn_text_all(struct insn_dis *d, const uint8_t *b, size_t n,
		   uint64_t addr, char *buf, size_t size);

#endif /* SY_TOOLS_INSN_H */
