/* SPDX-License-Identifier: MIT */
/*
 * insn.c - instructions as text (insn.h): capstone when the tool was
 * built with it (SY_HAVE_CAPSTONE), else the tool's own decoder of the
 * instructions a site holds, written as capstone writes them ("jmp
 * 0x401136", "b #0x7dc"), so that a listing reads alike either way.
 * Capstone is optional because a cross build seldom has it for the target:
 * the AArch64 tool of the cross build is built without it.
 */
#include <stdio.h>
#include <string.h>

#ifdef SY_HAVE_CAPSTONE
#include <capstone/capstone.h>
#endif

#include "insn.h"

const char *insn_machine_name(unsigned machine)
{
	return machine == EM_AARCH64 ? "AArch64" :
	       machine == EM_X86_64 ? "x86-64" : "unknown";
}

void insn_dis_open(struct insn_dis *d, unsigned machine)
{
	d->machine = machine;
	d->cs = 0;
#ifdef SY_HAVE_CAPSTONE
	{
		csh h;
		cs_err e;

		if (machine == EM_X86_64)
			e = cs_open(CS_ARCH_X86, CS_MODE_64, &h);
		else if (machine == EM_AARCH64)
#if CS_API_MAJOR >= 6
			e = cs_open(CS_ARCH_AARCH64, CS_MODE_LITTLE_ENDIAN, &h);
#else
			e = cs_open(CS_ARCH_ARM64, CS_MODE_LITTLE_ENDIAN, &h);
#endif
		else
			e = CS_ERR_ARCH;
		if (e == CS_ERR_OK)
			d->cs = (uintptr_t)h;
	}
#endif
}

void insn_dis_close(struct insn_dis *d)
{
#ifdef SY_HAVE_CAPSTONE
	if (d->cs) {
		csh h = (csh)d->cs;

		cs_close(&h);
	}
#endif
	d->cs = 0;
}

/* The tool's own x86-64 decoder: the site forms, CALL, NOP, RET */
static size_t own_x86(const uint8_t *b, size_t n, uint64_t addr, char *buf,
		      size_t size)
{
	int32_t r32;

	if (n >= 2 && b[0] == X86_JMP8) {
		snprintf(buf, size, "jmp 0x%llx", (unsigned long long)
			 (addr + 2 + (uint64_t)(int64_t)(int8_t)b[1]));
		return 2;
	}
	if (n >= 2 && b[0] == X86_TEST8) {
		snprintf(buf, size, "test al, 0x%x", b[1]);
		return 2;
	}
	if (n >= 5 && (b[0] == X86_JMP32 || b[0] == 0xe8)) {
		memcpy(&r32, b + 1, 4);
		snprintf(buf, size, "%s 0x%llx", b[0] == 0xe8 ? "call" : "jmp",
			 (unsigned long long)(addr + 5 +
					      (uint64_t)(int64_t)r32));
		return 5;
	}
	if (n >= 5 && b[0] == X86_TEST32) {
		memcpy(&r32, b + 1, 4);
		snprintf(buf, size, "test eax, 0x%x", (unsigned)r32);
		return 5;
	}
	if (n >= 1 && (b[0] == 0x90 || b[0] == 0xc3)) {
		snprintf(buf, size, "%s", b[0] == 0x90 ? "nop" : "ret");
		return 1;
	}
	return 0;
}

/* The tool's own AArch64 decoder: NOP, B, BL, BRK, RET, and the move
 * wide immediates (MOVZ, MOVK, MOVN: a run-time constant's immediate),
 * written without capstone's aliases ("movz w0, #0x1, lsl #16") */
static size_t own_a64(const uint8_t *b, size_t n, uint64_t addr, char *buf,
		      size_t size)
{
	uint32_t w;

	if (n < 4)
		return 0;
	w = a64_word(b);
	if (w == A64_NOP)
		snprintf(buf, size, "nop");
	else if (w == 0xd65f03c0u)
		snprintf(buf, size, "ret");
	else if ((w & A64_BRANCH_MASK) == A64_B ||
		 (w & A64_BRANCH_MASK) == A64_BL)
		snprintf(buf, size, "%s #0x%llx",
			 (w & A64_BRANCH_MASK) == A64_BL ? "bl" : "b",
			 (unsigned long long)a64_branch_target(w, addr));
	else if ((w & A64_BRK_MASK) == A64_BRK)
		snprintf(buf, size, "brk #0x%x", (unsigned)(w >> 5 & 0xffff));
	else if ((w >> 23 & 0x3f) == 0x25 && (w >> 29 & 3) != 1 &&
		 ((w >> 31) || !(w >> 22 & 1))) {
		/* sf opc 100101 hw imm16 Rd (Arm ARM C6.2, MOVZ/MOVK/MOVN) */
		static const char *const op[] = { "movn", "", "movz", "movk" };
		unsigned rd = w & 31, hw = w >> 21 & 3;
		char reg[8];

		if (rd == 31)
			snprintf(reg, sizeof(reg), "%czr", w >> 31 ? 'x' : 'w');
		else
			snprintf(reg, sizeof(reg), "%c%u", w >> 31 ? 'x' : 'w',
				 rd);
		snprintf(buf, size, "%s %s, #0x%x", op[w >> 29 & 3], reg,
			 (unsigned)(w >> 5 & 0xffff));
		if (hw) {
			size_t l = strlen(buf);

			snprintf(buf + l, size - l, ", lsl #%u", hw * 16);
		}
	} else {
		return 0;
	}
	return 4;
}

size_t insn_text(struct insn_dis *d, const uint8_t *b, size_t n,
		 uint64_t addr, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
#ifdef SY_HAVE_CAPSTONE
	if (d->cs && n) {
		cs_insn *insn;

		if (cs_disasm((csh)d->cs, b, n, addr, 1, &insn) == 1) {
			/* capstone's fields are 32 and 160 bytes */
			snprintf(buf, size, "%.31s%s%.159s", insn[0].mnemonic,
				 insn[0].op_str[0] ? " " : "", insn[0].op_str);
			len = insn[0].size;
			cs_free(insn, 1);
		}
		if (!len)
			snprintf(buf, size, "(not decoded)");
		return len;
	}
#endif
	if (d->machine == EM_X86_64)
		len = own_x86(b, n, addr, buf, size);
	else if (d->machine == EM_AARCH64)
		len = own_a64(b, n, addr, buf, size);
	if (!len)
		snprintf(buf, size, "(not decoded)");
	return len;
}

/* fmt appended to buf[*used, size), cut at its end */
static void append(char *buf, size_t size, size_t *used, const char *fmt,
		   const char *a, const char *b)
{
	int w;

	if (*used + 1 >= size)
		return;
	w = snprintf(buf + *used, size - *used, fmt, a, b);
	if (w > 0 && (size_t)w < size - *used)
		*used += (size_t)w;
	else if (w > 0)
		*used = size - 1;	/* cut */
}

void insn_text_all(struct insn_dis *d, const uint8_t *b, size_t n,
		   uint64_t addr, char *buf, size_t size)
{
	size_t at = 0, used = 0;

	buf[0] = 0;
	while (at < n && used + 1 < size) {
		char one[256];
		size_t len = insn_text(d, b + at, n - at, addr + at, one,
				       sizeof(one));

		if (!len) {
			/* the rest as bytes */
			append(buf, size, &used, "%s%s", used ? "; " : "",
			       ".byte");
			for (; at < n; at++) {
				snprintf(one, sizeof(one), " %02x", b[at]);
				append(buf, size, &used, "%s%s", one, "");
			}
			break;
		}
		append(buf, size, &used, "%s%s", used ? "; " : "", one);
		at += len;
	}
}
