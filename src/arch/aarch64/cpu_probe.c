/* SPDX-License-Identifier: MIT */
/*
 * arch/aarch64/cpu_probe.c - the CPU's features from the kernel's hwcaps
 * (getauxval(AT_HWCAP), getauxval(AT_HWCAP2): what the kernel found in the
 * ID registers of every CPU, and enabled for user space), and its identity
 * from MIDR_EL1.
 *
 * The hwcaps, not the ID registers themselves: a feature the kernel does
 * not enable (SVE without its context switching, a feature an erratum or
 * arm64.nosve hid) must not be used, and only the hwcaps say what it
 * enabled (the kernel's Documentation/arch/arm64/elf_hwcaps.rst asks
 * software to check the hwcap before it uses a feature: other probes are
 * not reliable). Both auxv words go to the bitmap as they are: bit n of
 * AT_HWCAP is word 8 bit n (words 8 and 9 hold its 64 bits), bit n of
 * AT_HWCAP2 is word 10 bit n (words 10 and 11).
 *
 * MIDR_EL1 (Arm ARM, "MIDR_EL1, Main ID Register"): implementer
 * [31:24], variant [23:20], architecture [19:16], part number [15:4],
 * revision [3:0]. EL0 cannot read it, but with HWCAP_CPUID the kernel
 * traps the MRS and emulates it (Documentation/arch/arm64/
 * cpu-feature-registers.rst); without, the same value is in sysfs
 * (.../cpu0/regs/identification/midr_el1).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "../../internal.h"

#ifndef AT_HWCAP2
#define AT_HWCAP2 26
#endif

static void clear(uint32_t *words, unsigned feature)
{
	words[feature / 32] &= ~(1u << feature % 32);
}

static bool has(const uint32_t *words, unsigned feature)
{
	return words[feature / 32] >> feature % 32 & 1;
}

/* MIDR_EL1 through sysfs ("0x00000000410fd034\n"), or 0. */
static uint64_t midr_sysfs(void)
{
	char buf[32];
	ssize_t n;
	int fd = open("/sys/devices/system/cpu/cpu0/regs/identification/"
		      "midr_el1", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return strtoull(buf, NULL, 16);
}

/* The implementers' codes (MIDR_EL1.Implementer, in the Arm ARM) */
static const struct {
	uint8_t code;
	const char *name;
} implementers[] = {
	{ 0x41, "ARM" }, { 0x42, "Broadcom" }, { 0x43, "Cavium" },
	{ 0x44, "DEC" }, { 0x46, "Fujitsu" }, { 0x48, "HiSilicon" },
	{ 0x49, "Infineon" }, { 0x4d, "Motorola" }, { 0x4e, "NVIDIA" },
	{ 0x50, "APM" }, { 0x51, "Qualcomm" }, { 0x53, "Samsung" },
	{ 0x56, "Marvell" }, { 0x61, "Apple" }, { 0x66, "Faraday" },
	{ 0x69, "Intel" }, { 0x6d, "Microsoft" }, { 0x70, "Phytium" },
	{ 0xc0, "Ampere" },
};

void sy_arch_cpu_probe(struct switchyard_cpu *cpu,
		       uint32_t words[SWITCHYARD_CPU_WORDS])
{
	uint64_t hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
	uint64_t midr = 0;
	unsigned impl;

	words[KERNEL_HWCAP_FP / 32] = (uint32_t)hwcap;
	words[KERNEL_HWCAP_FP / 32 + 1] = (uint32_t)(hwcap >> 32);
	words[KERNEL_HWCAP_DCPODP / 32] = (uint32_t)hwcap2;
	words[KERNEL_HWCAP_DCPODP / 32 + 1] = (uint32_t)(hwcap2 >> 32);

	if (has(words, KERNEL_HWCAP_CPUID))
		__asm__ volatile("mrs %0, midr_el1" : "=r"(midr));
	else
		midr = midr_sysfs();
	if (!midr) {
		strcpy(cpu->vendor, "unknown");
		return;
	}
	impl = midr >> 24 & 0xff;
	snprintf(cpu->vendor, sizeof(cpu->vendor), "0x%02x", impl);
	for (size_t i = 0; i < sizeof(implementers) / sizeof(implementers[0]);
	     i++)
		if (implementers[i].code == impl)
			snprintf(cpu->vendor, sizeof(cpu->vendor), "%s",
				 implementers[i].name);
	cpu->family = impl;
	cpu->model = midr >> 4 & 0xfff;
	cpu->stepping = (midr >> 20 & 0xf) << 4 | (midr & 0xf);
}

/*
 * What each hwcap needs, from the architecture (the Arm ARM's feature
 * descriptions, and the ID register fields the kernel derives the hwcaps
 * from): code written for a feature takes these for granted, so masking
 * one hides the others, as the kernel's arm64.nosve hides the SVE2 hwcaps
 * (they are read from ID_AA64ZFR0_EL1, which describes SVE). AdvSIMD comes
 * with FP; PMULL and AES share ID_AA64ISAR0_EL1.AES (PMULL is its higher
 * value), SHA512 and SHA2 share .SHA2, and SHA2 needs SHA1 (".SHA2 is 0
 * where .SHA1 is"); SVE needs FP and AdvSIMD; SVE2 and its extensions
 * need SVE; ILRCPC, FLAGM2, DCPODP, MTE3, EBF16 refine a feature (the same
 * field's higher value); SME's hwcaps need SME. Applied until nothing
 * changes.
 */
static const struct {
	uint16_t feature, needs;
} deps[] = {
	{ KERNEL_HWCAP_ASIMD, KERNEL_HWCAP_FP },
	{ KERNEL_HWCAP_FPHP, KERNEL_HWCAP_FP },
	{ KERNEL_HWCAP_ASIMDHP, KERNEL_HWCAP_ASIMD },
	{ KERNEL_HWCAP_ASIMDHP, KERNEL_HWCAP_FPHP },
	{ KERNEL_HWCAP_AES, KERNEL_HWCAP_ASIMD },
	{ KERNEL_HWCAP_PMULL, KERNEL_HWCAP_AES },
	{ KERNEL_HWCAP_SHA1, KERNEL_HWCAP_ASIMD },
	{ KERNEL_HWCAP_SHA2, KERNEL_HWCAP_SHA1 },
	{ KERNEL_HWCAP_SHA512, KERNEL_HWCAP_SHA2 },
	{ KERNEL_HWCAP_SHA3, KERNEL_HWCAP_ASIMD },
	{ KERNEL_HWCAP_SM3, KERNEL_HWCAP_ASIMD },
	{ KERNEL_HWCAP_SM4, KERNEL_HWCAP_ASIMD },
	{ KERNEL_HWCAP_ASIMDRDM, KERNEL_HWCAP_ASIMD },
	{ KERNEL_HWCAP_ASIMDDP, KERNEL_HWCAP_ASIMD },
	{ KERNEL_HWCAP_ASIMDFHM, KERNEL_HWCAP_ASIMDHP },
	{ KERNEL_HWCAP_I8MM, KERNEL_HWCAP_ASIMD },
	{ KERNEL_HWCAP_BF16, KERNEL_HWCAP_ASIMD },
	{ KERNEL_HWCAP_EBF16, KERNEL_HWCAP_BF16 },
	{ KERNEL_HWCAP_SVE, KERNEL_HWCAP_ASIMD },
	{ KERNEL_HWCAP_SVE2, KERNEL_HWCAP_SVE },
	{ KERNEL_HWCAP_SVEAES, KERNEL_HWCAP_SVE2 },
	{ KERNEL_HWCAP_SVEPMULL, KERNEL_HWCAP_SVEAES },
	{ KERNEL_HWCAP_SVEBITPERM, KERNEL_HWCAP_SVE2 },
	{ KERNEL_HWCAP_SVESHA3, KERNEL_HWCAP_SVE2 },
	{ KERNEL_HWCAP_SVESM4, KERNEL_HWCAP_SVE2 },
	{ KERNEL_HWCAP_SVEI8MM, KERNEL_HWCAP_SVE },
	{ KERNEL_HWCAP_SVEF32MM, KERNEL_HWCAP_SVE },
	{ KERNEL_HWCAP_SVEF64MM, KERNEL_HWCAP_SVE },
	{ KERNEL_HWCAP_SVEBF16, KERNEL_HWCAP_SVE },
	{ KERNEL_HWCAP_SVE_EBF16, KERNEL_HWCAP_SVEBF16 },
	{ KERNEL_HWCAP_ILRCPC, KERNEL_HWCAP_LRCPC },
	{ KERNEL_HWCAP_FLAGM2, KERNEL_HWCAP_FLAGM },
	{ KERNEL_HWCAP_DCPODP, KERNEL_HWCAP_DCPOP },
	{ KERNEL_HWCAP_MTE3, KERNEL_HWCAP_MTE },
	{ KERNEL_HWCAP_SME_I16I64, KERNEL_HWCAP_SME },
	{ KERNEL_HWCAP_SME_F64F64, KERNEL_HWCAP_SME },
	{ KERNEL_HWCAP_SME_I8I32, KERNEL_HWCAP_SME },
	{ KERNEL_HWCAP_SME_F16F32, KERNEL_HWCAP_SME },
	{ KERNEL_HWCAP_SME_B16F32, KERNEL_HWCAP_SME },
	{ KERNEL_HWCAP_SME_F32F32, KERNEL_HWCAP_SME },
	{ KERNEL_HWCAP_SME_FA64, KERNEL_HWCAP_SME },
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

/* No synthetic feature here (yet). */
void sy_arch_cpu_synthetic(const struct switchyard_cpu *cpu,
			   uint32_t words[SWITCHYARD_CPU_WORDS])
{
	(void)cpu;
	(void)words;
}

/*
 * The names /proc/cpuinfo prints in its "Features" line (the kernel's
 * arch/arm64/kernel/cpuinfo.c): the hwcaps' names in lower case, the SME
 * ones without the underscore.
 */
const struct sy_cpu_name sy_arch_cpu_names[] = {
	{ KERNEL_HWCAP_FP, "fp" },
	{ KERNEL_HWCAP_ASIMD, "asimd" },
	{ KERNEL_HWCAP_EVTSTRM, "evtstrm" },
	{ KERNEL_HWCAP_AES, "aes" },
	{ KERNEL_HWCAP_PMULL, "pmull" },
	{ KERNEL_HWCAP_SHA1, "sha1" },
	{ KERNEL_HWCAP_SHA2, "sha2" },
	{ KERNEL_HWCAP_CRC32, "crc32" },
	{ KERNEL_HWCAP_ATOMICS, "atomics" },
	{ KERNEL_HWCAP_FPHP, "fphp" },
	{ KERNEL_HWCAP_ASIMDHP, "asimdhp" },
	{ KERNEL_HWCAP_CPUID, "cpuid" },
	{ KERNEL_HWCAP_ASIMDRDM, "asimdrdm" },
	{ KERNEL_HWCAP_JSCVT, "jscvt" },
	{ KERNEL_HWCAP_FCMA, "fcma" },
	{ KERNEL_HWCAP_LRCPC, "lrcpc" },
	{ KERNEL_HWCAP_DCPOP, "dcpop" },
	{ KERNEL_HWCAP_SHA3, "sha3" },
	{ KERNEL_HWCAP_SM3, "sm3" },
	{ KERNEL_HWCAP_SM4, "sm4" },
	{ KERNEL_HWCAP_ASIMDDP, "asimddp" },
	{ KERNEL_HWCAP_SHA512, "sha512" },
	{ KERNEL_HWCAP_SVE, "sve" },
	{ KERNEL_HWCAP_ASIMDFHM, "asimdfhm" },
	{ KERNEL_HWCAP_DIT, "dit" },
	{ KERNEL_HWCAP_USCAT, "uscat" },
	{ KERNEL_HWCAP_ILRCPC, "ilrcpc" },
	{ KERNEL_HWCAP_FLAGM, "flagm" },
	{ KERNEL_HWCAP_SSBS, "ssbs" },
	{ KERNEL_HWCAP_SB, "sb" },
	{ KERNEL_HWCAP_PACA, "paca" },
	{ KERNEL_HWCAP_PACG, "pacg" },
	{ KERNEL_HWCAP_DCPODP, "dcpodp" },
	{ KERNEL_HWCAP_SVE2, "sve2" },
	{ KERNEL_HWCAP_SVEAES, "sveaes" },
	{ KERNEL_HWCAP_SVEPMULL, "svepmull" },
	{ KERNEL_HWCAP_SVEBITPERM, "svebitperm" },
	{ KERNEL_HWCAP_SVESHA3, "svesha3" },
	{ KERNEL_HWCAP_SVESM4, "svesm4" },
	{ KERNEL_HWCAP_FLAGM2, "flagm2" },
	{ KERNEL_HWCAP_FRINT, "frint" },
	{ KERNEL_HWCAP_SVEI8MM, "svei8mm" },
	{ KERNEL_HWCAP_SVEF32MM, "svef32mm" },
	{ KERNEL_HWCAP_SVEF64MM, "svef64mm" },
	{ KERNEL_HWCAP_SVEBF16, "svebf16" },
	{ KERNEL_HWCAP_I8MM, "i8mm" },
	{ KERNEL_HWCAP_BF16, "bf16" },
	{ KERNEL_HWCAP_DGH, "dgh" },
	{ KERNEL_HWCAP_RNG, "rng" },
	{ KERNEL_HWCAP_BTI, "bti" },
	{ KERNEL_HWCAP_MTE, "mte" },
	{ KERNEL_HWCAP_ECV, "ecv" },
	{ KERNEL_HWCAP_AFP, "afp" },
	{ KERNEL_HWCAP_RPRES, "rpres" },
	{ KERNEL_HWCAP_MTE3, "mte3" },
	{ KERNEL_HWCAP_SME, "sme" },
	{ KERNEL_HWCAP_SME_I16I64, "smei16i64" },
	{ KERNEL_HWCAP_SME_F64F64, "smef64f64" },
	{ KERNEL_HWCAP_SME_I8I32, "smei8i32" },
	{ KERNEL_HWCAP_SME_F16F32, "smef16f32" },
	{ KERNEL_HWCAP_SME_B16F32, "smeb16f32" },
	{ KERNEL_HWCAP_SME_F32F32, "smef32f32" },
	{ KERNEL_HWCAP_SME_FA64, "smefa64" },
	{ KERNEL_HWCAP_WFXT, "wfxt" },
	{ KERNEL_HWCAP_EBF16, "ebf16" },
	{ KERNEL_HWCAP_SVE_EBF16, "sveebf16" },
};

const size_t sy_arch_cpu_nnames =
	sizeof(sy_arch_cpu_names) / sizeof(sy_arch_cpu_names[0]);
