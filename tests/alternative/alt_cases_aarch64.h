/* SPDX-License-Identifier: MIT */
/*
 * alt_cases_aarch64.h - ALT_CASES and ALT_CASES_2 (alt_cases.h) in A64
 * assembly: the same functions, returning the same values.
 */
#ifndef SY_TEST_ALT_CASES_AARCH64_H
#define SY_TEST_ALT_CASES_AARCH64_H

/* what an alternative_call's callee may change besides x0 (AAPCS64's
 * caller-saved registers; x30 is the macro's) */
#define ALT_CALL_CLOBBERS                                                      \
	"x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11",    \
	"x12", "x13", "x14", "x15", "x16", "x17", "x18", "memory", "cc",       \
	"v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16", "v17", "v18",   \
	"v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28",  \
	"v29", "v30", "v31"

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
		alternative_io("mov %w0, #1", "mov %w0, #2", F, "=r"(x));      \
		return x;                                                      \
	}                                                                      \
	ALT_NOINLINE static int name##_not(void)                               \
	{                                                                      \
		int x;                                                         \
		alternative_io("mov %w0, #1", "mov %w0, #2", ALT_NOT(F),       \
			       "=r"(x));                                       \
		return x;                                                      \
	}                                                                      \
	ALT_NOINLINE static long name##_call(long v)                           \
	{                                                                      \
		register long x0 __asm__("x0") = v;                            \
		alternative_call(alt_fa, alt_fb, F, "=r"(x0), "r"(x0)          \
				 : ALT_CALL_CLOBBERS);                         \
		return x0;                                                     \
	}                                                                      \
	ALT_NOINLINE static long name##_ccall(long v)                          \
	{                                                                      \
		return switchyard_alternative_call(alt_fa, F, alt_fb, v);      \
	}                                                                      \
	/* padding: a 1-word old, a 6-word new (a B over 5 words) */           \
	ALT_NOINLINE static long name##_pad(void)                              \
	{                                                                      \
		long x;                                                        \
		__asm__ volatile(ALTERNATIVE("mov %x0, xzr",                   \
					     "movz %x0, #0x221f\n\t"           \
					     "movk %x0, #0x2222, lsl #16\n\t"  \
					     "movk %x0, #0x22, lsl #32\n\t"    \
					     "add %x0, %x0, #1\n\t"            \
					     "add %x0, %x0, #1\n\t"            \
					     "add %x0, %x0, #1", F)            \
				 : "=r"(x));                                   \
		return x;                                                      \
	}                                                                      \
	/* the other way round: a 3-word old, a 1-word new (2 NOPs) */         \
	ALT_NOINLINE static long name##_short(void)                            \
	{                                                                      \
		long x;                                                        \
		__asm__ volatile(ALTERNATIVE("movz %x0, #0x3333\n\t"           \
					     "movk %x0, #0x3333, lsl #16\n\t"  \
					     "movk %x0, #0x33, lsl #32",       \
					     "mov %x0, xzr", F)                \
				 : "=r"(x));                                   \
		return x;                                                      \
	}

/* Two features: the two-way forms; the last that applies wins. */
#define ALT_CASES_2(name, F1, F2)                                              \
	ALT_NOINLINE static int name##_2(void)                                 \
	{                                                                      \
		int x;                                                         \
		__asm__ volatile(ALTERNATIVE_2("mov %w0, #0", "mov %w0, #1",   \
					       F1, "mov %w0, #2", F2)          \
				 : "=r"(x));                                   \
		return x;                                                      \
	}                                                                      \
	ALT_NOINLINE static long name##_call2(long v)                          \
	{                                                                      \
		register long x0 __asm__("x0") = v;                            \
		alternative_call_2(alt_fa, alt_fb, F1, alt_fc, F2, "=r"(x0),   \
				   "r"(x0) : ALT_CALL_CLOBBERS);               \
		return x0;                                                     \
	}                                                                      \
	ALT_NOINLINE static long name##_ccall2(long v)                         \
	{                                                                      \
		return switchyard_alternative_call_2(alt_fa, F1, alt_fb, F2,   \
						     alt_fc, v);               \
	}

#endif /* SY_TEST_ALT_CASES_AARCH64_H */
