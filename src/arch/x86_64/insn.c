/* SPDX-License-Identifier: MIT */
/*
 * arch/x86_64/insn.c - an x86-64 instruction length decoder, and what the
 * alternatives need from it: moving code to another address with its
 * relative operands keeping their destinations, and filling a gap with the
 * fewest NOPs.
 *
 * The decoder knows lengths and where the relative operands are, nothing
 * else (Intel SDM vol. 2, chapter 2 and appendix A; AMD APM vol. 3). It
 * covers the legacy, 0F, 0F38 and 0F3A maps, VEX, EVEX and AMD's XOP.
 * tests/alternative/test_insn.sh checks it against objdump over the whole
 * text of the C library.
 *
 *   relative operand                      size  where
 *   jcc rel8 (70-7f), loop/jrcxz (e0-e3)  1     the last byte
 *   jmp rel8 (eb)                         1     the last byte
 *   call/jmp rel32 (e8, e9)               4     the last 4 bytes
 *   jcc rel32 (0f 80-8f)                  4     the last 4 bytes
 *   xbegin rel32 (c7 f8)                  4     the last 4 bytes
 *   RIP-relative memory (mod 00, rm 101)  4     after the ModRM byte
 * Each is relative to the end of the instruction (an immediate after a
 * RIP-relative displacement included).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "../../internal.h"

/* One-byte map: bits 0-2 the immediate (table below), bit 3 ModRM,
 * bit 4 invalid in 64-bit mode, bit 5 relative. */
enum {
	I0 = 0, IB = 1, IW = 2, IZ = 3, IV = 4, IWB = 5, IMO = 6, IFX = 7,
	M = 8, X = 16, R = 32,
};

/* imm: IB 1, IW 2, IZ 4 (2 with 66), IV 4 (8 with REX.W, 2 with 66),
 * IWB 3 (enter), IMO a moffs (8, 4 with 67), IFX: F6/F7's TEST form
 * (imm8/immz when ModRM.reg is 0 or 1). */
static const uint8_t map1[256] = {
	/* 00 */ M, M, M, M, IB, IZ, X, X, M, M, M, M, IB, IZ, X, 0,
	/* 10 */ M, M, M, M, IB, IZ, X, X, M, M, M, M, IB, IZ, X, X,
	/* 20 */ M, M, M, M, IB, IZ, 0, X, M, M, M, M, IB, IZ, 0, X,
	/* 30 */ M, M, M, M, IB, IZ, 0, X, M, M, M, M, IB, IZ, 0, X,
	/* 40 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 50 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 60 */ X, X, X, M, 0, 0, 0, 0, IZ, M | IZ, IB, M | IB, 0, 0, 0, 0,
	/* 70 */ R | IB, R | IB, R | IB, R | IB, R | IB, R | IB, R | IB,
		 R | IB, R | IB, R | IB, R | IB, R | IB, R | IB, R | IB,
		 R | IB, R | IB,
	/* 80 */ M | IB, M | IZ, X, M | IB, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 90 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, X, 0, 0, 0, 0, 0,
	/* a0 */ IMO, IMO, IMO, IMO, 0, 0, 0, 0, IB, IZ, 0, 0, 0, 0, 0, 0,
	/* b0 */ IB, IB, IB, IB, IB, IB, IB, IB, IV, IV, IV, IV, IV, IV, IV, IV,
	/* c0 */ M | IB, M | IB, IW, 0, X, X, M | IB, M | IZ, IWB, 0, IW, 0,
		 0, IB, X, 0,
	/* d0 */ M, M, M, M, X, X, X, 0, M, M, M, M, M, M, M, M,
	/* e0 */ R | IB, R | IB, R | IB, R | IB, IB, IB, IB, IB, R | IZ, R | IZ,
		 X, R | IB, 0, 0, 0, 0,
	/* f0 */ 0, 0, 0, 0, 0, 0, M | IFX, M | IFX, 0, 0, 0, 0, 0, 0, M, M,
};

/* 0F map: 1 ModRM, 2 imm8, 4 rel32, 8 invalid/unknown */
static uint8_t map2(uint8_t op)
{
	if (op >= 0x80 && op <= 0x8f)
		return 4;
	switch (op) {
	case 0x04: case 0x0a: case 0x0c:
	case 0x24: case 0x25: case 0x26: case 0x27:
	case 0x36: case 0x39: case 0x3b: case 0x3c: case 0x3d: case 0x3e:
	case 0x3f:
		return 8;
	case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0b:
	case 0x0e: case 0x30: case 0x31: case 0x32: case 0x33: case 0x34:
	case 0x35: case 0x37: case 0x77: case 0xa0: case 0xa1: case 0xa2:
	case 0xa8: case 0xa9: case 0xaa:
		return 0;
	case 0x0f:			/* 3DNow!: ModRM, then the opcode */
	case 0x70: case 0x71: case 0x72: case 0x73:
	case 0xa4: case 0xac: case 0xba:
	case 0xc2: case 0xc4: case 0xc5: case 0xc6:
		return 1 | 2;
	default:
		break;
	}
	if (op >= 0xc8 && op <= 0xcf)	/* bswap */
		return 0;
	return 1;
}

/* VEX/EVEX map 1 (0F): the opcodes with an imm8 */
static bool vex_map1_imm(uint8_t op)
{
	return (op >= 0x70 && op <= 0x73) || op == 0xc2 || op == 0xc4 ||
	       op == 0xc5 || op == 0xc6;
}

/*
 * ModRM, SIB and displacement from p (the ModRM byte). Returns the bytes
 * they take (0: past the end) and whether the operand is RIP-relative.
 */
static unsigned modrm_len(const uint8_t *p, const uint8_t *end, bool *rip)
{
	unsigned mod, rm, n = 1;

	if (p >= end)
		return 0;
	mod = p[0] >> 6;
	rm = p[0] & 7;
	*rip = false;
	if (mod == 3)
		return 1;
	if (rm == 4) {
		if (p + 1 >= end)
			return 0;
		n++;
		if (mod == 0 && (p[1] & 7) == 5)
			return n + 4;	/* SIB without base: disp32 */
	} else if (mod == 0 && rm == 5) {
		*rip = true;
		return n + 4;
	}
	return n + (mod == 1 ? 1 : mod == 2 ? 4 : 0);
}

/*
 * One instruction as far as it is decoded: where the next byte is, the
 * prefixes that change operand sizes, and the sizes found so far.
 */
struct dec {
	const uint8_t *p, *end;	/* the next byte; the end of the input */
	bool o16, a32, rexw;	/* 66, 67, REX.W */
	bool rip;		/* the memory operand is RIP-relative */
	unsigned imm;		/* immediate bytes (a rel operand's included) */
	unsigned mlen;		/* ModRM, SIB and displacement bytes */
	unsigned rel;		/* relative operand bytes (the last ones) */
};

/* The operand at d->p (a ModRM byte): d->mlen, or -EINVAL past the end. */
static int dec_modrm(struct dec *d)
{
	d->mlen = modrm_len(d->p, d->end, &d->rip);
	return d->mlen ? 0 : -EINVAL;
}

/* Legacy prefixes, then at most one REX: d->p is left on the opcode. */
static int dec_prefixes(struct dec *d)
{
	for (;; d->p++) {
		if (d->p >= d->end)
			return -EINVAL;
		switch (*d->p) {
		case 0x66:
			d->o16 = true;
			continue;
		case 0x67:
			d->a32 = true;
			continue;
		case 0xf0: case 0xf2: case 0xf3:
		case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
			continue;
		default:
			break;
		}
		break;
	}
	if ((*d->p & 0xf0) == 0x40) {
		d->rexw = *d->p & 8;
		if (++d->p >= d->end)
			return -EINVAL;
	}
	return 0;
}

/* XOP (AMD): 8f + 2 bytes, map 8 (imm8), 9, 10 (imm32); d->p past the 8f. */
static int dec_xop(struct dec *d)
{
	unsigned map;

	if (d->p + 2 >= d->end)
		return -EINVAL;
	map = d->p[0] & 0x1f;
	if (map < 8 || map > 10)
		return -EINVAL;
	d->p += 2;
	d->p++;		/* the opcode */
	if (dec_modrm(d))
		return -EINVAL;
	d->imm = map == 8 ? 1 : map == 10 ? 4 : 0;
	return 0;
}

/* VEX (c5: 2 bytes, c4: 3) or EVEX (62: 4): the map, then opcode + ModRM;
 * d->p past the first byte, op. */
static int dec_vex(struct dec *d, uint8_t op)
{
	unsigned nb = op == 0xc5 ? 1 : op == 0xc4 ? 2 : 3, map;

	if (d->p + nb >= d->end)
		return -EINVAL;
	map = op == 0xc5 ? 1 : d->p[0] & (op == 0x62 ? 7 : 0x1f);
	d->p += nb;
	op = *d->p++;
	if (map == 1 && op == 0x77 && nb == 1)
		d->mlen = 0;	/* vzeroupper/vzeroall: no ModRM */
	else if (dec_modrm(d))
		return -EINVAL;
	if (map == 3 || (map == 1 && vex_map1_imm(op)))
		d->imm = 1;
	else if (map < 1 || map > 7 || map == 4)
		return -EINVAL;
	return 0;
}

/* The 0F map (map2()), and 0F38 and 0F3A; d->p past the 0f. */
static int dec_0f(struct dec *d)
{
	uint8_t op, f;

	if (d->p >= d->end)
		return -EINVAL;
	op = *d->p++;
	if (op == 0x38 || op == 0x3a) {
		if (d->p >= d->end)
			return -EINVAL;
		d->p++;
		if (dec_modrm(d))
			return -EINVAL;
		d->imm = op == 0x3a;
		return 0;
	}
	f = map2(op);
	if (f & 8)
		return -EINVAL;
	if (f & 4) {
		d->imm = 4;
		d->rel = 4;
	}
	if (op >= 0x20 && op <= 0x23) {
		d->mlen = 1;	/* mov cr/dr: mod is ignored */
		if (d->p >= d->end)
			return -EINVAL;
	} else if ((f & 1) && dec_modrm(d)) {
		return -EINVAL;
	}
	if (f & 2)
		d->imm = 1;
	return 0;
}

/* The one-byte map (map1[]): opcode op, d->p past it. */
static int dec_map1(struct dec *d, uint8_t op)
{
	uint8_t f = map1[op];

	if (f & X)
		return -EINVAL;
	if ((f & M) && dec_modrm(d))
		return -EINVAL;
	switch (f & 7) {
	case IB:
		d->imm = 1;
		break;
	case IW:
		d->imm = 2;
		break;
	case IZ:
		d->imm = d->o16 && !d->rexw && !(f & R) ? 2 : 4;
		break;
	case IV:
		d->imm = d->rexw ? 8 : d->o16 ? 2 : 4;
		break;
	case IWB:
		d->imm = 3;
		break;
	case IMO:
		d->imm = d->a32 ? 4 : 8;
		break;
	case IFX:
		if (((d->p[0] >> 3) & 7) < 2)
			d->imm = op == 0xf6 ? 1 : d->o16 ? 2 : 4;
		break;
	default:
		break;
	}
	if (f & R)
		d->rel = d->imm;
	if (op == 0xc7 && d->p[0] == 0xf8)
		d->rel = d->imm;	/* xbegin rel32 (rel16 with 66) */
	if (d->rel && d->o16 && !d->rexw)
		return -EINVAL;	/* Intel ignores 66 on a branch, AMD
				   truncates the target: refused */
	return 0;
}

int sy_x86_insn_decode(const uint8_t *p, size_t avail, struct sy_x86_insn *in)
{
	struct dec d = { .p = p, .end = p + (avail > 15 ? 15 : avail) };
	uint8_t op;
	int r;

	memset(in, 0, sizeof(*in));
	if (dec_prefixes(&d))
		return -EINVAL;
	op = *d.p++;
	if (op == 0x8f && d.p < d.end && (d.p[0] & 0x38))
		r = dec_xop(&d);
	else if (op == 0xc4 || op == 0xc5 || op == 0x62)
		r = dec_vex(&d, op);
	else if (op == 0x0f)
		r = dec_0f(&d);
	else
		r = dec_map1(&d, op);
	if (r)
		return r;
	d.p += d.mlen;
	if (d.p + d.imm > d.end)
		return -EINVAL;
	in->len = (uint8_t)(d.p + d.imm - p);
	if (d.rel) {
		in->rel_size = (uint8_t)d.rel;
		in->rel_off = (uint8_t)(in->len - d.rel);
	} else if (d.rip) {
		in->rel_size = 4;
		in->rel_off = (uint8_t)(d.p - 4 - p);
	}
	in->branch = d.rel != 0;
	return 0;
}

/*
 * Copy len bytes of code from `from` to buf, which will be written at `to`:
 * every relative operand whose destination lies outside [from, from + len]
 * gets its displacement moved by from - to, so the code at `to` reaches
 * the same places (an operand whose destination lies inside, or at the
 * end, moves with the code). Returns 0, or -EINVAL (an instruction the
 * decoder does not know, or one crossing the end) or -ERANGE (a
 * displacement no longer fits: rel8 to outside, or rel32 beyond 2 GiB).
 */
int sy_arch_code_move(uint8_t *buf, const uint8_t *from, size_t len,
		      uintptr_t to)
{
	uintptr_t f = (uintptr_t)from;

	memcpy(buf, from, len);
	for (size_t off = 0; off < len;) {
		struct sy_x86_insn in;
		int64_t disp, dest;

		if (sy_x86_insn_decode(from + off, len - off, &in))
			return -EINVAL;
		if (in.rel_size) {
			uint8_t *d = buf + off + in.rel_off;

			if (in.rel_size == 1) {
				disp = (int8_t)*d;
			} else {
				int32_t v;

				memcpy(&v, d, 4);
				disp = v;
			}
			dest = (int64_t)(f + off + in.len) + disp;
			/* the end counts as inside: it moves with the code */
			if (dest < (int64_t)f || dest > (int64_t)(f + len)) {
				disp += (int64_t)f - (int64_t)to;
				if (in.rel_size == 1) {
					if (disp != (int8_t)disp)
						return -ERANGE;
					*d = (uint8_t)disp;
				} else {
					int32_t v = (int32_t)disp;

					if (disp != v)
						return -ERANGE;
					memcpy(d, &v, 4);
				}
			}
		}
		off += in.len;
	}
	return 0;
}

/*
 * The fewest NOPs for a gap (Intel SDM vol. 2B, NOP: the recommended
 * multi-byte forms, 0f 1f /0 with a growing addressing form, then 66
 * prefixes). Up to 11 bytes: one instruction. Longer: a two-byte short jmp
 * over the rest (one taken jump is cheaper than decoding several NOPs;
 * the kernel's rule too), the rest int3 (never executed; stops straight-
 * line speculation past the jump).
 */
void sy_arch_nop_fill(uint8_t *buf, size_t len)
{
	static const uint8_t nops[9][9] = {
		{ 0x90 },
		{ 0x66, 0x90 },
		{ 0x0f, 0x1f, 0x00 },
		{ 0x0f, 0x1f, 0x40, 0x00 },
		{ 0x0f, 0x1f, 0x44, 0x00, 0x00 },
		{ 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
		{ 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 },
		{ 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
		{ 0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
	};

	if (!len)
		return;
	if (len <= 11) {
		size_t pre = len > 9 ? len - 9 : 0;	/* 66 66 ... */

		memset(buf, 0x66, pre);
		memcpy(buf + pre, nops[len - pre - 1], len - pre);
		return;
	}
	/* lengths are at most 255 (a byte in the record): rel8 fits up to
	 * 129; longer gaps take a jmp rel32 */
	if (len - 2 <= 127) {
		buf[0] = 0xeb;
		buf[1] = (uint8_t)(len - 2);
		memset(buf + 2, 0xcc, len - 2);
	} else {
		int32_t rel = (int32_t)(len - 5);

		buf[0] = 0xe9;
		memcpy(buf + 1, &rel, 4);
		memset(buf + 5, 0xcc, len - 5);
	}
}
