/* SPDX-License-Identifier: MIT */
/*
 * test_insn_a64.c - the AArch64 code mover and filler
 * (src/arch/aarch64/insn.c, compiled into the test) on instructions the
 * assembler encoded: every kind of relative operand (B, BL, B.cond, CBZ,
 * CBNZ, TBZ, TBNZ, LDR literal of a W, X, Q register and LDRSW, PRFM
 * literal, ADR, ADRP) aimed at a label outside the block, moved one word
 * at a time by distances from 4 bytes to 8 GiB: where the new offset fits
 * the field the moved word must name the same address (the same 4 KiB
 * page for ADRP), where it does not the move must be refused (-ERANGE).
 * Moved whole, the block's branches to its own words and to its end keep
 * their words; other words are copied as they are. The filler: NOPs, a B
 * to the end from five words on.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "sy_test.h"

#if !defined(__aarch64__)
int main(void)
{
	SKIP("AArch64 instructions");
}
#else
#include "internal.h"

/* hidden: addressed directly (a GOT entry for a label the asm keeps
 * local would be one per section, its offset lost) */
#define A64_HIDDEN __attribute__((visibility("hidden")))
extern const uint32_t a64_cases[] A64_HIDDEN, a64_cases_end[] A64_HIDDEN;
extern const uint32_t a64_far[] A64_HIDDEN;
extern const uint32_t a64_block[] A64_HIDDEN, a64_block_end[] A64_HIDDEN;

/*
 * a64_cases: one word each, aimed at a64_far (2 KiB further on: within
 * reach of every kind, TBZ's 32 KiB included); a64_block: branches within
 * itself and to its end, then words without a relative operand.
 */
__asm__(".pushsection .text.a64_cases, \"ax\", @progbits\n\t"
	".globl a64_cases, a64_cases_end, a64_far\n\t"
	".globl a64_block, a64_block_end\n\t"
	".hidden a64_cases, a64_cases_end, a64_far\n\t"
	".hidden a64_block, a64_block_end\n\t"
	".balign 4096\n"
	"a64_cases:\n\t"
	"b a64_far\n\t"
	"bl a64_far\n\t"
	"b.ne a64_far\n\t"
	"b.hs a64_far\n\t"
	"cbz x0, a64_far\n\t"
	"cbnz w7, a64_far\n\t"
	"tbz w1, #3, a64_far\n\t"
	"tbnz x9, #40, a64_far\n\t"
	"ldr x2, a64_far\n\t"
	"ldr w2, a64_far\n\t"
	"ldr q2, a64_far\n\t"
	"ldrsw x5, a64_far\n\t"
	"prfm pldl1keep, a64_far\n\t"
	"adr x3, a64_far\n\t"
	"adr x3, a64_far + 1\n\t"
	"adrp x4, a64_far\n"
	"a64_cases_end:\n"
	"a64_block:\n\t"
	"b 1f\n\t"
	"cbz x0, 2f\n\t"
	"tbz w0, #1, 1f\n\t"
	"ldr x1, 1f\n\t"
	"adr x1, 2f\n"
	"1:\tadd x0, x0, #1\n\t"
	"mov x1, #0x1234\n\t"
	"ret\n\t"
	"nop\n"
	"2:\n"
	"a64_block_end:\n\t"
	".balign 2048\n"
	"a64_far:\n\t"
	"nop\n\t"
	".popsection");

enum kind { NONE, B26, B19, B14, ADR, ADRP };

/* The test's own decoding (Arm ARM C4.1), to check the mover's. */
static enum kind kind_of(uint32_t w)
{
	if ((w & 0x7c000000u) == 0x14000000u)
		return B26;
	if ((w & 0xff000000u) == 0x54000000u ||
	    (w & 0x7e000000u) == 0x34000000u ||
	    (w & 0x3b000000u) == 0x18000000u)
		return B19;
	if ((w & 0x7e000000u) == 0x36000000u)
		return B14;
	if ((w & 0x1f000000u) == 0x10000000u)
		return w >> 31 ? ADRP : ADR;
	return NONE;
}

static int64_t sx(uint64_t v, unsigned bits)
{
	return (int64_t)(v << (64 - bits)) >> (64 - bits);
}

/* the address w names when it is at pc */
static uint64_t dest(uint32_t w, uint64_t pc)
{
	int64_t adr = sx((uint64_t)(w >> 5 & 0x7ffff) << 2 | (w >> 29 & 3), 21);

	switch (kind_of(w)) {
	case B26:
		return pc + (uint64_t)(sx(w & 0x3ffffff, 26) * 4);
	case B19:
		return pc + (uint64_t)(sx(w >> 5 & 0x7ffff, 19) * 4);
	case B14:
		return pc + (uint64_t)(sx(w >> 5 & 0x3fff, 14) * 4);
	case ADR:
		return pc + (uint64_t)adr;
	case ADRP:
		return (pc & ~0xfffull) + (uint64_t)(adr * 4096);
	default:
		return 0;
	}
}

/* whether an offset off fits the field of kind k */
static int fits(enum kind k, int64_t off)
{
	switch (k) {
	case B26:
		return off >= -(1ll << 27) && off < 1ll << 27;
	case B19:
	case ADR:
		return off >= -(1ll << 20) && off < 1ll << 20;
	case B14:
		return off >= -(1ll << 15) && off < 1ll << 15;
	case ADRP:
		return off >= -(1ll << 32) && off < 1ll << 32;
	default:
		return 1;
	}
}

static void check_one_by_one(int64_t delta)
{
	int n = (int)(a64_cases_end - a64_cases);

	for (int i = 0; i < n; i++) {
		uint32_t w = a64_cases[i], out = 0;
		uint64_t pc = (uint64_t)(uintptr_t)&a64_cases[i];
		uint64_t to = pc + (uint64_t)delta;
		enum kind k = kind_of(w);
		uint64_t want = dest(w, pc);
		int64_t off = k == ADRP ? (int64_t)(want - (to & ~0xfffull))
					: (int64_t)(want - to);
		int r;

		CHECK(k != NONE);
		/* the assembler aimed it there (word 14: a64_far + 1) */
		CHECK_EQ(want, k == ADRP ? (uint64_t)(uintptr_t)a64_far &
						   ~0xfffull
					 : (uint64_t)(uintptr_t)a64_far +
						   (i == 14 ? 1 : 0));
		r = sy_arch_code_move((uint8_t *)&out,
				      (const uint8_t *)&a64_cases[i], 4,
				      (uintptr_t)to);
		if (!fits(k, off)) {
			if (r != -ERANGE)
				fprintf(stderr, "word %d (%08x) moved by %lld: "
					"%d, not -ERANGE\n", i, w,
					(long long)delta, r);
			CHECK_EQ(r, -ERANGE);
			continue;
		}
		CHECK_EQ(r, 0);
		if (dest(out, to) != want)
			fprintf(stderr, "word %d (%08x) moved by %lld: %08x "
				"names %llx, not %llx\n", i, w,
				(long long)delta, out,
				(unsigned long long)dest(out, to),
				(unsigned long long)want);
		CHECK_EQ(dest(out, to), want);
		/* nothing but the offset changed */
		CHECK_EQ(kind_of(out), k);
		if (k == B26)
			CHECK_EQ(out & 0xfc000000u, w & 0xfc000000u);
		else if (k == ADR || k == ADRP)
			CHECK_EQ(out & 0x9f00001fu, w & 0x9f00001fu);
		else if (k == B19)
			CHECK_EQ(out & 0xff00001fu, w & 0xff00001fu);
		else
			CHECK_EQ(out & 0xfff8001fu, w & 0xfff8001fu);
	}
}

static void check_block(int64_t delta)
{
	size_t len = (size_t)(a64_block_end - a64_block) * 4;
	uint32_t out[16];
	uintptr_t to = (uintptr_t)a64_block + (uintptr_t)delta;

	CHECK(len <= sizeof(out));
	CHECK_EQ(sy_arch_code_move((uint8_t *)out, (const uint8_t *)a64_block,
				   len, to), 0);
	CHECK(!memcmp(out, a64_block, len));
}

static void check_fill(void)
{
	uint32_t buf[8];

	for (size_t words = 0; words <= 8; words++) {
		memset(buf, 0xff, sizeof(buf));
		sy_arch_nop_fill((uint8_t *)buf, words * 4);
		for (size_t i = 0; i < words; i++) {
			if (i == 0 && words >= SY_A64_PAD_BRANCH)
				/* B to the end */
				CHECK_EQ(buf[0], 0x14000000u | (uint32_t)words);
			else
				CHECK_EQ(buf[i], 0xd503201fu);
		}
		for (size_t i = words; i < 8; i++)
			CHECK_EQ(buf[i], 0xffffffffu);
	}
}

int main(void)
{
	static const int64_t deltas[] = {
		4, -4, 0x800, -0x1000, 0x1004, 0x7000, -0x7000, 0x9000,
		0xff000, 0x101000, -0x200000, 0x7fff000, 0x8001000,
		-0x8002000, 0x7ffff000, 0x100001000ll, -0x200000000ll,
	};
	uint32_t out[4];

	CHECK_EQ(a64_cases_end - a64_cases, 16);	/* the loops run */
	for (size_t i = 0; i < sizeof(deltas) / sizeof(deltas[0]); i++) {
		check_one_by_one(deltas[i]);
		check_block(deltas[i]);
	}
	check_fill();
	/* not whole words, not aligned */
	CHECK_EQ(sy_arch_code_move((uint8_t *)out, (const uint8_t *)a64_block,
				   6, (uintptr_t)a64_block + 8), -EINVAL);
	CHECK_EQ(sy_arch_code_move((uint8_t *)out, (const uint8_t *)a64_block,
				   4, (uintptr_t)a64_block + 2), -EINVAL);
	return sy_test_done("insn_a64");
}
#endif
