/* SPDX-License-Identifier: MIT */
/*
 * cpu.c - CPU features (<switchyard/cpufeature.h>): the bitmap the arch
 * probe fills (src/arch/<arch>/cpu_probe.c), the mask from the
 * environment, the names (x86-64's below; an arch with names of its own,
 * SY_ARCH_HAVE_CPU_NAMES, gives them in its cpu_probe.c).
 *
 * Computed once, by a constructor of the library (so that every later call
 * is async-signal-safe: a read), or by the first call if that comes earlier
 * (another library's constructor); published with a release store.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "internal.h"

#ifdef SY_ARCH_HAVE_CPU_NAMES
#define names sy_arch_cpu_names
#define N_NAMES sy_arch_cpu_nnames
#else
static const struct {
	unsigned feature;
	const char *name;	/* as /proc/cpuinfo shows it */
} names[] = {
	{ X86_FEATURE_XMM3, "pni" },
	{ X86_FEATURE_FMA, "fma" },
	{ X86_FEATURE_XMM4_1, "sse4_1" },
	{ X86_FEATURE_XMM4_2, "sse4_2" },
	{ X86_FEATURE_MOVBE, "movbe" },
	{ X86_FEATURE_POPCNT, "popcnt" },
	{ X86_FEATURE_XSAVE, "xsave" },
	{ X86_FEATURE_OSXSAVE, "osxsave" },
	{ X86_FEATURE_AVX, "avx" },
	{ X86_FEATURE_XMM, "sse" },
	{ X86_FEATURE_XMM2, "sse2" },
	{ X86_FEATURE_BMI1, "bmi1" },
	{ X86_FEATURE_AVX2, "avx2" },
	{ X86_FEATURE_BMI2, "bmi2" },
	{ X86_FEATURE_ERMS, "erms" },
	{ X86_FEATURE_AVX512F, "avx512f" },
	{ X86_FEATURE_AVX512DQ, "avx512dq" },
	{ X86_FEATURE_AVX512CD, "avx512cd" },
	{ X86_FEATURE_AVX512BW, "avx512bw" },
	{ X86_FEATURE_AVX512VL, "avx512vl" },
	{ X86_FEATURE_MOVDIRI, "movdiri" },
	{ X86_FEATURE_MOVDIR64B, "movdir64b" },
	{ X86_FEATURE_FSRM, "fsrm" },
	{ X86_FEATURE_FZRM, "fzrm" },
	{ X86_FEATURE_FSRS, "fsrs" },
	{ X86_FEATURE_FSRC, "fsrc" },
	{ X86_FEATURE_ABM, "abm" },
	{ X86_FEATURE_REP_GOOD, "rep_good" },
	{ X86_FEATURE_AVX512_COPY, "avx512_copy" },
};
#define N_NAMES (sizeof(names) / sizeof(names[0]))
#endif

struct cpu_state {
	struct switchyard_cpu cpu;
	uint32_t words[SWITCHYARD_CPU_WORDS];
};

static struct cpu_state state;
static int ready;	/* see cpu_state() */

/*
 * ld.so's pointer to the initial stack: argc, argv[0..argc-1], NULL, then
 * the environment, NULL (the System V ABI's process start). Weak: a C
 * library without it (not glibc) leaves it NULL.
 */
extern void *__libc_stack_end __attribute__((weak));

/*
 * secure_getenv(), also before the C library has set environ up. An IFUNC
 * resolver (switchyard_memcpy's, src/copy/memcpy_entry.c) runs while the
 * dynamic linker relocates the program, and glibc sets environ in its
 * initialisation, after that: getenv() then finds nothing (SWITCHYARD_CPU_MASK
 * and SWITCHYARD_MEMCPY were ignored for the whole process). Then the
 * initial environment is read where the kernel put it, after argv on the
 * initial stack. As secure_getenv(): nothing in a secure-execution
 * (set-user-ID) process.
 */
const char *sy_getenv(const char *name)
{
	size_t len = strlen(name);
	char **envp;
	long argc;

	if (environ)
		return secure_getenv(name);
	if (!&__libc_stack_end || !__libc_stack_end || getauxval(AT_SECURE))
		return NULL;
	argc = *(const long *)__libc_stack_end;
	if (argc < 0)
		return NULL;
	envp = (char **)__libc_stack_end + 1 + argc + 1;
	for (; *envp; envp++)
		if (!strncmp(*envp, name, len) && (*envp)[len] == '=')
			return *envp + len + 1;
	return NULL;
}

/* The features SWITCHYARD_CPU_MASK names ("erms,fsrm"), as a bitmap.
 * Items are separated by commas, and an empty one is skipped, as in every
 * list-valued variable (switchyard(3) ENVIRONMENT); a blank is part of an
 * item (so "erms fsrm" is one unknown name, reported). */
static void read_mask(uint32_t *words)
{
	const char *env = sy_getenv("SWITCHYARD_CPU_MASK");
	char name[32];

	while (env && *env) {
		size_t n = strcspn(env, ",");
		bool known = false;

		if (n && n < sizeof(name)) {
			memcpy(name, env, n);
			name[n] = 0;
			for (size_t i = 0; i < N_NAMES; i++) {
				if (strcmp(names[i].name, name))
					continue;
				words[names[i].feature / 32] |=
					1u << names[i].feature % 32;
				known = true;
			}
		}
		if (n && !known)
			sy_log(SWITCHYARD_LOG_WARN, "SWITCHYARD_CPU_MASK: "
			       "unknown CPU feature '%.*s' ignored", (int)n,
			       env);
		env += n;
		env += strspn(env, ",");
	}
}

/*
 * ready: 0 not computed, 1 being written (by the thread that won the CAS),
 * 2 published. A thread that finds 1 waits for the writer, which runs no
 * code that could wait for it: this only happens to calls made from other
 * constructors while ours runs (a signal handler that interrupted the
 * writer itself on its own thread would wait forever: not possible once
 * the library is loaded).
 */
static const struct cpu_state *cpu_state(void)
{
	struct cpu_state s;
	uint32_t mask[SWITCHYARD_CPU_WORDS];
	int expect = 0;

	if (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) == 2)
		return &state;
	memset(&s, 0, sizeof(s));
	memset(mask, 0, sizeof(mask));
	sy_arch_cpu_probe(&s.cpu, s.words);
	read_mask(mask);
	/* the mask before the synthetic features are derived (masking
	 * avx512f hides avx512_copy), and after (they can be masked too);
	 * what a hidden (or absent) feature's dependents need goes with it,
	 * as with the kernel's clearcpuid= (masking avx hides avx2) */
	for (int i = 0; i < SWITCHYARD_CPU_WORDS; i++)
		s.words[i] &= ~mask[i];
	sy_arch_cpu_deps(s.words);
	sy_arch_cpu_synthetic(&s.cpu, s.words);
	for (int i = 0; i < SWITCHYARD_CPU_WORDS; i++)
		s.words[i] &= ~mask[i];
	if (__atomic_compare_exchange_n(&ready, &expect, 1, false,
					__ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
		state = s;
		/* pairs with the acquire loads */
		__atomic_store_n(&ready, 2, __ATOMIC_RELEASE);
	}
	while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) != 2)
		sy_arch_cpu_relax();
	return &state;
}

__attribute__((constructor)) static void cpu_init(void)
{
	cpu_state();
}

const struct switchyard_cpu *switchyard_cpu(void)
{
	return &cpu_state()->cpu;
}

bool boot_cpu_has(unsigned int feature)
{
	if (feature >= SWITCHYARD_CPU_WORDS * 32)
		return false;
	return cpu_state()->words[feature / 32] >> (feature % 32) & 1;
}

const char *switchyard_cpu_feature_name(unsigned int feature)
{
	for (size_t i = 0; i < N_NAMES; i++)
		if (names[i].feature == feature)
			return names[i].name;
	return NULL;
}
