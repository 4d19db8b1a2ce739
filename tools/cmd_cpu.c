/* SPDX-License-Identifier: MIT */
/*
 * cmd_cpu.c - `switchyard cpu [--json]`: the CPU features the library sees
 * (the bits its alternatives and feature keys test) and the copy routine's
 * thresholds, where they came from and whether they were written into the
 * code. Exit status 0.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <switchyard.h>

#include "../src/sy_names.h"
#include "cmds.h"
#include "util.h"

/* Where the copy routine's thresholds came from: short, the JSON token;
 * else the phrase of the text listing. */
static const char *source_name(enum switchyard_memcpy_source src, bool short_)
{
	switch (src) {
	case SWITCHYARD_MEMCPY_FROM_DEFAULT:
		return short_ ? "default" : "the table for this CPU";
	case SWITCHYARD_MEMCPY_FROM_FILE:
		return short_ ? "file" : "the calibration file";
	case SWITCHYARD_MEMCPY_FROM_ENV:
		return short_ ? "env" : "SWITCHYARD_MEMCPY";
	default:
		return "unknown";
	}
}

/* switchyard cpu */
int cmd_cpu(int argc, char **argv)
{
	const struct switchyard_cpu *cpu = switchyard_cpu();
	struct switchyard_memcpy_thresholds t;
	bool first = true, json = json_output;
	uint32_t libc_min;

	(void)argc;
	(void)argv;
	switchyard_memcpy_get_thresholds(&t);
	libc_min = switchyard_memcpy_get_libc_min();
	if (json) {
		printf("{\"vendor\": ");
		json_str(stdout, cpu->vendor);
		printf(", \"family\": %u, \"model\": %u, \"stepping\": %u, "
		       "\"features\": [", cpu->family, cpu->model,
		       cpu->stepping);
	} else {
		printf("cpu: %s family %u model %u stepping %u\nfeatures:",
		       cpu->vendor, cpu->family, cpu->model, cpu->stepping);
	}
	for (unsigned f = 0; f < SWITCHYARD_CPU_WORDS * 32; f++) {
		const char *name = switchyard_cpu_feature_name(f);

		if (!name || !boot_cpu_has(f))
			continue;
		if (json) {
			printf("%s", first ? "" : ", ");
			json_str(stdout, name);
		} else {
			printf(" %s", name);
		}
		first = false;
	}
	if (json) {
		printf("], \"memcpy\": {\"short_max\": %u, \"rep_min\": %u, "
		       "\"libc_min\": %u, "
		       "\"loop\": %d, \"source\": %d, \"patched\": %d, "
		       "\"loop_name\": \"%s\", \"source_name\": \"%s\"}}\n",
		       t.short_max, t.rep_min, libc_min, (int)t.loop,
		       (int)t.source, t.patched, sy_strategy_name(t.loop),
		       source_name(t.source, true));
		return 0;
	}
	if (t.loop == SWITCHYARD_MEMCPY_LIBC) {
		/* the whole routine is the C library's: say why */
		printf("\nmemcpy: the C library's memcpy, every size (%s); "
		       "`switchyard calibrate --save` measures whether this "
		       "library's code wins anywhere on this CPU\n",
		       t.source == SWITCHYARD_MEMCPY_FROM_DEFAULT ?
			       "no measurement of this library's code on this "
			       "CPU says it never loses to it" :
			       t.source == SWITCHYARD_MEMCPY_FROM_FILE ?
			       "the calibration file says so" :
			       "SWITCHYARD_MEMCPY says so");
		return 0;
	}
	printf("\nmemcpy: short moves up to %u bytes, ", t.short_max);
	if (t.rep_min == UINT32_MAX)
		printf("rep movsb never, ");
	else
		printf("rep movsb from %u bytes, ", t.rep_min);
	printf("%s loop between; ", sy_strategy_name(t.loop));
	if (libc_min != UINT32_MAX)
		printf("the C library's memcpy from %u bytes; ", libc_min);
	printf("thresholds from %s; written into the code: %s\n",
	       source_name(t.source, false), t.patched ? "yes" : "no");
	return 0;
}
