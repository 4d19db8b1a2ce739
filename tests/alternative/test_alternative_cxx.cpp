// SPDX-License-Identifier: MIT
// test_alternative_cxx.cpp - the C++ twin of test_alternative.c: the
// header's forms compile as C++ (asm goto and local labels in statement
// expressions included) and choose as in C.
#include "sy_check.h"
#include "alt_cases.h"
#include "sites.h"

ALT_CASES(sse2, X86_FEATURE_XMM2)
ALT_CASES(avx2, X86_FEATURE_AVX2)
ALT_CASES(erms, X86_FEATURE_ERMS)
ALT_CASES_2(sse2_avx2, X86_FEATURE_XMM2, X86_FEATURE_AVX2)
ALT_CASES_2(erms_avx512f, X86_FEATURE_ERMS, X86_FEATURE_AVX512F)

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
	ALT_CHECK(sse2, X86_FEATURE_XMM2);
	ALT_CHECK(avx2, X86_FEATURE_AVX2);
	ALT_CHECK(erms, X86_FEATURE_ERMS);
	ALT_CHECK_2(sse2_avx2, X86_FEATURE_XMM2, X86_FEATURE_AVX2);
	ALT_CHECK_2(erms_avx512f, X86_FEATURE_ERMS, X86_FEATURE_AVX512F);
	CHECK_EQ(has<X86_FEATURE_AVX2>(), boot_cpu_has(X86_FEATURE_AVX2));
	return sy_test_done("test_alternative_cxx");
}
