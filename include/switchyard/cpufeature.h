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
 * On AArch64 the features are the kernel's hwcaps (AT_HWCAP, AT_HWCAP2 from
 * getauxval(), what /proc/cpuinfo's "Features" line prints), named as the
 * kernel names them internally: KERNEL_HWCAP_ATOMICS ("atomics"),
 * KERNEL_HWCAP_SVE2 ("sve2"), ...; cpu_have_named_feature(ATOMICS) is
 * boot_cpu_has(KERNEL_HWCAP_ATOMICS), as in the kernel. The vendor is the
 * implementer of MIDR_EL1 by name ("ARM"), family its code (0x41), model
 * the part number (0xd03 for a Cortex-A53), stepping variant * 16 +
 * revision (r0p4: 4); MIDR_EL1 is read where the kernel lets user space
 * read it (HWCAP_CPUID), else everything is 0 and the vendor "unknown".
 * The kernel's ARM64_HAS_* capabilities are its own (they are not told
 * to user space): use the hwcap they come from.
 *
 * On a big.LITTLE system the kernel gives the MIDR_EL1 of the core the
 * library happened to load on. SWITCHYARD_CPU_MASK takes the hwcap names;
 * what needs a hidden feature is hidden with it (the architecture's
 * rules, as the kernel's arm64.nosve hides the SVE2 hwcaps): fp -> asimd
 * -> aes -> pmull, sha1 -> sha2 -> sha512, ..., sve; sve -> sve2 ->
 * sveaes, svepmull, ...; lrcpc -> ilrcpc; mte -> mte3; sme -> sme*.
 *
 * Every X86_FEATURE_* is absent on AArch64, every KERNEL_HWCAP_* on
 * x86-64; on AArch64, SWITCHYARD_CPU_MASK and switchyard_cpu_feature_name()
 * know the hwcap names only (elsewhere the x86 ones). On other
 * architectures every feature is absent and the vendor is "unknown".
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
 *   8  AArch64 AT_HWCAP bits 0-31     10  AT_HWCAP2 bits 0-31
 *   9  AArch64 AT_HWCAP bits 32-63    11  AT_HWCAP2 bits 32-63
 * (so KERNEL_HWCAP_x is 256 + the kernel's own KERNEL_HWCAP_x number).
 */
#define SWITCHYARD_CPU_WORDS 12
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

/*
 * AArch64: bit n of AT_HWCAP is KERNEL_HWCAP_* SY__F(8, 0) + n, bit n of
 * AT_HWCAP2 is SY__F(10, 0) + n (<asm/hwcap.h>: HWCAP_*, HWCAP2_*). The
 * comment is the name /proc/cpuinfo prints where it is not the macro's
 * suffix in lower case.
 */
#define SY__HWCAP(bit) (SY__F(8, 0) + (bit))
#define SY__HWCAP2(bit) (SY__F(10, 0) + (bit))
#define KERNEL_HWCAP_FP		SY__HWCAP(0)
#define KERNEL_HWCAP_ASIMD	SY__HWCAP(1)	/* Advanced SIMD */
#define KERNEL_HWCAP_EVTSTRM	SY__HWCAP(2)	/* timer event stream */
#define KERNEL_HWCAP_AES	SY__HWCAP(3)
#define KERNEL_HWCAP_PMULL	SY__HWCAP(4)
#define KERNEL_HWCAP_SHA1	SY__HWCAP(5)
#define KERNEL_HWCAP_SHA2	SY__HWCAP(6)
#define KERNEL_HWCAP_CRC32	SY__HWCAP(7)
#define KERNEL_HWCAP_ATOMICS	SY__HWCAP(8)	/* LSE: CAS, LDADD, ... */
#define KERNEL_HWCAP_FPHP	SY__HWCAP(9)
#define KERNEL_HWCAP_ASIMDHP	SY__HWCAP(10)
#define KERNEL_HWCAP_CPUID	SY__HWCAP(11)	/* ID regs. readable */
#define KERNEL_HWCAP_ASIMDRDM	SY__HWCAP(12)
#define KERNEL_HWCAP_JSCVT	SY__HWCAP(13)
#define KERNEL_HWCAP_FCMA	SY__HWCAP(14)
#define KERNEL_HWCAP_LRCPC	SY__HWCAP(15)
#define KERNEL_HWCAP_DCPOP	SY__HWCAP(16)
#define KERNEL_HWCAP_SHA3	SY__HWCAP(17)
#define KERNEL_HWCAP_SM3	SY__HWCAP(18)
#define KERNEL_HWCAP_SM4	SY__HWCAP(19)
#define KERNEL_HWCAP_ASIMDDP	SY__HWCAP(20)
#define KERNEL_HWCAP_SHA512	SY__HWCAP(21)
#define KERNEL_HWCAP_SVE	SY__HWCAP(22)
#define KERNEL_HWCAP_ASIMDFHM	SY__HWCAP(23)
#define KERNEL_HWCAP_DIT	SY__HWCAP(24)	/* data-indep. timing */
#define KERNEL_HWCAP_USCAT	SY__HWCAP(25)
#define KERNEL_HWCAP_ILRCPC	SY__HWCAP(26)
#define KERNEL_HWCAP_FLAGM	SY__HWCAP(27)
#define KERNEL_HWCAP_SSBS	SY__HWCAP(28)
#define KERNEL_HWCAP_SB		SY__HWCAP(29)
#define KERNEL_HWCAP_PACA	SY__HWCAP(30)	/* pointer auth. (addr.) */
#define KERNEL_HWCAP_PACG	SY__HWCAP(31)	/* pointer auth. (gen.) */
#define KERNEL_HWCAP_DCPODP	SY__HWCAP2(0)
#define KERNEL_HWCAP_SVE2	SY__HWCAP2(1)
#define KERNEL_HWCAP_SVEAES	SY__HWCAP2(2)
#define KERNEL_HWCAP_SVEPMULL	SY__HWCAP2(3)
#define KERNEL_HWCAP_SVEBITPERM	SY__HWCAP2(4)
#define KERNEL_HWCAP_SVESHA3	SY__HWCAP2(5)
#define KERNEL_HWCAP_SVESM4	SY__HWCAP2(6)
#define KERNEL_HWCAP_FLAGM2	SY__HWCAP2(7)
#define KERNEL_HWCAP_FRINT	SY__HWCAP2(8)
#define KERNEL_HWCAP_SVEI8MM	SY__HWCAP2(9)
#define KERNEL_HWCAP_SVEF32MM	SY__HWCAP2(10)
#define KERNEL_HWCAP_SVEF64MM	SY__HWCAP2(11)
#define KERNEL_HWCAP_SVEBF16	SY__HWCAP2(12)
#define KERNEL_HWCAP_I8MM	SY__HWCAP2(13)
#define KERNEL_HWCAP_BF16	SY__HWCAP2(14)
#define KERNEL_HWCAP_DGH	SY__HWCAP2(15)
#define KERNEL_HWCAP_RNG	SY__HWCAP2(16)	/* RNDR, RNDRRS */
#define KERNEL_HWCAP_BTI	SY__HWCAP2(17)	/* branch target id. */
#define KERNEL_HWCAP_MTE	SY__HWCAP2(18)
#define KERNEL_HWCAP_ECV	SY__HWCAP2(19)
#define KERNEL_HWCAP_AFP	SY__HWCAP2(20)
#define KERNEL_HWCAP_RPRES	SY__HWCAP2(21)
#define KERNEL_HWCAP_MTE3	SY__HWCAP2(22)
#define KERNEL_HWCAP_SME	SY__HWCAP2(23)
#define KERNEL_HWCAP_SME_I16I64	SY__HWCAP2(24)	/* "smei16i64" */
#define KERNEL_HWCAP_SME_F64F64	SY__HWCAP2(25)	/* "smef64f64" */
#define KERNEL_HWCAP_SME_I8I32	SY__HWCAP2(26)	/* "smei8i32" */
#define KERNEL_HWCAP_SME_F16F32	SY__HWCAP2(27)	/* "smef16f32" */
#define KERNEL_HWCAP_SME_B16F32	SY__HWCAP2(28)	/* "smeb16f32" */
#define KERNEL_HWCAP_SME_F32F32	SY__HWCAP2(29)	/* "smef32f32" */
#define KERNEL_HWCAP_SME_FA64	SY__HWCAP2(30)	/* "smefa64" */
#define KERNEL_HWCAP_WFXT	SY__HWCAP2(31)
#define KERNEL_HWCAP_EBF16	SY__HWCAP2(32)
#define KERNEL_HWCAP_SVE_EBF16	SY__HWCAP2(33)	/* "sveebf16" */

/* The kernel's arm64 test by name: cpu_have_named_feature(ATOMICS). */
#define cpu_have_named_feature(name) boot_cpu_has(KERNEL_HWCAP_##name)

/* The vendor, family, model and stepping (x86-64: family and model with
 * their extended parts, as /proc/cpuinfo shows them; AArch64: see the top
 * of this file). */
struct switchyard_cpu {
	char vendor[16];	/* "GenuineIntel", "AuthenticAMD", "ARM", ... */
	unsigned family, model, stepping;
};

/*
 * switchyard_cpu - this CPU. Thread-safe; async-signal-safe.
 */
SWITCHYARD_API const struct switchyard_cpu *switchyard_cpu(void);

/*
 * boot_cpu_has - whether feature (X86_FEATURE_*, KERNEL_HWCAP_*) is present
 * and not masked; false for a number out of range. Thread-safe;
 * async-signal-safe.
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
