/* SPDX-License-Identifier: MIT */
/*
 * test_alternative.c - alternatives: every form applied and not applied
 * (the suite runs twice: as the CPU is, and with features hidden by
 * SWITCHYARD_CPU_MASK, test_alternative_masked), relative operands of a
 * replacement re-aimed, padding merged, every static_cpu_has() site of the
 * program patched before main(), and a library opened later: chosen before
 * dlopen() returns, its spoiled site refused by name and left alone, its
 * other sites chosen. On AArch64 the cases are alt_aarch64.h's (hwcaps,
 * A64 relative operands, site words before and after, real LSE and SVE
 * instructions chosen only where they run).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sy_check.h"
#include "alt_cases.h"
#include "sites.h"

#ifndef SY_TEST_NO_SITES
extern struct sy_alt_entry __start_sy_altinstr[] SY_HIDDEN;
extern struct sy_alt_entry __stop_sy_altinstr[] SY_HIDDEN;
#endif

int alt_global = 40;

#if defined(__aarch64__)
#include "alt_aarch64.h"
#else
ALT_CASES(sse2, X86_FEATURE_XMM2)
ALT_CASES(popcnt, X86_FEATURE_POPCNT)
ALT_CASES(avx2, X86_FEATURE_AVX2)
ALT_CASES(erms, X86_FEATURE_ERMS)
ALT_CASES(avx512f, X86_FEATURE_AVX512F)
ALT_CASES(fsrm, X86_FEATURE_FSRM)
ALT_CASES(movdir64b, X86_FEATURE_MOVDIR64B)
ALT_CASES_2(sse2_avx2, X86_FEATURE_XMM2, X86_FEATURE_AVX2)
ALT_CASES_2(avx2_sse2, X86_FEATURE_AVX2, X86_FEATURE_XMM2)
ALT_CASES_2(erms_fsrm, X86_FEATURE_ERMS, X86_FEATURE_FSRM)
ALT_CASES_2(avx512f_popcnt, X86_FEATURE_AVX512F, X86_FEATURE_POPCNT)

/*
 * A replacement with every kind of relative operand: RIP-relative data
 * outside it, a short jump inside it (to its end), a jcc rel32 and a jmp
 * rel32 to a label after the site. 42 with the feature, 1 without.
 */
__attribute__((noinline)) static int reloc(void)
{
	int x;

	__asm__ volatile(ALTERNATIVE("mov $1, %%eax",
				     "mov alt_global(%%rip), %%eax\n\t"
				     "test %%eax, %%eax\n\t"
				     "jz 1f\n\t"
				     "add $2, %%eax\n"
				     "1:\tcmp $42, %%eax\n\t"
				     "jne 2f\n\t"
				     "jmp 2f\n\t"
				     "ud2",
				     X86_FEATURE_XMM2)
			 "\n2:"
			 : "=a"(x) : : "cc");
	return x;
}
#endif

static char logbuf[8192];
static size_t loglen;

static void log_fn(enum switchyard_log_level level, const char *msg,
		   void *arg)
{
	(void)level;
	(void)arg;
	loglen += (size_t)snprintf(logbuf + loglen, sizeof(logbuf) - loglen,
				   "%s\n", msg);
	if (loglen >= sizeof(logbuf))
		loglen = sizeof(logbuf) - 1;
}

static void check_library(const char *path)
{
	const void *const *start, *const *stop;
	const uintptr_t *spoiled;
	int (*run)(void);
	int cpu_has_sites = 0;
	void *h;

	switchyard_set_log(log_fn, NULL);
	h = dlopen(path, RTLD_NOW);
	switchyard_set_log(NULL, NULL);
	CHECK(h != NULL);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return;
	}
	start = (const void *const *)dlsym(h, "alt_lib_start");
	stop = (const void *const *)dlsym(h, "alt_lib_stop");
	spoiled = (const uintptr_t *)dlsym(h, "alt_lib_spoiled");
	run = (int (*)(void))dlsym(h, "alt_lib_run");
	CHECK(start && stop && spoiled && run);
	if (!start || !stop || !spoiled || !run)
		return;
	/* chosen before any of the library's code ran (none has yet), the
	 * spoiled site left alone: its trap still there */
	CHECK(*spoiled != 0);
	CHECK(*spoiled && ALT_IS_TRAP((const uint8_t *)*spoiled));
	{
		const struct sy_alt_entry *s = (const struct sy_alt_entry *)*start;
		const struct sy_alt_entry *e = (const struct sy_alt_entry *)*stop;
		const struct sy_alt_entry *p;

		/* every site but the spoiled one */
		for (p = s; p < e; p++) {
			int bad;

			if (alt_rel(&p->site) == *spoiled)
				continue;
			bad = alt_check_sites(p, p + 1, &cpu_has_sites);
			CHECK_EQ(bad, 0);
		}
	}
	CHECK(cpu_has_sites >= 2);
	/* reported: what it is and where (the function's name) */
	CHECK(strstr(logbuf, "refusing to patch") != NULL);
	CHECK(strstr(logbuf, "alt_lib_bad") != NULL);
	CHECK(strstr(logbuf, "alternative for feature") != NULL);
	if (!strstr(logbuf, "alt_lib_bad"))
		fprintf(stderr, "log: %s\n", logbuf);
	CHECK_EQ(run(), 0);
	dlclose(h);
}

int main(int argc, char **argv)
{
	int cpu_has_sites = 0;
	const char *masked = getenv("SY_TEST_MASKED");

#if defined(__aarch64__)
	/* the masked run must really hide them; under qemu, its CPU model
	 * must be what the test was told (both choices get exercised) */
	if (masked)
		alt_a64_check_masked();
	alt_a64_check_qemu_cpu(getenv("SY_TEST_QEMU_CPU"));
#else
	if (!boot_cpu_has(X86_FEATURE_XMM2) && !masked)
		SKIP("no SSE2 reported: not an x86-64 CPU as expected");
	/* the masked run must really hide them */
	if (masked) {
		CHECK(!boot_cpu_has(X86_FEATURE_XMM2));
		CHECK(!boot_cpu_has(X86_FEATURE_AVX2));
		CHECK(!boot_cpu_has(X86_FEATURE_ERMS));
		CHECK(!boot_cpu_has(X86_FEATURE_AVX512F));
	}
#endif
#ifndef SY_TEST_NO_SITES
	/* the program's sites, before any ran */
	CHECK_EQ(alt_check_sites(__start_sy_altinstr, __stop_sy_altinstr,
				 &cpu_has_sites), 0);
	CHECK(cpu_has_sites >= 11);
#else
	(void)cpu_has_sites;
	(void)alt_check_sites;
#endif

#if defined(__aarch64__)
	alt_a64_run();
#else
	ALT_CHECK(sse2, X86_FEATURE_XMM2);
	ALT_CHECK(popcnt, X86_FEATURE_POPCNT);
	ALT_CHECK(avx2, X86_FEATURE_AVX2);
	ALT_CHECK(erms, X86_FEATURE_ERMS);
	ALT_CHECK(avx512f, X86_FEATURE_AVX512F);
	ALT_CHECK(fsrm, X86_FEATURE_FSRM);
	ALT_CHECK(movdir64b, X86_FEATURE_MOVDIR64B);
	ALT_CHECK_2(sse2_avx2, X86_FEATURE_XMM2, X86_FEATURE_AVX2);
	ALT_CHECK_2(avx2_sse2, X86_FEATURE_AVX2, X86_FEATURE_XMM2);
	ALT_CHECK_2(erms_fsrm, X86_FEATURE_ERMS, X86_FEATURE_FSRM);
	ALT_CHECK_2(avx512f_popcnt, X86_FEATURE_AVX512F, X86_FEATURE_POPCNT);
	CHECK_EQ(reloc(), ALT_ASM(boot_cpu_has(X86_FEATURE_XMM2)) ? 42 : 1);
#endif

	if (argc > 1)
		check_library(argv[1]);
	return sy_test_done("test_alternative");
}
