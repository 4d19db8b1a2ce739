/* SPDX-License-Identifier: MIT */
/*
 * arch/generic/cpu_probe.c - no X86_FEATURE_* here: every word stays 0.
 */
#include <string.h>

#include "../../internal.h"

void sy_arch_cpu_probe(struct switchyard_cpu *cpu,
		       uint32_t words[SWITCHYARD_CPU_WORDS])
{
	(void)words;
	strcpy(cpu->vendor, "unknown");
}

void sy_arch_cpu_synthetic(const struct switchyard_cpu *cpu,
			   uint32_t words[SWITCHYARD_CPU_WORDS])
{
	(void)cpu;
	(void)words;
}

/* No feature here depends on another. */
void sy_arch_cpu_deps(uint32_t words[SWITCHYARD_CPU_WORDS])
{
	(void)words;
}
