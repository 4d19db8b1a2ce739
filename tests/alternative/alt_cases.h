/* SPDX-License-Identifier: MIT */
/*
 * alt_cases.h - the alternatives every test runs (test_alternative.c, its
 * C++ twin, and the library libalt.c opened later): each form, for a
 * feature given at compile time, next to what it must return on a CPU
 * with and without that feature (boot_cpu_has(), which honours
 * SWITCHYARD_CPU_MASK). The assembly is x86-64's here, AArch64's in
 * alt_cases_aarch64.h; the expected values are the same.
 */
#ifndef SY_TEST_ALT_CASES_H
#define SY_TEST_ALT_CASES_H

#include <string.h>

#include <switchyard.h>

#define ALT_NOINLINE __attribute__((noinline, unused))

/* A debugger's breakpoint as it sits on a site: int3, BRK #0. */
#if defined(__aarch64__)
#define ALT_TRAP_LEN 4
static const unsigned char alt_trap[4] __attribute__((unused)) = {
	0x00, 0x00, 0x20, 0xd4 };
#else
#define ALT_TRAP_LEN 1
static const unsigned char alt_trap[1] __attribute__((unused)) = { 0xcc };
#endif
#define ALT_IS_TRAP(p) (!memcmp((p), alt_trap, ALT_TRAP_LEN))

ALT_NOINLINE static long alt_fa(long x) { return x + 1; }
ALT_NOINLINE static long alt_fb(long x) { return x + 2; }
ALT_NOINLINE static long alt_fc(long x) { return x + 3; }

#if defined(__aarch64__)
#include "alt_cases_aarch64.h"
#else
/* what an alternative_call's callee may change (the kernel's contract:
 * the caller lists it) */
#define ALT_CALL_CLOBBERS                                                      \
	"rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "memory", "cc", "xmm0", \
	"xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", \
	"xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"

/* One feature: every single-choice form. */
#define ALT_CASES(name, F)                                                     \
	ALT_NOINLINE static int name##_has(void)                               \
	{                                                                      \
		return static_cpu_has(F);                                      \
	}                                                                      \
	ALT_NOINLINE static int name##_enabled(void)                           \
	{                                                                      \
		if (cpu_feature_enabled(F))                                    \
			return 7;                                              \
		return 3;                                                      \
	}                                                                      \
	ALT_NOINLINE static int name##_io(void)                                \
	{                                                                      \
		int x;                                                         \
		alternative_io("mov $1, %k0", "mov $2, %k0", F, "=r"(x));      \
		return x;                                                      \
	}                                                                      \
	ALT_NOINLINE static int name##_not(void)                               \
	{                                                                      \
		int x;                                                         \
		alternative_io("mov $1, %k0", "mov $2, %k0", ALT_NOT(F),       \
			       "=r"(x));                                       \
		return x;                                                      \
	}                                                                      \
	ALT_NOINLINE static long name##_call(long v)                           \
	{                                                                      \
		long r;                                                        \
		alternative_call(alt_fa, alt_fb, F, "=a"(r), "D"(v)            \
				 : ALT_CALL_CLOBBERS);                         \
		return r;                                                      \
	}                                                                      \
	ALT_NOINLINE static long name##_ccall(long v)                          \
	{                                                                      \
		return switchyard_alternative_call(alt_fa, F, alt_fb, v);      \
	}                                                                      \
	/* padding: a 3-byte old, a 20-byte new (a jump over 17 bytes) */     \
	ALT_NOINLINE static long name##_pad(void)                              \
	{                                                                      \
		long x;                                                        \
		__asm__ volatile(ALTERNATIVE("xor %k0, %k0",                   \
					     "movabs $0x1111111111, %q0\n\t"   \
					     "movabs $0x2222222222, %q0", F)   \
				 : "=r"(x));                                   \
		return x;                                                      \
	}                                                                      \
	/* the other way round: a 10-byte old, a 3-byte new (a NOP7) */       \
	ALT_NOINLINE static long name##_short(void)                            \
	{                                                                      \
		long x;                                                        \
		__asm__ volatile(ALTERNATIVE("movabs $0x3333333333, %q0",      \
					     "xor %k0, %k0", F)                \
				 : "=r"(x));                                   \
		return x;                                                      \
	}

/* Two features: the two-way forms; the last that applies wins. */
#define ALT_CASES_2(name, F1, F2)                                              \
	ALT_NOINLINE static int name##_2(void)                                 \
	{                                                                      \
		int x;                                                         \
		__asm__ volatile(ALTERNATIVE_2("mov $0, %k0", "mov $1, %k0",   \
					       F1, "mov $2, %k0", F2)          \
				 : "=r"(x));                                   \
		return x;                                                      \
	}                                                                      \
	ALT_NOINLINE static long name##_call2(long v)                          \
	{                                                                      \
		long r;                                                        \
		alternative_call_2(alt_fa, alt_fb, F1, alt_fc, F2, "=a"(r),    \
				   "D"(v) : ALT_CALL_CLOBBERS);                \
		return r;                                                      \
	}                                                                      \
	ALT_NOINLINE static long name##_ccall2(long v)                         \
	{                                                                      \
		return switchyard_alternative_call_2(alt_fa, F1, alt_fb, F2,   \
						     alt_fc, v);               \
	}
#endif /* the assembly of each arch */

/* Where nothing is patched, the assembly forms keep their old
 * instructions; static_cpu_has() and the C calls still test the feature. */
#ifdef SWITCHYARD_NO_PATCHING
#define ALT_ASM(h) 0
#define ALT_ASM_NOT(h) 0
#else
#define ALT_ASM(h) (h)
#define ALT_ASM_NOT(h) (!(h))
#endif

/* Expected values of the ALT_CASES functions with and without F. */
#define ALT_CHECK(name, F)                                                     \
	do {                                                                   \
		int h = boot_cpu_has(F), a = ALT_ASM(h);                       \
		CHECK_EQ(name##_has(), h);                                     \
		CHECK_EQ(name##_enabled(), h ? 7 : 3);                         \
		CHECK_EQ(name##_io(), a ? 2 : 1);                              \
		CHECK_EQ(name##_not(), ALT_ASM_NOT(h) ? 2 : 1);                \
		CHECK_EQ(name##_call(10), a ? 12 : 11);                        \
		CHECK_EQ(name##_ccall(10), h ? 12 : 11);                       \
		CHECK_EQ(name##_pad(), a ? 0x2222222222L : 0);                 \
		CHECK_EQ(name##_short(), a ? 0 : 0x3333333333L);               \
	} while (0)

#define ALT_CHECK_2(name, F1, F2)                                              \
	do {                                                                   \
		int w = boot_cpu_has(F2) ? 2 : boot_cpu_has(F1) ? 1 : 0;       \
		CHECK_EQ(name##_2(), ALT_ASM(w));                              \
		CHECK_EQ(name##_call2(10), 11 + ALT_ASM(w));                   \
		CHECK_EQ(name##_ccall2(10), 11 + w);                           \
	} while (0)

#endif /* SY_TEST_ALT_CASES_H */
