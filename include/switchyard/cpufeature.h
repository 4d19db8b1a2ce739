/* SPDX-License-Identifier: MIT */
/*
 * switchyard/cpufeature.h - CPU features, with the kernel's names
 * (<asm/cpufeature.h>, <asm/cpufeatures.h>): X86_FEATURE_*, boot_cpu_has(),
 * cpu_feature_enabled(), static_cpu_has().
 *
 *   if (boot_cpu_has(X86_FEATURE_ERMS)) ...
 *
 * The numbers are this library's (word * 32 + bit, the words listed
 * below), not the kernel's; the names are the kernel's. Features come from
 * CPUID once, when the library loads. AVX, FMA, AVX2 and AVX-512 count
 * only when the OS enables their register state (XCR0 through XGETBV, with
 * OSXSAVE), as the kernel clears them when it does not. Synthetic
 * features: X86_FEATURE_REP_GOOD (the kernel's "rep movs/stos are fast
 * here": Intel family 6 and 15, AMD and Hygon from family 0x10), and
 * X86_FEATURE_AVX512_COPY, this library's ("avx512_copy": 512-bit copies
 * measured faster than 256-bit ones on this CPU model, with AVX512F, VL,
 * BW, BMI2 and AVX2; switchyard_memcpy's AVX-512 flavour). Synthetic features are
 * derived from the features left after the mask below.
 *
 * SWITCHYARD_CPU_MASK=erms,fsrm,... in the environment hides features (the
 * names /proc/cpuinfo uses), for tests and for users who want another
 * choice; an unknown name is reported (log, WARN) and ignored. A hidden
 * feature hides every feature that needs it, transitively, as the kernel's
 * clearcpuid= does: sse2 -> pni, sse4_1, sse4_2, avx; xsave -> osxsave ->
 * avx -> fma, avx2, avx512f; avx2 -> avx512f -> avx512dq, cd, bw, vl;
 * erms -> fsrm, fzrm, fsrs (the same holds for a feature the CPU or the OS
 * lacks). Read once, when the library loads.
 *
 * On other architectures every X86_FEATURE_* is absent and the vendor is
 * "unknown".
 *
 * Every call here is thread-safe and async-signal-safe (it reads what was
 * computed when the library loaded).
 */
#ifndef SWITCHYARD_CPUFEATURE_H
#define SWITCHYARD_CPUFEATURE_H

#include <stdbool.h>

#include <switchyard/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Words of the feature bitmap:
 *   0  CPUID 1 ECX            4  CPUID 7.0 EDX
 *   1  CPUID 1 EDX            5  CPUID 7.1 EAX
 *   2  CPUID 7.0 EBX          6  CPUID 0x80000001 ECX
 *   3  CPUID 7.0 ECX          7  synthetic (this library's)
 */
#define SWITCHYARD_CPU_WORDS 8
#define SY__F(word, bit) ((word) * 32 + (bit))

#define X86_FEATURE_XMM3	SY__F(0, 0)	/* "pni" (SSE3) */
#define X86_FEATURE_FMA		SY__F(0, 12)
#define X86_FEATURE_XMM4_1	SY__F(0, 19)	/* "sse4_1" */
#define X86_FEATURE_XMM4_2	SY__F(0, 20)	/* "sse4_2" */
#define X86_FEATURE_MOVBE	SY__F(0, 22)
#define X86_FEATURE_POPCNT	SY__F(0, 23)
#define X86_FEATURE_XSAVE	SY__F(0, 26)
#define X86_FEATURE_OSXSAVE	SY__F(0, 27)
#define X86_FEATURE_AVX		SY__F(0, 28)
#define X86_FEATURE_XMM		SY__F(1, 25)	/* "sse" */
#define X86_FEATURE_XMM2	SY__F(1, 26)	/* "sse2" */
#define X86_FEATURE_BMI1	SY__F(2, 3)
#define X86_FEATURE_AVX2	SY__F(2, 5)
#define X86_FEATURE_BMI2	SY__F(2, 8)
#define X86_FEATURE_ERMS	SY__F(2, 9)
#define X86_FEATURE_AVX512F	SY__F(2, 16)
#define X86_FEATURE_AVX512DQ	SY__F(2, 17)
#define X86_FEATURE_AVX512CD	SY__F(2, 28)
#define X86_FEATURE_AVX512BW	SY__F(2, 30)
#define X86_FEATURE_AVX512VL	SY__F(2, 31)
#define X86_FEATURE_MOVDIRI	SY__F(3, 27)
#define X86_FEATURE_MOVDIR64B	SY__F(3, 28)
#define X86_FEATURE_FSRM	SY__F(4, 4)
#define X86_FEATURE_FZRM	SY__F(5, 10)	/* fast zero-length rep movsb */
#define X86_FEATURE_FZLRM	X86_FEATURE_FZRM
#define X86_FEATURE_FSRS	SY__F(5, 11)	/* fast short rep stosb */
#define X86_FEATURE_FSRC	SY__F(5, 12)	/* fast short rep cmpsb/scasb */
#define X86_FEATURE_ABM		SY__F(6, 5)	/* lzcnt */
#define X86_FEATURE_REP_GOOD	SY__F(7, 0)	/* synthetic */
#define X86_FEATURE_AVX512_COPY	SY__F(7, 1)	/* synthetic, this library's */

/* The vendor, family, model and stepping (family and model with their
 * extended parts, as /proc/cpuinfo shows them). */
struct switchyard_cpu {
	char vendor[16];	/* "GenuineIntel", "AuthenticAMD", ... */
	unsigned family, model, stepping;
};

/*
 * switchyard_cpu - this CPU. Thread-safe; async-signal-safe.
 */
SWITCHYARD_API const struct switchyard_cpu *switchyard_cpu(void);

/*
 * boot_cpu_has - whether feature (X86_FEATURE_*) is present and not masked;
 * false for a number out of range. Thread-safe; async-signal-safe.
 */
SWITCHYARD_API bool boot_cpu_has(unsigned int feature);

/*
 * switchyard_cpu_feature_name - the /proc/cpuinfo name of a feature this
 * library knows ("erms"), or NULL. Thread-safe; async-signal-safe.
 */
SWITCHYARD_API const char *switchyard_cpu_feature_name(unsigned int feature);

/* The kernel's other names for the same test, static_cpu_has(feature)
 * and cpu_feature_enabled(feature), are patched branches: see
 * <switchyard/alternative.h> (included below). */

#ifdef __cplusplus
}
#endif

#include <switchyard/alternative.h>

#endif /* SWITCHYARD_CPUFEATURE_H */
