/* SPDX-License-Identifier: MIT */
/*
 * arch/aarch64/insn.c - moving code for alternatives: every instruction is
 * one aligned little-endian word, and the ones that name an address
 * relative to their own (Arm ARM C4.1, "A64 instruction set encoding": the
 * branch, exception generation and system group; loads and stores;
 * data processing - immediate) are re-aimed when the code moves:
 *
 *   instruction          mask / value            offset        reach
 *   B, BL                7c000000 / 14000000      imm26 * 4     +-128 MiB
 *   B.cond, BC.cond      ff000000 / 54000000      imm19 * 4     +-1 MiB
 *   CBZ, CBNZ            7e000000 / 34000000      imm19 * 4     +-1 MiB
 *   TBZ, TBNZ            7e000000 / 36000000      imm14 * 4     +-32 KiB
 *   LDR (literal), LDRSW (literal), PRFM (literal), SIMD&FP LDR (literal)
 *                        3b000000 / 18000000      imm19 * 4     +-1 MiB
 *   ADR                  9f000000 / 10000000      immhi:immlo   +-1 MiB
 *   ADRP                 9f000000 / 90000000      pages of 4 KiB  +-4 GiB
 *
 * A destination inside the moved code or at its end moves with it (the
 * offset between two of its own instructions does not change: the word
 * is copied as it is); any other keeps its address, and a new offset that
 * does not fit the field is refused (-ERANGE). ADRP names a 4 KiB page
 * (its ADD or LDR :lo12: partner holds the low bits, which do not move):
 * the same page is named from the new place.
 */
#include <errno.h>
#include <string.h>

#include "../../internal.h"

/* sign-extend the low bits of v */
static int64_t sext(uint64_t v, unsigned bits)
{
	return (int64_t)(v << (64 - bits)) >> (64 - bits);
}

/* a field of `bits` bits at `shift` holding off / scale, or false */
static bool put(uint32_t *w, int64_t off, unsigned scale, unsigned bits,
		unsigned shift)
{
	int64_t v = off / (int64_t)scale;
	uint32_t mask = (uint32_t)((1ull << bits) - 1);

	if (off % (int64_t)scale || v < -(1ll << (bits - 1)) ||
	    v >= 1ll << (bits - 1))
		return false;
	*w = (*w & ~(mask << shift)) | ((uint32_t)v & mask) << shift;
	return true;
}

/* One word's relative operand: its kind, or NONE. */
enum rel { NONE, IMM26, IMM19, IMM14, ADR, ADRP };

static enum rel kind(uint32_t w)
{
	if ((w & 0x7c000000u) == 0x14000000u)
		return IMM26;
	if ((w & 0xff000000u) == 0x54000000u ||
	    (w & 0x7e000000u) == 0x34000000u ||
	    (w & 0x3b000000u) == 0x18000000u)
		return IMM19;
	if ((w & 0x7e000000u) == 0x36000000u)
		return IMM14;
	if ((w & 0x9f000000u) == 0x10000000u)
		return ADR;
	if ((w & 0x9f000000u) == 0x90000000u)
		return ADRP;
	return NONE;
}

/* ADR/ADRP's 21-bit immediate: immhi [23:5], immlo [30:29] */
static int64_t adr_imm(uint32_t w)
{
	return sext((uint64_t)(w >> 5 & 0x7ffff) << 2 | (w >> 29 & 3), 21);
}

static uint32_t adr_set(uint32_t w, int64_t imm)
{
	uint32_t u = (uint32_t)imm & 0x1fffff;

	return (w & ~(0x7ffffu << 5 | 3u << 29)) | (u >> 2) << 5 |
	       (u & 3) << 29;
}

/*
 * Re-aim one word w, which was at pc and will be at to; [from, from + len]
 * is the moved range. 0, or -ERANGE.
 */
static int move_word(uint32_t *w, uintptr_t pc, uintptr_t to,
		     uintptr_t from, size_t len)
{
	int64_t off;
	uintptr_t dest;

	switch (kind(*w)) {
	case IMM26:
		off = sext(*w & 0x3ffffff, 26) * 4;
		break;
	case IMM19:
		off = sext(*w >> 5 & 0x7ffff, 19) * 4;
		break;
	case IMM14:
		off = sext(*w >> 5 & 0x3fff, 14) * 4;
		break;
	case ADR:
		off = adr_imm(*w);
		break;
	case ADRP: {
		uintptr_t page = (pc & ~(uintptr_t)0xfff) +
				 (uintptr_t)(adr_imm(*w) * 4096);
		int64_t d = (int64_t)(page - (to & ~(uintptr_t)0xfff)) / 4096;

		if (d < -(1ll << 20) || d >= 1ll << 20)
			return -ERANGE;
		*w = adr_set(*w, d);
		return 0;
	}
	default:
		return 0;
	}
	dest = pc + (uintptr_t)off;
	if (dest >= from && dest <= from + len)
		return 0;	/* moves with the code: the same offset */
	off = (int64_t)(dest - to);
	switch (kind(*w)) {
	case IMM26:
		return put(w, off, 4, 26, 0) ? 0 : -ERANGE;
	case IMM19:
		return put(w, off, 4, 19, 5) ? 0 : -ERANGE;
	case IMM14:
		return put(w, off, 4, 14, 5) ? 0 : -ERANGE;
	default:	/* ADR */
		if (off < -(1ll << 20) || off >= 1ll << 20)
			return -ERANGE;
		*w = adr_set(*w, off);
		return 0;
	}
}

int sy_arch_code_move(uint8_t *buf, const uint8_t *from, size_t len,
		      uintptr_t to)
{
	if ((len & 3) || ((uintptr_t)from & 3) || (to & 3))
		return -EINVAL;
	for (size_t i = 0; i < len; i += 4) {
		uint32_t w = sy_a64_word(from + i);
		int r = move_word(&w, (uintptr_t)from + i, to + i,
				  (uintptr_t)from, len);

		if (r)
			return r;
		memcpy(buf + i, &w, 4);
	}
	return 0;
}

/*
 * len bytes (whole words) of padding: NOPs, or from SY_A64_PAD_BRANCH
 * words on a B over the rest (NOPs behind it, never run). A NOP still
 * takes a slot of the decoder; a taken direct branch costs a fetch
 * redirect instead, cheaper than a run of NOPs as wide as a decode group
 * (4 to 8 instructions a cycle on current cores). A choice, not a
 * measurement: nothing here was timed.
 */
void sy_arch_nop_fill(uint8_t *buf, size_t len)
{
	uint32_t nop = SY_A64_NOP;
	size_t i = 0;

	if (len / 4 >= SY_A64_PAD_BRANCH) {
		uint32_t b = SY_A64_B | (uint32_t)(len / 4);

		memcpy(buf, &b, 4);
		i = 4;
	}
	for (; i + 4 <= len; i += 4)
		memcpy(buf + i, &nop, 4);
	memset(buf + i, 0, len - i);
}
