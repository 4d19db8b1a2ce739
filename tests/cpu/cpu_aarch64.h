/* SPDX-License-Identifier: MIT */
/*
 * cpu_aarch64.h - test_cpu.c on AArch64: every hwcap the library names
 * against getauxval(AT_HWCAP, AT_HWCAP2) (present there <=> present here,
 * but for the mask), and against /proc/cpuinfo's "Features" line where
 * there is one (under qemu-user /proc/cpuinfo is the host's, an x86 one
 * here: that comparison is then left out, and said so); the identity
 * against MIDR_EL1 (read here by the same trapped MRS, and against
 * /proc/cpuinfo's "CPU implementer" and "CPU part" on Arm hardware); the
 * names; the mask: the program runs itself with
 * SWITCHYARD_CPU_MASK=atomics,sve,no_such_feature and the child must see
 * atomics, sve and every SVE hwcap (they need SVE) hidden, the rest
 * unchanged, the unknown name reported. Under qemu the suite also tells it
 * the CPU model (SY_TEST_QEMU_CPU): a Cortex-A53 is Armv8.0 with the
 * cryptographic extension, r0p4.
 */
#include <sys/auxv.h>

#include "exec_self.h"

#ifndef AT_HWCAP2
#define AT_HWCAP2 26
#endif

/* what the masked child hides: the mask, and what needs it */
static const char a64_mask[] = "atomics,sve,no_such_feature";
static const char a64_hidden[] =
	"atomics,sve,sve2,sveaes,svepmull,svebitperm,svesha3,svesm4,"
	"svei8mm,svef32mm,svef64mm,svebf16,sveebf16";

static int masked_name(const char *name)
{
	char list[sizeof(a64_hidden) + 2], word[64];

	snprintf(list, sizeof(list), ",%s,", a64_hidden);
	snprintf(word, sizeof(word), ",%s,", name);
	return strstr(list, word) != NULL;
}

/* name is a word of line (" w1 w2 ... ") */
static int in_flags_of(const char *line, const char *name)
{
	char word[64];

	snprintf(word, sizeof(word), " %s ", name);
	return strstr(line, word) != NULL;
}

/* the feature's bit in the auxiliary vector */
static int a64_auxv_has(unsigned f)
{
	unsigned b = f - KERNEL_HWCAP_FP;
	unsigned long v = getauxval(b < 64 ? AT_HWCAP : AT_HWCAP2);

	return (int)(v >> (b % 64) & 1);
}

/* /proc/cpuinfo's first "Features" line, as " w1 w2 ... ", or 0 */
static int a64_features_line(char *out, size_t size)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	int got = 0;

	if (!f)
		return 0;
	while (!got && fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');

		if (strncmp(line, "Features", 8) || !v)
			continue;
		v[strcspn(v, "\n")] = 0;
		snprintf(out, size, " %s ", v + 1);
		got = 1;
	}
	fclose(f);
	return got;
}

/* a number from a /proc/cpuinfo line "key\t: 0x41", or -1 */
static long a64_cpuinfo_num(const char *key)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	long n = -1;

	if (!f)
		return -1;
	while (n < 0 && fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');

		if (!strncmp(line, key, strlen(key)) && v)
			n = strtol(v + 1, NULL, 0);
	}
	fclose(f);
	return n;
}

static void a64_check_features(int masked)
{
	static char feat[8192];
	int named = 0, have_line = a64_features_line(feat, sizeof(feat));

	for (unsigned f = 0; f < NFEAT; f++) {
		const char *name = switchyard_cpu_feature_name(f);
		int want;

		if (!name)
			continue;
		named++;
		/* the hwcaps are in words 8 to 11, nothing else is named */
		CHECK(f >= KERNEL_HWCAP_FP && f < KERNEL_HWCAP_FP + 128);
		want = a64_auxv_has(f) && !(masked && masked_name(name));
		if (boot_cpu_has(f) != want)
			fprintf(stderr, "feature %s: library %d, auxv%s %d\n",
				name, boot_cpu_has(f), masked ? " - mask" : "",
				want);
		CHECK_EQ(boot_cpu_has(f), want);
		if (have_line && !masked)
			CHECK_EQ(boot_cpu_has(f), in_flags_of(feat, name));
	}
	CHECK(named >= 60);
	if (!have_line)
		printf("note: /proc/cpuinfo has no Features line (under "
		       "qemu-user it is the host's): hwcaps compared with "
		       "getauxval() only\n");
	/* the x86 ones are all absent */
	CHECK(!boot_cpu_has(X86_FEATURE_XMM2));
	CHECK(!boot_cpu_has(X86_FEATURE_ERMS));
	CHECK(switchyard_cpu_feature_name(X86_FEATURE_ERMS) == NULL);
}

static void a64_check_identity(void)
{
	const struct switchyard_cpu *cpu = switchyard_cpu();
	long impl = a64_cpuinfo_num("CPU implementer");
	long part = a64_cpuinfo_num("CPU part");

	if (getauxval(AT_HWCAP) & (1ul << 11)) {	/* HWCAP_CPUID */
		unsigned long midr;

		__asm__ volatile("mrs %0, midr_el1" : "=r"(midr));
		CHECK_EQ(cpu->family, midr >> 24 & 0xff);
		CHECK_EQ(cpu->model, midr >> 4 & 0xfff);
		CHECK_EQ(cpu->stepping, (midr >> 20 & 0xf) << 4 | (midr & 0xf));
		if ((midr >> 24 & 0xff) == 0x41)
			CHECK(!strcmp(cpu->vendor, "ARM"));
	}
	if (impl >= 0 && part >= 0) {
		CHECK_EQ((long)cpu->family, impl);
		CHECK_EQ((long)cpu->model, part);
	} else {
		printf("note: /proc/cpuinfo names no CPU implementer (under "
		       "qemu-user it is the host's): identity compared with "
		       "MIDR_EL1 only\n");
	}
}

/* Under qemu: the model the suite asked for. */
static void a64_check_qemu_cpu(const char *model)
{
	const struct switchyard_cpu *cpu = switchyard_cpu();

	if (!model || !*model)
		return;
	if (!strcmp(model, "cortex-a53")) {
		CHECK(!strcmp(cpu->vendor, "ARM"));
		CHECK_EQ(cpu->model, 0xd03u);
		CHECK(!cpu_have_named_feature(ATOMICS));
		CHECK(!cpu_have_named_feature(SVE));
		CHECK(!cpu_have_named_feature(BTI));
		CHECK(!cpu_have_named_feature(PACA));
		CHECK(cpu_have_named_feature(CRC32));
		CHECK(cpu_have_named_feature(AES));
		CHECK(cpu_have_named_feature(SHA2));
	} else {
		CHECK(!strcmp(model, "max"));
		CHECK(cpu_have_named_feature(ATOMICS));
		CHECK(cpu_have_named_feature(SVE));
		CHECK(cpu_have_named_feature(SVE2));
		CHECK(cpu_have_named_feature(BTI));
		CHECK(cpu_have_named_feature(PACA));
		CHECK(cpu_have_named_feature(RNG));
	}
}

static void a64_test_mask(const char *self)
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
		setenv("SWITCHYARD_CPU_MASK", a64_mask, 1);
		sy_exec(self, self, "masked");
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

static void a64_main(int argc, char **argv)
{
	int masked = argc > 1;

	CHECK(!strcmp(switchyard_cpu_feature_name(KERNEL_HWCAP_ATOMICS),
		      "atomics"));
	CHECK(!strcmp(switchyard_cpu_feature_name(KERNEL_HWCAP_SME_I16I64),
		      "smei16i64"));
	CHECK_EQ(cpu_have_named_feature(ATOMICS),
		 boot_cpu_has(KERNEL_HWCAP_ATOMICS));
	/* every AArch64 Linux has FP and AdvSIMD */
	CHECK(cpu_feature_enabled(KERNEL_HWCAP_FP));
	CHECK(static_cpu_has(KERNEL_HWCAP_ASIMD));
	a64_check_features(masked);
	a64_check_identity();
	if (!masked) {
		a64_check_qemu_cpu(getenv("SY_TEST_QEMU_CPU"));
		a64_test_mask(argv[0]);
	}
}
