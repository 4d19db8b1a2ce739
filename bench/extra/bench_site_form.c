/* SPDX-License-Identifier: MIT */
/*
 * bench_site_form.c - what the disabled form costs at rest: the same loop
 * with no site, a NOP (66 90 / 0f 1f 44 00 00, the kernel's forms), a TEST
 * (a8 / a9 + imm, switchyard's forms), a jump to the next instruction
 * (eb 00 / e9 00 00 00 00, a taken branch, the alternative disabled form)
 * and a flag check, in four loops: one bound by a dependency chain (imul,
 * the common case), one bound by ALU throughput (four independent adds per
 * iteration, where TEST competes for an ALU port and NOP does not), and
 * that throughput loop with eight sites per iteration (eight jump-next
 * sites make nine taken branches per iteration: BTB and taken-branch
 * throughput pressure), once back to back and once each site followed by
 * the four adds (branches spaced as in ordinary code). Variants interleaved
 * round-robin, the starting variant rotated each round; medians with 95%
 * CIs; Mann-Whitney of each TEST form against its NOP, and of each
 * jump-next form against its TEST and its NOP.
 */
#include <stdint.h>

#include "stats.h"

#define N 20000000
#define ROUNDS 21
volatile int flag;

/* Functions 64-byte aligned so that variants of one loop shape differ only
 * in the site bytes, not in where the loop falls relative to fetch lines. */
#define BENCHFN __attribute__((noinline, aligned(64))) static long
#define LAT(name, insn)                                                        \
	BENCHFN name(long x)                                                   \
	{                                                                      \
		for (long i = 0; i < N; i++) {                                 \
			__asm__ volatile(insn ::: "cc");                       \
			x = x * 3 + 1;                                         \
		}                                                              \
		return x;                                                      \
	}
#define THR(name, insn)                                                        \
	BENCHFN name(long x)                                                   \
	{                                                                      \
		long a = x, b = x + 1, c = x + 2, d = x + 3;                   \
		for (long i = 0; i < N; i++) {                                 \
			__asm__ volatile(insn ::: "cc");                       \
			__asm__ volatile("add $1, %0\n\tadd $2, %1\n\t"      \
					 "add $3, %2\n\tadd $4, %3"          \
					 : "+r"(a), "+r"(b), "+r"(c), "+r"(d)  \
					 :: "cc");                             \
		}                                                              \
		return a + b + c + d;                                          \
	}
/* Eight sites in sequence, then the four adds. */
#define X8(insn) ".rept 8\n\t" insn "\n\t.endr"
/* Eight times: a site, then the four adds. */
#define IL(name, insn)                                                         \
	BENCHFN name(long x)                                                   \
	{                                                                      \
		long a = x, b = x + 1, c = x + 2, d = x + 3;                   \
		for (long i = 0; i < N; i++)                                   \
			__asm__ volatile(".rept 8\n\t" insn "\n\t"          \
					 "add $1, %0\n\tadd $2, %1\n\t"    \
					 "add $3, %2\n\tadd $4, %3\n\t"    \
					 ".endr"                             \
					 : "+r"(a), "+r"(b), "+r"(c), "+r"(d)  \
					 :: "cc");                             \
		return a + b + c + d;                                          \
	}
#define FLAGCHK "cmpl $0, flag(%%rip)\n\tjne 1f\n1:"
#define NOP2 ".byte 0x66, 0x90"
#define TEST8 ".byte 0xa8, 0x10"
#define JMP8 ".byte 0xeb, 0x00"
#define NOP5 ".byte 0x0f, 0x1f, 0x44, 0, 0"
#define TEST32 ".byte 0xa9, 0x10, 0, 0, 0"
#define JMP32 ".byte 0xe9, 0, 0, 0, 0"

LAT(lat_none, "") LAT(lat_nop2, NOP2) LAT(lat_test8, TEST8) LAT(lat_jmp8, JMP8)
LAT(lat_nop5, NOP5) LAT(lat_test32, TEST32) LAT(lat_jmp32, JMP32)
LAT(lat_flag, FLAGCHK)
THR(thr_none, "") THR(thr_nop2, NOP2) THR(thr_test8, TEST8) THR(thr_jmp8, JMP8)
THR(thr_nop5, NOP5) THR(thr_test32, TEST32) THR(thr_jmp32, JMP32)
THR(thr_flag, FLAGCHK)
THR(x8_none, "") THR(x8_nop2, X8(NOP2)) THR(x8_test8, X8(TEST8))
THR(x8_jmp8, X8(JMP8)) THR(x8_nop5, X8(NOP5)) THR(x8_test32, X8(TEST32))
THR(x8_jmp32, X8(JMP32)) THR(x8_flag, X8(FLAGCHK))
IL(il_none, "") IL(il_nop2, NOP2) IL(il_test8, TEST8) IL(il_jmp8, JMP8)
IL(il_nop5, NOP5) IL(il_test32, TEST32) IL(il_jmp32, JMP32) IL(il_flag, FLAGCHK)

#define NV 8
enum { NONE, V_NOP2, V_TEST8, V_JMP8, V_NOP5, V_TEST32, V_JMP32, FLAG };
static const char *names[NV] = { "none", "NOP2", "TEST8", "JMP8-next",
				 "NOP5", "TEST32", "JMP32-next", "flag check" };
static const char *names8[NV] = { "none", "8 x NOP2", "8 x TEST8",
				  "8 x JMP8-next", "8 x NOP5", "8 x TEST32",
				  "8 x JMP32-next", "8 x flag check" };
/* Pairs compared: {a, b} prints "a <|~|> b". */
static const int cmp[][2] = { { V_TEST8, V_NOP2 },  { V_TEST32, V_NOP5 },
			      { V_JMP8, V_TEST8 },  { V_JMP32, V_TEST32 },
			      { V_JMP8, V_NOP2 },   { V_JMP32, V_NOP5 } };

static void run(const char *title, const char *const nm[NV],
		long (*const f[NV])(long))
{
	static double s[NV][ROUNDS];

	bench_interleave(NV, ROUNDS, f, N, &s[0][0]);
	printf("== %s (ns per iteration)\n", title);
	for (int v = 0; v < NV; v++) {
		char what[64];

		snprintf(what, sizeof(what), "  %s", nm[v]);
		bench_print(what, bench_summarize(s[v], ROUNDS), 1, "ns");
	}
	for (size_t c = 0; c < sizeof(cmp) / sizeof(cmp[0]); c++) {
		int a = cmp[c][0], b = cmp[c][1];
		double z = bench_mann_whitney_z(s[a], ROUNDS, s[b], ROUNDS);

		printf("  %s %s %s (Mann-Whitney z = %.2f)\n", nm[a],
		       bench_verdict(z), nm[b], z);
	}
}

int main(void)
{
	long (*const lat[NV])(long) = { lat_none, lat_nop2, lat_test8, lat_jmp8,
					lat_nop5, lat_test32, lat_jmp32, lat_flag };
	long (*const thr[NV])(long) = { thr_none, thr_nop2, thr_test8, thr_jmp8,
					thr_nop5, thr_test32, thr_jmp32, thr_flag };
	long (*const x8[NV])(long) = { x8_none, x8_nop2, x8_test8, x8_jmp8,
				       x8_nop5, x8_test32, x8_jmp32, x8_flag };
	long (*const il[NV])(long) = { il_none, il_nop2, il_test8, il_jmp8,
				       il_nop5, il_test32, il_jmp32, il_flag };

	run("latency-bound loop (x = x * 3 + 1)", names, lat);
	run("throughput-bound loop (4 independent adds)", names, thr);
	run("8 sites in sequence + 4 independent adds", names8, x8);
	run("8 x (site + 4 independent adds)", names8, il);
	return 0;
}
