// SPDX-License-Identifier: MIT
// test_alternative_cxx.cpp - the C++ twin of test_alternative.c: the
// header's forms compile as C++ (asm goto and local labels in statement
// expressions included) and choose as in C (x86-64 and AArch64: the same
// cases, each arch's features).
#include "sy_check.h"
#include "alt_cases.h"
#include "sites.h"

#if defined(__aarch64__)
#define F_BASE KERNEL_HWCAP_CRC32
#define F_A KERNEL_HWCAP_ATOMICS
#define F_B KERNEL_HWCAP_AES
#define F_C KERNEL_HWCAP_SVE
#else
#define F_BASE X86_FEATURE_XMM2
#define F_A X86_FEATURE_AVX2
#define F_B X86_FEATURE_ERMS
#define F_C X86_FEATURE_AVX512F
#endif

ALT_CASES(base, F_BASE)
ALT_CASES(fa, F_A)
ALT_CASES(fb, F_B)
ALT_CASES_2(base_fa, F_BASE, F_A)
ALT_CASES_2(fb_fc, F_B, F_C)

extern "C" {
extern struct sy_alt_entry __start_sy_altinstr[] SY_HIDDEN;
extern struct sy_alt_entry __stop_sy_altinstr[] SY_HIDDEN;
}

template <int F> static bool has() { return static_cpu_has(F); }

int main()
{
	int cpu_has_sites = 0;

	CHECK_EQ(alt_check_sites(__start_sy_altinstr, __stop_sy_altinstr,
				 &cpu_has_sites), 0);
	CHECK(cpu_has_sites >= 5);
	ALT_CHECK(base, F_BASE);
	ALT_CHECK(fa, F_A);
	ALT_CHECK(fb, F_B);
	ALT_CHECK_2(base_fa, F_BASE, F_A);
	ALT_CHECK_2(fb_fc, F_B, F_C);
	CHECK_EQ(has<F_A>(), boot_cpu_has(F_A));
	return sy_test_done("test_alternative_cxx");
}
