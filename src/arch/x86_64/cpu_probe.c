/* SPDX-License-Identifier: MIT */
/*
 * arch/x86_64/cpu_probe.c - the CPU's identity and feature words from
 * CPUID (Intel SDM vol. 2A "CPUID"; AMD APM vol. 3 appendix E), and the
 * OS-enabled register state from XGETBV (SDM vol. 1, 13.3: AVX needs
 * XCR0 bits 1-2, AVX-512 bits 5-7 as well; XGETBV only with OSXSAVE).
 */
#include <cpuid.h>
#include <string.h>

#include "../../internal.h"

#define XCR0_AVX 0x06u		/* SSE and AVX state */
#define XCR0_AVX512 0xe0u	/* opmask, ZMM_Hi256, Hi16_ZMM */

static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;

	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (uint64_t)hi << 32 | lo;
}

static void clear(uint32_t *words, unsigned feature)
{
	words[feature / 32] &= ~(1u << feature % 32);
}

static bool has(const uint32_t *words, unsigned feature)
{
	return words[feature / 32] >> feature % 32 & 1;
}

void sy_arch_cpu_probe(struct switchyard_cpu *cpu,
		       uint32_t words[SWITCHYARD_CPU_WORDS])
{
	unsigned a, b, c, d, max, fam, model;
	uint64_t xcr0 = 0;

	if (!__get_cpuid(0, &max, &b, &c, &d)) {
		strcpy(cpu->vendor, "unknown");
		return;
	}
	memcpy(cpu->vendor, &b, 4);
	memcpy(cpu->vendor + 4, &d, 4);
	memcpy(cpu->vendor + 8, &c, 4);
	cpu->vendor[12] = 0;
	__cpuid(1, a, b, c, d);
	words[0] = c;
	words[1] = d;
	fam = a >> 8 & 0xf;
	model = a >> 4 & 0xf;
	if (fam == 0xf)
		fam += a >> 20 & 0xff;
	if (fam == 0x6 || fam >= 0xf)
		model |= (a >> 16 & 0xf) << 4;
	cpu->family = fam;
	cpu->model = model;
	cpu->stepping = a & 0xf;
	if (max >= 7) {
		unsigned sub;

		__cpuid_count(7, 0, sub, b, c, d);
		words[2] = b;
		words[3] = c;
		words[4] = d;
		if (sub >= 1) {
			__cpuid_count(7, 1, a, b, c, d);
			words[5] = a;
		}
	}
	__cpuid(0x80000000, max, b, c, d);
	if (max >= 0x80000001) {
		__cpuid(0x80000001, a, b, c, d);
		words[6] = c;
	}

	/* register state the OS does not save is not a feature */
	if (has(words, X86_FEATURE_OSXSAVE))
		xcr0 = xgetbv0();
	if ((xcr0 & XCR0_AVX) != XCR0_AVX) {
		clear(words, X86_FEATURE_AVX);
		clear(words, X86_FEATURE_FMA);
		clear(words, X86_FEATURE_AVX2);
	}
	if ((xcr0 & (XCR0_AVX | XCR0_AVX512)) != (XCR0_AVX | XCR0_AVX512)) {
		clear(words, X86_FEATURE_AVX512F);
		clear(words, X86_FEATURE_AVX512DQ);
		clear(words, X86_FEATURE_AVX512CD);
		clear(words, X86_FEATURE_AVX512BW);
		clear(words, X86_FEATURE_AVX512VL);
	}
}

/*
 * What each feature needs, as the kernel's arch/x86/kernel/cpu/cpuid-deps.c
 * says it (clearcpuid=avx hides avx2 and avx512f there), plus what code
 * written for a feature takes for granted: AVX needs the OS to save its
 * registers (OSXSAVE, which needs XSAVE: the probe reads XCR0 only then);
 * AVX-512 code assumes AVX2 (no CPU has one without the other); FSRM, FZRM
 * and FSRS refine the fast string operations of ERMS, so that masking erms
 * keeps rep movsb/stosb out of every choice. Applied until nothing changes
 * (masking sse2 hides sse3, sse4 and, through xsave... no: through nothing
 * else; masking xsave hides osxsave, avx, avx2, fma, avx512*).
 */
static const struct {
	uint16_t feature, needs;
} deps[] = {
	{ X86_FEATURE_XMM2, X86_FEATURE_XMM },
	{ X86_FEATURE_XMM3, X86_FEATURE_XMM2 },
	{ X86_FEATURE_XMM4_1, X86_FEATURE_XMM2 },
	{ X86_FEATURE_XMM4_2, X86_FEATURE_XMM2 },
	{ X86_FEATURE_OSXSAVE, X86_FEATURE_XSAVE },
	{ X86_FEATURE_AVX, X86_FEATURE_XSAVE },
	{ X86_FEATURE_AVX, X86_FEATURE_OSXSAVE },
	{ X86_FEATURE_AVX, X86_FEATURE_XMM2 },
	{ X86_FEATURE_FMA, X86_FEATURE_AVX },
	{ X86_FEATURE_AVX2, X86_FEATURE_AVX },
	{ X86_FEATURE_AVX512F, X86_FEATURE_AVX },
	{ X86_FEATURE_AVX512F, X86_FEATURE_AVX2 },
	{ X86_FEATURE_AVX512DQ, X86_FEATURE_AVX512F },
	{ X86_FEATURE_AVX512CD, X86_FEATURE_AVX512F },
	{ X86_FEATURE_AVX512BW, X86_FEATURE_AVX512F },
	{ X86_FEATURE_AVX512VL, X86_FEATURE_AVX512F },
	{ X86_FEATURE_FSRM, X86_FEATURE_ERMS },
	{ X86_FEATURE_FZRM, X86_FEATURE_ERMS },
	{ X86_FEATURE_FSRS, X86_FEATURE_ERMS },
};

void sy_arch_cpu_deps(uint32_t words[SWITCHYARD_CPU_WORDS])
{
	bool changed = true;

	while (changed) {
		changed = false;
		for (size_t i = 0; i < sizeof(deps) / sizeof(deps[0]); i++)
			if (has(words, deps[i].feature) &&
			    !has(words, deps[i].needs)) {
				clear(words, deps[i].feature);
				changed = true;
			}
	}
}

/*
 * Synthetic features, from the features left after SWITCHYARD_CPU_MASK
 * (so that masking avx512f also hides what depends on it):
 *  - REP_GOOD, the kernel's "rep movs/stos are fast here": its
 *    arch/x86/kernel/cpu/intel.c and amd.c set it for these families;
 *  - AVX512_COPY, this library's: 512-bit loads and stores measured
 *    faster than 256-bit ones for copies on this model (switchyard_memcpy
 *    takes its AVX-512 flavour: doc/BENCHMARKS-HISTORY.md "[7/10] The copy
 *    routine"). Intel family 6 model 207 (Emerald Rapids) only: on
 *    Skylake-SP 512-bit instructions lower the core's clock for what runs
 *    after them (why glibc avoids them there), and no other model was
 *    measured. Needs AVX512F, AVX512VL (ymm16-31), AVX512BW and BMI2
 *    (its masked moves: vmovdqu8, kmovq, bzhi) and AVX2.
 */
void sy_arch_cpu_synthetic(const struct switchyard_cpu *cpu,
			   uint32_t words[SWITCHYARD_CPU_WORDS])
{
	bool intel = !strcmp(cpu->vendor, "GenuineIntel");
	bool amd = !strcmp(cpu->vendor, "AuthenticAMD") ||
		   !strcmp(cpu->vendor, "HygonGenuine");

	if ((intel && (cpu->family == 6 || cpu->family == 15)) ||
	    (amd && cpu->family >= 0x10))
		words[X86_FEATURE_REP_GOOD / 32] |=
			1u << X86_FEATURE_REP_GOOD % 32;
	if (((intel && cpu->family == 6 && cpu->model == 207) ||
	     (amd && cpu->family == 0x1a)) &&
	    has(words, X86_FEATURE_AVX512F) &&
	    has(words, X86_FEATURE_AVX512VL) &&
	    has(words, X86_FEATURE_AVX512BW) && has(words, X86_FEATURE_BMI2) &&
	    has(words, X86_FEATURE_AVX2))
		words[X86_FEATURE_AVX512_COPY / 32] |=
			1u << X86_FEATURE_AVX512_COPY % 32;
}
