/* SPDX-License-Identifier: MIT */
/*
 * bench_site_form.c - what the disabled form costs at rest: the same loop
 * with no site, a NOP (66 90 / 0f 1f 44 00 00, the kernel's forms), a TEST
 * (a8 / a9 + imm, switchyard's forms), and a flag check, in two loops: one
 * bound by a dependency chain (imul, the common case), one bound by ALU
 * throughput (four independent adds per iteration, where TEST competes for
 * an ALU port and NOP does not). Variants interleaved round-robin;
 * medians with 95% CIs; Mann-Whitney of each TEST form against its NOP.
 */
#include <stdint.h>

#include "stats.h"

#define N 20000000
#define ROUNDS 21
volatile int flag;

#define LAT(name, insn)                                                        \
	__attribute__((noinline)) static long name(long x)                     \
	{                                                                      \
		for (long i = 0; i < N; i++) {                                 \
			__asm__ volatile(insn ::: "cc");                       \
			x = x * 3 + 1;                                         \
		}                                                              \
		return x;                                                      \
	}
#define THR(name, insn)                                                        \
	__attribute__((noinline)) static long name(long x)                     \
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
#define FLAGCHK "cmpl $0, flag(%%rip)\n\tjne 1f\n1:"

LAT(lat_none, "") LAT(lat_nop2, ".byte 0x66, 0x90") LAT(lat_test8, ".byte 0xa8, 0x10")
LAT(lat_nop5, ".byte 0x0f, 0x1f, 0x44, 0, 0") LAT(lat_test32, ".byte 0xa9, 0x10, 0, 0, 0")
LAT(lat_flag, FLAGCHK)
THR(thr_none, "") THR(thr_nop2, ".byte 0x66, 0x90") THR(thr_test8, ".byte 0xa8, 0x10")
THR(thr_nop5, ".byte 0x0f, 0x1f, 0x44, 0, 0") THR(thr_test32, ".byte 0xa9, 0x10, 0, 0, 0")
THR(thr_flag, FLAGCHK)

#define NV 6
static const char *names[NV] = { "none", "NOP2", "TEST8", "NOP5", "TEST32", "flag check" };

static void run(const char *title, long (*const f[NV])(long))
{
	static double s[NV][ROUNDS];

	for (int r = 0; r < ROUNDS; r++)
		for (int v = 0; v < NV; v++) {
			double t0 = bench_now_ns();
			volatile long sink = f[v](r);

			(void)sink;
			s[v][r] = (bench_now_ns() - t0) / N;
		}
	printf("== %s (ns per iteration)\n", title);
	for (int v = 0; v < NV; v++) {
		char what[64];

		snprintf(what, sizeof(what), "  %s", names[v]);
		bench_print(what, bench_summarize(s[v], ROUNDS), 1, "ns");
	}
	for (int v = 2; v <= 4; v += 2) {
		double z = bench_mann_whitney_z(s[v], ROUNDS, s[v - 1], ROUNDS);

		printf("  %s %s %s (Mann-Whitney z = %.2f)\n", names[v],
		       bench_verdict(z), names[v - 1], z);
	}
}

int main(void)
{
	long (*const lat[NV])(long) = { lat_none, lat_nop2, lat_test8, lat_nop5, lat_test32, lat_flag };
	long (*const thr[NV])(long) = { thr_none, thr_nop2, thr_test8, thr_nop5, thr_test32, thr_flag };

	run("latency-bound loop (x = x * 3 + 1)", lat);
	run("throughput-bound loop (4 independent adds)", thr);
	return 0;
}
