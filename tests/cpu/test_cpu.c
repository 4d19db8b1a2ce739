/* SPDX-License-Identifier: MIT */
/*
 * test_cpu.c - CPU features (<switchyard/cpufeature.h>) against what the
 * kernel says in /proc/cpuinfo: vendor, family, model, stepping, and every
 * feature the library names (present there <=> present here; a few the
 * kernel does not print are checked one way only). Then the mask: the
 * program runs itself with SWITCHYARD_CPU_MASK=erms,avx2,no_such_feature;
 * the child must see erms and avx2 hidden with what needs them (fsrm,
 * avx512*), everything else unchanged, and the unknown name reported on
 * stderr. On AArch64 (cpu_aarch64.h): the hwcaps against getauxval() and,
 * on Arm hardware, /proc/cpuinfo's Features line; the identity against
 * MIDR_EL1; the mask with the hwcap names.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sy_test.h"

#define NFEAT (SWITCHYARD_CPU_WORDS * 32)

/* names the kernel knows but does not print in the flags line */
static const char *const unprinted[] = { "osxsave", "fzrm", "fsrs", "fsrc" };

static char flags[8192], vendor[64];
static unsigned family, model, stepping;

static int read_cpuinfo(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[8192];
	int got = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && got != 0x1f) {
		char *v = strchr(line, ':');

		if (!v)
			continue;
		v += 2;
		v[strcspn(v, "\n")] = 0;
		if (!strncmp(line, "flags", 5) && !(got & 1)) {
			snprintf(flags, sizeof(flags), " %s ", v);
			got |= 1;
		} else if (!strncmp(line, "vendor_id", 9) && !(got & 2)) {
			snprintf(vendor, sizeof(vendor), "%s", v);
			got |= 2;
		} else if (!strncmp(line, "cpu family", 10) && !(got & 4)) {
			family = (unsigned)atoi(v);
			got |= 4;
		} else if (!strncmp(line, "model\t", 6) && !(got & 8)) {
			model = (unsigned)atoi(v);
			got |= 8;
		} else if (!strncmp(line, "stepping", 8) && !(got & 16)) {
			stepping = (unsigned)atoi(v);
			got |= 16;
		}
	}
	fclose(f);
	return got == 0x1f;
}

static int in_flags(const char *name)
{
	char word[64];

	snprintf(word, sizeof(word), " %s ", name);
	return strstr(flags, word) != NULL;
}

static int unprinted_name(const char *name)
{
	for (size_t i = 0; i < sizeof(unprinted) / sizeof(unprinted[0]); i++)
		if (!strcmp(unprinted[i], name))
			return 1;
	return 0;
}

static int masked(const char *name, const char *mask)
{
	char word[64], m[256];

	snprintf(m, sizeof(m), ",%s,", mask ? mask : "");
	snprintf(word, sizeof(word), ",%s,", name);
	return strstr(m, word) != NULL;
}

/* Every named feature against the kernel's flags, minus the mask. */
static void check_features(const char *mask)
{
	int named = 0;

	for (unsigned f = 0; f < NFEAT; f++) {
		const char *name = switchyard_cpu_feature_name(f);
		int want;

		if (!name)	/* raw CPUID bits: nothing to compare */
			continue;
		if (f == X86_FEATURE_AVX512_COPY)	/* ours: below */
			continue;
		named++;
		want = in_flags(name) && !masked(name, mask);
		if (want || !unprinted_name(name) || masked(name, mask)) {
			if (boot_cpu_has(f) != want)
				fprintf(stderr, "feature %s: library %d, "
					"/proc/cpuinfo%s %d\n", name,
					boot_cpu_has(f), mask ? " - mask" : "",
					want);
			CHECK_EQ(boot_cpu_has(f), want);
		}
	}
	CHECK(named >= 20);
}

/*
 * This library's synthetic feature, by its rule (cpu_probe.c), from the
 * kernel's flags minus the mask: masking avx2 (the masked run) must hide
 * it even on the model that has it.
 */
static void check_synthetic(const char *mask)
{
	int want = (!strcmp(vendor, "GenuineIntel") && family == 6 &&
		    model == 207) ||
		   (!strcmp(vendor, "AuthenticAMD") && family == 0x1a);
	static const char *const needs[] = { "avx512f", "avx512vl", "avx512bw",
					     "bmi2", "avx2" };

	for (int i = 0; i < 5; i++)
		want &= in_flags(needs[i]) && !masked(needs[i], mask);
	want &= !masked("avx512_copy", mask);
	CHECK_EQ(boot_cpu_has(X86_FEATURE_AVX512_COPY), want);
	CHECK(!strcmp(switchyard_cpu_feature_name(X86_FEATURE_AVX512_COPY),
		      "avx512_copy"));
}

static void test_mask(const char *self)
{
	int p[2], st;
	char out[4096] = "";
	ssize_t n, len = 0;
	pid_t pid;

	CHECK(pipe(p) == 0);
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 2);
		close(p[0]);
		setenv("SWITCHYARD_CPU_MASK", "erms,avx2,no_such_feature", 1);
		execl(self, self, "masked", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], out + len, sizeof(out) - 1 - (size_t)len)) > 0)
		len += n;
	out[len] = 0;
	close(p[0]);
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(strstr(out, "unknown CPU feature 'no_such_feature'") != NULL);
	if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		fprintf(stderr, "masked child:\n%s", out);
}

#if defined(__aarch64__)
#include "cpu_aarch64.h"
#endif

int main(int argc, char **argv)
{
	const struct switchyard_cpu *cpu = switchyard_cpu();
	/* what SWITCHYARD_CPU_MASK=erms,avx2 hides: they, and what needs
	 * them (test_cpu_mask_deps tests the rule) */
	const char *mask = argc > 1 ? "erms,fsrm,fzrm,fsrs,avx2,avx512f,"
				      "avx512dq,avx512cd,avx512bw,avx512vl"
				    : NULL;

	CHECK(!boot_cpu_has(NFEAT));
	CHECK(!boot_cpu_has(~0u));
	CHECK(switchyard_cpu_feature_name(NFEAT) == NULL);
#if defined(__x86_64__)
	CHECK(!strcmp(switchyard_cpu_feature_name(X86_FEATURE_ERMS), "erms"));
	CHECK(cpu_feature_enabled(X86_FEATURE_XMM2));	/* x86-64 has SSE2 */
	if (!read_cpuinfo()) {
		printf("SKIP: /proc/cpuinfo not readable here\n");
		return 77;
	}
	CHECK(!strcmp(cpu->vendor, vendor));
	CHECK_EQ(cpu->family, family);
	CHECK_EQ(cpu->model, model);
	CHECK_EQ(cpu->stepping, stepping);
	check_features(mask);
	check_synthetic(mask);
	if (!mask)
		test_mask(argv[0]);
#elif defined(__aarch64__)
	(void)mask;
	(void)read_cpuinfo;
	(void)check_features;
	(void)check_synthetic;
	(void)test_mask;
	a64_main(argc, argv);
#else
	(void)mask;
	(void)argv;
	(void)read_cpuinfo;
	(void)check_features;
	(void)check_synthetic;
	(void)test_mask;
	CHECK(!strcmp(cpu->vendor, "unknown"));
	for (unsigned f = 0; f < NFEAT; f++)
		CHECK(!boot_cpu_has(f));
#endif
	printf("cpu: %s family %u model %u stepping %u\n", cpu->vendor,
	       cpu->family, cpu->model, cpu->stepping);
	return sy_test_done(mask ? "cpu (masked)" : "cpu");
}
