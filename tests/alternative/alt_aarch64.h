/* SPDX-License-Identifier: MIT */
/*
 * alt_aarch64.h - test_alternative.c's AArch64 cases: every form for the
 * hwcaps the issue names (LSE atomics, CRC32, AES, SHA2, SVE, SVE2, BTI,
 * PAC, DIT, RNG); a replacement with every kind of A64 relative operand;
 * the words of sites before (their copy, as compiled) and after
 * registration; real LSE and SVE instructions, chosen only where the CPU
 * runs them (a wrong choice under QEMU_CPU=cortex-a53 is SIGILL).
 *
 * The suite runs it under qemu as QEMU_CPU=max (nearly every feature) and
 * QEMU_CPU=cortex-a53 (Armv8.0: no LSE, SVE, BTI, PAC, RNG), each told in
 * SY_TEST_QEMU_CPU, so that both choices of each site are taken; and
 * masked (SWITCHYARD_CPU_MASK, SY_TEST_MASKED).
 */
#ifndef SY_TEST_ALT_AARCH64_H
#define SY_TEST_ALT_AARCH64_H

ALT_CASES(atomics, KERNEL_HWCAP_ATOMICS)
ALT_CASES(crc32, KERNEL_HWCAP_CRC32)
ALT_CASES(aes, KERNEL_HWCAP_AES)
ALT_CASES(sha2, KERNEL_HWCAP_SHA2)
ALT_CASES(sve, KERNEL_HWCAP_SVE)
ALT_CASES(sve2, KERNEL_HWCAP_SVE2)
ALT_CASES(bti, KERNEL_HWCAP_BTI)
ALT_CASES(paca, KERNEL_HWCAP_PACA)
ALT_CASES(dit, KERNEL_HWCAP_DIT)
ALT_CASES(rng, KERNEL_HWCAP_RNG)
ALT_CASES_2(atomics_sve, KERNEL_HWCAP_ATOMICS, KERNEL_HWCAP_SVE)
ALT_CASES_2(sve_atomics, KERNEL_HWCAP_SVE, KERNEL_HWCAP_ATOMICS)
ALT_CASES_2(crc32_sve2, KERNEL_HWCAP_CRC32, KERNEL_HWCAP_SVE2)
ALT_CASES_2(aes_rng, KERNEL_HWCAP_AES, KERNEL_HWCAP_RNG)

/* what the masked run hides (CMakeLists.txt's SY_ALT_MASK_A64) */
static const unsigned alt_a64_masked[] = {
	KERNEL_HWCAP_ATOMICS, KERNEL_HWCAP_CRC32, KERNEL_HWCAP_AES,
	KERNEL_HWCAP_SVE, KERNEL_HWCAP_SVE2, KERNEL_HWCAP_BTI,
	KERNEL_HWCAP_PACA, KERNEL_HWCAP_RNG,
};

/*
 * A replacement with every kind of relative operand (feature CRC32): ADRP
 * and an LDR literal and ADR out of it (to alt_global, alt_two), an LDR
 * literal and ADR into it (its own word), CBZ, CBNZ and TBZ within it, a
 * B.cond out of it (taken) to a label after the site. 42 with the
 * feature, 1 without; a branch not re-aimed lands elsewhere (7, UDF: a
 * crash), a data reference not re-aimed reads something else.
 */
const int alt_two = 2;

__attribute__((noinline)) static int reloc(void)
{
	register long x0 __asm__("x0");

	__asm__ volatile(ALTERNATIVE("mov w0, #1",
				     "adrp x1, alt_global\n\t"
				     "ldr w0, [x1, #:lo12:alt_global]\n\t"
				     "ldr w2, 3f\n\t"
				     "add w0, w0, w2\n\t"
				     "adr x3, 3f\n\t"
				     "ldr w3, [x3]\n\t"
				     "add w0, w0, w3\n\t"
				     "cbz w0, 5f\n\t"
				     "cbnz w0, 4f\n\t"
				     "udf #1\n"
				     "4:\ttbz w0, #0, 6f\n\t"
				     "udf #2\n"
				     "6:\tcmp w0, #42\n\t"
				     "b.eq 2f\n"
				     "5:\tmov w0, #7\n\t"
				     "b 2f\n"
				     "3:\t.word 1",
				     KERNEL_HWCAP_CRC32)
			 "\n2:"
			 : "=r"(x0) : : "x1", "x2", "x3", "cc", "memory");
	return (int)x0;
}

/* out of it: ADR and an LDR literal to data, then a CBZ (taken) */
__attribute__((noinline)) static int reloc_out(void)
{
	register long x0 __asm__("x0");

	__asm__ volatile(ALTERNATIVE("mov w0, #1",
				     "adr x1, alt_global\n\t"
				     "ldr w0, [x1]\n\t"
				     "ldr w2, alt_two\n\t"
				     "add w0, w0, w2\n\t"
				     "mov w4, wzr\n\t"
				     "cbz w4, 2f\n\t"
				     "udf #3",
				     KERNEL_HWCAP_CRC32)
			 "\n2:"
			 : "=r"(x0) : : "x1", "x2", "x4", "cc", "memory");
	return (int)x0;
}

/* a TBZ and a B out of it (taken) */
__attribute__((noinline)) static int reloc_tbz(void)
{
	register long x0 __asm__("x0");

	__asm__ volatile(ALTERNATIVE("mov w0, #1",
				     "mov w0, #42\n\t"
				     "tbz w0, #0, 2f\n\t"
				     "udf #4",
				     KERNEL_HWCAP_CRC32)
			 "\n2:"
			 : "=r"(x0) : : "cc");
	return (int)x0;
}

__attribute__((noinline)) static int reloc_b(void)
{
	register long x0 __asm__("x0");

	__asm__ volatile(ALTERNATIVE("mov w0, #1",
				     "mov w0, #42\n\t"
				     "b 2f\n\t"
				     "udf #5",
				     KERNEL_HWCAP_CRC32)
			 "\n2:"
			 : "=r"(x0) : : "cc");
	return (int)x0;
}

/*
 * Real instructions: an atomic add with LSE (LDADD, STADD) or with
 * exclusives, an SVE vector length (CNTB). Chosen wrongly, the LSE and SVE
 * ones are undefined on a CPU without them: SIGILL.
 */
static int alt_lse_used = -1;

ALT_NOINLINE static long add_llsc(long *p, long v)
{
	long old, sum;
	unsigned fail;

	__asm__ volatile("1:\tldxr %0, [%3]\n\t"
			 "add %1, %0, %4\n\t"
			 "stxr %w2, %1, [%3]\n\t"
			 "cbnz %w2, 1b"
			 : "=&r"(old), "=&r"(sum), "=&r"(fail)
			 : "r"(p), "r"(v) : "memory");
	alt_lse_used = 0;
	return old;
}

ALT_NOINLINE static long add_lse(long *p, long v)
{
	long old;

	__asm__ volatile(".arch_extension lse\n\t"
			 "ldadd %2, %0, [%1]"
			 : "=r"(old) : "r"(p), "r"(v) : "memory");
	alt_lse_used = 1;
	return old;
}

/* the same in one asm: the exclusives loop's CBNZ within the site */
ALT_NOINLINE static void add_asm(long *p, long v)
{
	long sum;
	unsigned fail;

	__asm__ volatile(ALTERNATIVE("1:\tldxr %0, [%2]\n\t"
				     "add %0, %0, %3\n\t"
				     "stxr %w1, %0, [%2]\n\t"
				     "cbnz %w1, 1b",
				     ".arch_extension lse\n\t"
				     "stadd %3, [%2]",
				     KERNEL_HWCAP_ATOMICS)
			 : "=&r"(sum), "=&r"(fail) : "r"(p), "r"(v) : "memory");
}

ALT_NOINLINE static long vl_none(void)
{
	return 0;
}

ALT_NOINLINE static long vl_sve(void)
{
	long n;

	__asm__ volatile(".arch_extension sve\n\tcntb %0" : "=r"(n));
	return n;
}

static void alt_a64_real(void)
{
	long ctr = 100, old, n;
	int lse = boot_cpu_has(KERNEL_HWCAP_ATOMICS);

	old = switchyard_alternative_call(add_llsc, KERNEL_HWCAP_ATOMICS,
					  add_lse, &ctr, 5);
	CHECK_EQ(old, 100);
	CHECK_EQ(ctr, 105);
	CHECK_EQ(alt_lse_used, lse);
	add_asm(&ctr, 7);
	CHECK_EQ(ctr, 112);
	n = switchyard_alternative_call(vl_none, KERNEL_HWCAP_SVE, vl_sve);
	if (boot_cpu_has(KERNEL_HWCAP_SVE))
		CHECK(n >= 16 && n % 16 == 0);
	else
		CHECK_EQ(n, 0);
}

/* ---- the words of sites, before (the copy) and after ------------------ */

#ifndef SY_TEST_NO_SITES
/* the first record of the site that lies in fn's first 128 bytes */
static const struct sy_alt_entry *alt_a64_site(const void *fn)
{
	for (const struct sy_alt_entry *e = __start_sy_altinstr;
	     e < __stop_sy_altinstr; e++) {
		uintptr_t a = alt_rel(&e->site);

		if (a >= (uintptr_t)fn && a < (uintptr_t)fn + 128)
			return e;
	}
	return NULL;
}

static uint32_t alt_a64_w(const struct sy_alt_entry *e, int copy, int i)
{
	return alt_word((const uint8_t *)alt_rel(copy ? &e->copy : &e->site) +
			4 * i);
}

#define RD_MASK 0xffffffe0u		/* all but Rd */
#define RDN_MASK 0xfffffc00u		/* all but Rd and Rn */
#define MOVZ_X(imm) (0xd2800000u | (imm) << 5)
#define MOVK_X(imm, hw) (0xf2800000u | (hw) << 21 | (imm) << 5)
#define MOVZ_W(imm) (0x52800000u | (imm) << 5)
#define MOV_XZR 0xaa1f03e0u		/* ORR Xd, XZR, XZR */
#define ADD_X1 0x91000400u		/* ADD Xd, Xn, #1 */

/* Each kind of site, as compiled and as registration left it. */
static void alt_a64_check_words(void)
{
	int a = boot_cpu_has(KERNEL_HWCAP_ATOMICS);
	const struct sy_alt_entry *io = alt_a64_site((const void *)atomics_io);
	const struct sy_alt_entry *pad =
		alt_a64_site((const void *)atomics_pad);
	const struct sy_alt_entry *sh =
		alt_a64_site((const void *)atomics_short);
	const struct sy_alt_entry *has =
		alt_a64_site((const void *)atomics_has);

	CHECK(io && pad && sh && has);
	if (!io || !pad || !sh || !has)
		return;
	/* mov w, #1 -> mov w, #2 (MOVZ) */
	CHECK_EQ(io->len, 4);
	CHECK_EQ(alt_a64_w(io, 1, 0) & RD_MASK, MOVZ_W(1));
	CHECK_EQ(alt_a64_w(io, 0, 0) & RD_MASK, MOVZ_W(a ? 2 : 1));

	/* mov x, xzr + 5 NOPs -> 6 words of the replacement, or the MOV, a
	 * B over the padding and 4 NOPs */
	CHECK_EQ(pad->len, 24);
	CHECK_EQ(alt_a64_w(pad, 1, 0) & RD_MASK, MOV_XZR);
	for (int i = 1; i < 6; i++)
		CHECK_EQ(alt_a64_w(pad, 1, i), SY_A64_NOP);
	if (a) {
		CHECK_EQ(alt_a64_w(pad, 0, 0) & RD_MASK, MOVZ_X(0x221fu));
		CHECK_EQ(alt_a64_w(pad, 0, 1) & RD_MASK, MOVK_X(0x2222u, 1));
		CHECK_EQ(alt_a64_w(pad, 0, 2) & RD_MASK, MOVK_X(0x22u, 2));
		for (int i = 3; i < 6; i++)
			CHECK_EQ(alt_a64_w(pad, 0, i) & RDN_MASK, ADD_X1);
	} else {
		CHECK_EQ(alt_a64_w(pad, 0, 0), alt_a64_w(pad, 1, 0));
		CHECK_EQ(alt_a64_w(pad, 0, 1), 0x14000005u);	/* B +20 */
		for (int i = 2; i < 6; i++)
			CHECK_EQ(alt_a64_w(pad, 0, i), SY_A64_NOP);
	}

	/* MOVZ + 2 MOVK -> mov x, xzr + 2 NOPs */
	CHECK_EQ(sh->len, 12);
	CHECK_EQ(alt_a64_w(sh, 1, 0) & RD_MASK, MOVZ_X(0x3333u));
	CHECK_EQ(alt_a64_w(sh, 1, 1) & RD_MASK, MOVK_X(0x3333u, 1));
	CHECK_EQ(alt_a64_w(sh, 1, 2) & RD_MASK, MOVK_X(0x33u, 2));
	for (int i = 0; i < 3; i++)
		CHECK_EQ(alt_a64_w(sh, 0, i),
			 a ? (i ? SY_A64_NOP : (alt_a64_w(sh, 0, 0) & 31) |
						       MOV_XZR)
			   : alt_a64_w(sh, 1, i));

	/* static_cpu_has(): B (to the run-time test) -> NOP, or a B to the
	 * "absent" code */
	CHECK_EQ(has->len, 4);
	CHECK(alt_b_dest((const uint8_t *)alt_rel(&has->copy)) != 0);
	if (a)
		CHECK_EQ(alt_a64_w(has, 0, 0), SY_A64_NOP);
	else
		CHECK(alt_b_dest((const uint8_t *)alt_rel(&has->site)) &&
		      alt_b_dest((const uint8_t *)alt_rel(&has->site)) !=
			      alt_b_dest((const uint8_t *)alt_rel(&has->copy)));
}
#endif

/* ---- what the CPU must be ----------------------------------------------- */

static void alt_a64_check_masked(void)
{
	for (size_t i = 0; i < sizeof(alt_a64_masked) / sizeof(unsigned); i++)
		CHECK(!boot_cpu_has(alt_a64_masked[i]));
}

/*
 * Under qemu, the model the suite asked for: a Cortex-A53 is Armv8.0 with
 * the cryptographic extension (no LSE, SVE, BTI, PAC, RNG: those came with
 * Armv8.1 and later); "max" has them all. Both must hold, or the two runs
 * would not take both choices of the sites above.
 */
static void alt_a64_check_qemu_cpu(const char *cpu)
{
	static const unsigned later[] = {
		KERNEL_HWCAP_ATOMICS, KERNEL_HWCAP_SVE, KERNEL_HWCAP_SVE2,
		KERNEL_HWCAP_BTI, KERNEL_HWCAP_PACA, KERNEL_HWCAP_RNG,
	};
	static const unsigned v80[] = {
		KERNEL_HWCAP_FP, KERNEL_HWCAP_ASIMD, KERNEL_HWCAP_CRC32,
		KERNEL_HWCAP_AES, KERNEL_HWCAP_PMULL, KERNEL_HWCAP_SHA2,
	};
	int max;

	if (!cpu || !*cpu)
		return;
	max = !strcmp(cpu, "max");
	CHECK(max || !strcmp(cpu, "cortex-a53"));
	for (size_t i = 0; i < sizeof(later) / sizeof(later[0]); i++) {
		if (boot_cpu_has(later[i]) != max)
			fprintf(stderr, "QEMU_CPU=%s: %s %s\n", cpu,
				switchyard_cpu_feature_name(later[i]),
				max ? "missing" : "present");
		CHECK_EQ(boot_cpu_has(later[i]), max);
	}
	for (size_t i = 0; i < sizeof(v80) / sizeof(v80[0]); i++)
		CHECK(boot_cpu_has(v80[i]));
}

static void alt_a64_run(void)
{
	int crc = ALT_ASM(boot_cpu_has(KERNEL_HWCAP_CRC32));

	ALT_CHECK(atomics, KERNEL_HWCAP_ATOMICS);
	ALT_CHECK(crc32, KERNEL_HWCAP_CRC32);
	ALT_CHECK(aes, KERNEL_HWCAP_AES);
	ALT_CHECK(sha2, KERNEL_HWCAP_SHA2);
	ALT_CHECK(sve, KERNEL_HWCAP_SVE);
	ALT_CHECK(sve2, KERNEL_HWCAP_SVE2);
	ALT_CHECK(bti, KERNEL_HWCAP_BTI);
	ALT_CHECK(paca, KERNEL_HWCAP_PACA);
	ALT_CHECK(dit, KERNEL_HWCAP_DIT);
	ALT_CHECK(rng, KERNEL_HWCAP_RNG);
	ALT_CHECK_2(atomics_sve, KERNEL_HWCAP_ATOMICS, KERNEL_HWCAP_SVE);
	ALT_CHECK_2(sve_atomics, KERNEL_HWCAP_SVE, KERNEL_HWCAP_ATOMICS);
	ALT_CHECK_2(crc32_sve2, KERNEL_HWCAP_CRC32, KERNEL_HWCAP_SVE2);
	ALT_CHECK_2(aes_rng, KERNEL_HWCAP_AES, KERNEL_HWCAP_RNG);
	CHECK_EQ(reloc(), crc ? 42 : 1);
	CHECK_EQ(reloc_out(), crc ? 42 : 1);
	CHECK_EQ(reloc_tbz(), crc ? 42 : 1);
	CHECK_EQ(reloc_b(), crc ? 42 : 1);
	alt_a64_real();
#ifndef SY_TEST_NO_SITES
	alt_a64_check_words();
#endif
}

#endif /* SY_TEST_ALT_AARCH64_H */
