/* SPDX-License-Identifier: MIT */
/*
 * test_insn.c - the x86-64 length decoder of the alternatives
 * (src/arch/x86_64/insn.c) against objdump: reads `objdump -d
 * --insn-width=15` output on stdin (test_insn.sh feeds it the whole text
 * of the C library and of this program) and checks, for every instruction
 * objdump decodes, the length, and for every direct branch and RIP-
 * relative operand objdump resolves, the destination computed from the
 * relative operand the decoder found. Then the code mover and the NOP
 * filler on hand-made cases.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "sy_check.h"

static unsigned long n_insn, n_rel, n_bad;

static void report(unsigned long addr, const char *line, const char *why)
{
	if (n_bad++ < 400)
		fprintf(stderr, "FAIL %lx: %s: %s", addr, why, line);
}

/* objdump's prefix words, which it prints before the mnemonic */
static const char *skip_prefixes(const char *t, bool *lone_rex)
{
	static const char *const pre[] = {
		"data16 ", "addr32 ", "lock ", "rep ", "repz ", "repnz ",
		"cs ", "ds ", "es ", "ss ", "fs ", "gs ", "bnd ", "notrack ",
		"rex", NULL,
	};

	*lone_rex = false;
	for (;;) {
		size_t i;

		for (i = 0; pre[i]; i++)
			if (!strncmp(t, pre[i], strlen(pre[i])))
				break;
		if (!pre[i])
			return t;
		if (!strcmp(pre[i], "rex")) {
			/* a REX objdump shows alone: another prefix follows it
			 * (so it counts for nothing) */
			*lone_rex = true;
			return t;
		}
		t += strlen(pre[i]);
	}
}

static void check_line(const char *line)
{
	bool lone_rex, branch16;
	unsigned long addr, dest;
	uint8_t b[16];
	size_t n = 0;
	const char *p = line, *text, *q;
	char *e;
	struct sy_x86_insn in;

	addr = strtoul(p, &e, 16);
	if (e == p || *e != ':' || e[1] != '\t')
		return;
	p = e + 2;
	while (n < 16) {
		unsigned long v = strtoul(p, &e, 16);

		if (e != p + 2)
			break;
		b[n++] = (uint8_t)v;
		p = e;
		while (*p == ' ')
			p++;
	}
	if (*p != '\t' || !n)
		return;		/* a continuation line, or none */
	text = p + 1;
	if (strstr(text, "(bad)") || !strncmp(text, ".byte", 5) ||
	    !strncmp(text, "rex", 3))
		return;		/* objdump does not know it either */
	text = skip_prefixes(text, &lone_rex);
	/* a relative branch with an operand-size prefix (66) and no REX.W:
	 * Intel ignores the prefix, AMD (objdump's view) truncates the
	 * target to 16 bits; the decoder refuses it */
	branch16 = memchr(b, 0x66, n) && (text[0] == 'j' ||
		   !strncmp(text, "call", 4) || !strncmp(text, "loop", 4));
	for (size_t i = 0; i < n && branch16; i++) {
		if ((b[i] & 0xf8) == 0x48)
			branch16 = false;	/* REX.W */
		else if (!memchr("\x66\x67\xf0\xf2\xf3\x26\x2e\x36\x3e\x64\x65",
				 b[i], 11) && (b[i] & 0xf0) != 0x40)
			break;		/* the opcode */
	}
	n_insn++;
	if (sy_x86_insn_decode(b, n, &in)) {
		if (!lone_rex && !branch16)
			report(addr, line, "refused");
		return;
	}
	if (lone_rex || (b[0] == 0x9b && in.len == 1))
		return;	/* objdump joins fwait with the next instruction */
	if (in.len != n) {
		report(addr, line, "length");
		return;
	}
	/* objdump's resolved destinations: "# <hex>" for RIP-relative data,
	 * the operand itself for a direct branch */
	q = strstr(text, "(%rip)");
	if (q && (q = strstr(text, "# ")) != NULL) {
		int32_t d;

		dest = strtoul(q + 2, NULL, 16);
		n_rel++;
		if (in.rel_size != 4 || in.branch) {
			report(addr, line, "RIP-relative operand not found");
			return;
		}
		memcpy(&d, b + in.rel_off, 4);
		if (addr + n + (unsigned long)(long)d != dest)
			report(addr, line, "RIP-relative destination");
		return;
	}
	q = text;
	while (*q && *q != ' ')
		q++;
	while (*q == ' ')
		q++;
	if ((text[0] == 'j' || !strncmp(text, "call", 4) ||
	     !strncmp(text, "loop", 4) || !strncmp(text, "xbegin", 6) ||
	     !strncmp(text, "bnd j", 5) || !strncmp(text, "notrack", 7)) &&
	    *q != '*' && strtoul(q, &e, 16) && e > q &&
	    (*e == ' ' || *e == '\n' || *e == 0)) {
		long disp;

		dest = strtoul(q, NULL, 16);
		n_rel++;
		if (!in.branch || !in.rel_size) {
			report(addr, line, "branch operand not found");
			return;
		}
		if (in.rel_size == 1) {
			disp = (int8_t)b[in.rel_off];
		} else {
			int32_t d;

			memcpy(&d, b + in.rel_off, 4);
			disp = d;
		}
		if (addr + n + (unsigned long)disp != dest)
			report(addr, line, "branch destination");
	} else if (in.branch) {
		report(addr, line, "a branch objdump does not see");
	}
}

/* The mover and the filler, on code laid out in an array. */
static void check_move(void)
{
	/* call rel32 (outside), jmp rel8 (inside, to the ret), mov rip+8
	 * (outside), jne rel8 (outside), ret */
	uint8_t code[64] = {
		0xe8, 0x10, 0x00, 0x00, 0x00,		/* call +0x10 */
		0xeb, 0x07,				/* jmp to 14 */
		0x48, 0x8b, 0x05, 0x08, 0x00, 0x00, 0x00, /* mov 8(%rip) */
		0xc3,					/* ret (14) */
		0x75, 0x02,				/* jne +2 */
	};
	uint8_t out[64];
	uintptr_t from = (uintptr_t)code, to = from - 0x100;
	int32_t r;

	CHECK(sy_arch_code_move(out, code, 15, to) == 0);
	memcpy(&r, out + 1, 4);
	CHECK(r == 0x10 + 0x100);		/* same destination */
	CHECK(out[5] == 0xeb && out[6] == 0x07);	/* inside: kept */
	memcpy(&r, out + 10, 4);
	CHECK(r == 8 + 0x100);
	CHECK(out[14] == 0xc3);
	/* a rel8 to outside moved by 0x100: cannot reach */
	CHECK(sy_arch_code_move(out, code, 17, to) == -ERANGE);
	/* moved by 16: fits */
	CHECK(sy_arch_code_move(out, code, 17, from - 16) == 0);
	CHECK(out[16] == 0x02 + 16);
	/* an instruction cut by the end */
	CHECK(sy_arch_code_move(out, code, 3, to) == -EINVAL);

	/* the boundaries ([11/15]: a mutant of the end's test survived): a
	 * branch to the sequence's first byte or to its end moves with it
	 * (kept); one a byte before the start or past the end does not
	 * (adjusted by the move, here 16 bytes down) */
	{
		uint8_t b[16] = {
			0xeb, 0x05,			/* jmp end (7): kept */
			0xe9, 0x00, 0x00, 0x00, 0x00,	/* jmp end (7): kept */
		};
		uintptr_t bf = (uintptr_t)b;

		CHECK(sy_arch_code_move(out, b, 7, bf - 16) == 0);
		CHECK(out[1] == 0x05);
		memcpy(&r, out + 3, 4);
		CHECK(r == 0);
		b[1] = 0x06;				/* end + 1: outside */
		memcpy(b + 3, &(int32_t){ 1 }, 4);	/* end + 1 */
		CHECK(sy_arch_code_move(out, b, 7, bf - 16) == 0);
		CHECK(out[1] == 0x06 + 16);
		memcpy(&r, out + 3, 4);
		CHECK(r == 1 + 16);
		b[1] = 0xfe;				/* the start: kept */
		memcpy(b + 3, &(int32_t){ -7 }, 4);	/* the start */
		CHECK(sy_arch_code_move(out, b, 7, bf - 16) == 0);
		CHECK(out[1] == 0xfe);
		memcpy(&r, out + 3, 4);
		CHECK(r == -7);
		b[1] = 0xfd;				/* start - 1: outside */
		memcpy(b + 3, &(int32_t){ -8 }, 4);	/* start - 1 */
		CHECK(sy_arch_code_move(out, b, 7, bf - 16) == 0);
		CHECK(out[1] == (uint8_t)(0xfd + 16));
		memcpy(&r, out + 3, 4);
		CHECK(r == -8 + 16);
	}

	for (size_t len = 1; len <= 255; len++) {
		uint8_t f[256];
		struct sy_x86_insn in;

		memset(f, 0xaa, sizeof(f));
		sy_arch_nop_fill(f, len);
		CHECK(f[len] == 0xaa);
		/* executed: one instruction (a NOP or a jump to the end) */
		CHECK(sy_x86_insn_decode(f, len, &in) == 0);
		if (len <= 11) {
			CHECK(in.len == len && !in.rel_size);
		} else {
			int32_t d = 0;

			CHECK(in.branch);
			if (in.rel_size == 1)
				d = (int8_t)f[1];
			else
				memcpy(&d, f + 1, 4);
			CHECK(in.len + (size_t)d == len);
		}
	}
}

int main(int argc, char **argv)
{
	char line[512];
	unsigned long want = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000;

	check_move();
	while (fgets(line, sizeof(line), stdin))
		check_line(line);
	printf("%lu instructions, %lu relative operands, %lu failures\n",
	       n_insn, n_rel, n_bad);
	CHECK(n_insn >= want);	/* objdump's output was really read */
	CHECK(n_bad == 0);
	return sy_test_done("test_insn");
}
