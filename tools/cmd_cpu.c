/* SPDX-License-Identifier: MIT */
/*
 * cmd_cpu.c - `switchyard cpu [--json]`: the CPU features the library sees
 * (the bits its alternatives and feature keys test) and the copy routine's
 * thresholds, where they came from and whether they were written into the
 * code. Exit status 0. And `switchyard calibrate`, which measures those
 * thresholds (below).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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
		char path[4096];

		if (t.source == SWITCHYARD_MEMCPY_FROM_FILE &&
		    !switchyard_memcpy_config_path(path, sizeof(path)))
			printf("\nmemcpy: the C library's memcpy, every size "
			       "(the calibration file %s says so)\n", path);
		else if (t.source == SWITCHYARD_MEMCPY_FROM_ENV)
			printf("\nmemcpy: the C library's memcpy, every size "
			       "(SWITCHYARD_MEMCPY says so)\n");
		else
			printf("\nmemcpy: the C library's memcpy, every size "
			       "(no measurement of this library's code on this "
			       "CPU says it never loses to it); `switchyard "
			       "calibrate --save` measures whether it does\n");
		return 0;
	}
	if (t.loop == SWITCHYARD_MEMCPY_SSE2)
		printf("\nmemcpy: short moves up to %u bytes, ", t.short_max);
	else	/* short_max is the SSE2 flavour's only (memcpy.h) */
		printf("\nmemcpy: short moves up to 128 bytes (short_max %u: "
		       "the SSE2 flavour's), ", t.short_max);
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

/* ---- switchyard calibrate [--save] [--quick] [--json] ---------------------- */

static const char *const cond_name[SWITCHYARD_MEMCPY_CONDITIONS] = {
	"aligned fixed", "misaligned fixed", "aligned random",
	"misaligned random",
};

static void put_size(uint32_t v, bool json)
{
	if (v != UINT32_MAX)
		printf(json ? "%u" : "%-6u", v);
	else
		printf(json ? "null" : "-     ");
}

static void put_be_json(const char *what,
			const struct switchyard_memcpy_breakeven *be)
{
	printf(", \"%s\": [", what);
	for (int i = 0; i < SWITCHYARD_MEMCPY_CONDITIONS; i++) {
		printf("%s{\"condition\": \"%s\", \"lo\": ", i ? ", " : "",
		       cond_name[i]);
		put_size(be[i].lo, true);
		printf(", \"size\": ");
		put_size(be[i].size, true);
		printf(", \"hi\": ");
		put_size(be[i].hi, true);
		printf("}");
	}
	printf("]");
}

/*
 * Measures the copy routine's break-evens on this CPU (switchyard_calibrate:
 * the library's strategies and the C library's memcpy, interleaved) and,
 * with --save, writes the file every program linked with the library reads
 * at its start. Exit status 0, or 1 when the measurement or the file failed.
 */
int cmd_calibrate(int argc, char **argv)
{
	const struct switchyard_cpu *cpu = switchyard_cpu();
	struct switchyard_memcpy_calibration c;
	bool json = false, libc_all, ended = false;
	const char *save_err = NULL;
	unsigned flags = 0;
	char path[4096];
	int r, pr;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--") && !ended) {
			ended = true;	/* no operands follow: a word is an error */
			continue;
		}
		if (ended)
			goto unknown;
		if (!strcmp(argv[i], "--save"))
			flags |= SWITCHYARD_CALIBRATE_SAVE;
		else if (!strcmp(argv[i], "--quick"))
			flags |= SWITCHYARD_CALIBRATE_QUICK;
		else if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: switchyard calibrate [--save] [--quick] "
			       "[--json]\n");
			return 0;
		} else {
unknown:
			fprintf(stderr, "switchyard calibrate: unknown "
				"argument '%.100s' (--save, --quick, --json)\n"
				"usage: switchyard calibrate [--save] [--quick] "
				"[--json]\n", argv[i]);
			return 2;
		}
	}
	pr = switchyard_memcpy_config_path(path, sizeof(path));
	if ((flags & SWITCHYARD_CALIBRATE_SAVE) && pr) {
		/* say it before the measurement, not after */
		fprintf(stderr, "switchyard calibrate: no place for the "
			"calibration file: %s\n", pr == -ENOENT ?
			"neither XDG_CACHE_HOME nor HOME is an absolute path" :
			strerror(-pr));
		return 1;
	}
	if (!json)
		fprintf(stderr, "switchyard calibrate: measuring (%s; keep "
			"the machine otherwise idle)...\n",
			flags & SWITCHYARD_CALIBRATE_QUICK ?
				"a fraction of a second" : "about 8 s");
	r = switchyard_calibrate(flags, &c);
	if (r && r != -ENOMEM && (flags & SWITCHYARD_CALIBRATE_SAVE) &&
	    c.seconds > 0) {
		/* measured: the report below, then the error, exit 1 */
		save_err = strerror(-r);
		flags &= ~SWITCHYARD_CALIBRATE_SAVE;
		r = 0;
	}
	if (r) {
		fprintf(stderr, "switchyard calibrate: %s\n", strerror(-r));
		return 1;
	}
	libc_all = !c.libc_min;
	if (json) {
		printf("{\"vendor\": ");
		json_str(stdout, cpu->vendor);
		printf(", \"family\": %u, \"model\": %u, \"loop\": %d, "
		       "\"loop_name\": \"%s\", \"seconds\": %.2f", cpu->family,
		       cpu->model, (int)c.loop, sy_strategy_name(c.loop),
		       c.seconds);
		put_be_json("short_loop", c.short_loop);
		put_be_json("loop_rep", c.loop_rep);
		printf(", \"chosen\": {\"libc_everywhere\": %s, \"short_max\": "
		       "%u, \"rep_min\": ", libc_all ? "true" : "false",
		       c.short_max);
		put_size(c.rep_min, true);
		printf(", \"libc_min\": ");
		put_size(c.libc_min, true);
		printf("}, \"saved\": ");
		if (flags & SWITCHYARD_CALIBRATE_SAVE)
			json_str(stdout, path);
		else
			printf("null");
		if (save_err) {
			printf(", \"error\": ");
			json_str(stdout, save_err);
		}
		printf("}\n");
		goto done;
	}
	printf("cpu: %s family %u model %u; this library's %s loop against "
	       "the C library's memcpy;\nmeasured in %.1f s%s\n", cpu->vendor,
	       cpu->family, cpu->model, sy_strategy_name(c.loop), c.seconds,
	       flags & SWITCHYARD_CALIBRATE_QUICK ?
		       " (--quick: fewer rounds and sizes, less certain)" : "");
	printf("break-even sizes in bytes (lo: the first size where the "
	       "smaller strategy is no longer\nsignificantly faster; size: "
	       "where the larger's median wins from; hi: where it is\n"
	       "significantly faster from; -: none up to 64 KiB)\n");
	printf("%-19s  %-20s  %s\n", "", "short moves -> loop",
	       "loop -> rep movsb");
	printf("%-19s  %-6s %-6s %-6s  %-6s %-6s %-6s\n", "condition", "lo",
	       "size", "hi", "lo", "size", "hi");
	for (int i = 0; i < SWITCHYARD_MEMCPY_CONDITIONS; i++) {
		printf("%-19s  ", cond_name[i]);
		put_size(c.short_loop[i].lo, false);
		put_size(c.short_loop[i].size, false);
		put_size(c.short_loop[i].hi, false);
		printf(" ");
		put_size(c.loop_rep[i].lo, false);
		put_size(c.loop_rep[i].size, false);
		put_size(c.loop_rep[i].hi, false);
		printf("\n");
	}
	if (libc_all)
		printf("chosen: the C library's memcpy for every size (this "
		       "library's code was slower than it\nsomewhere on this "
		       "CPU, and never slower comes first)\n"
		       "kept in the file, used only with "
		       "SWITCHYARD_MEMCPY=libc_min=4294967295: ");
	else
		printf("chosen: ");
	printf("short moves to %u bytes, rep movsb ", c.short_max);
	if (c.rep_min == UINT32_MAX)
		printf("never");
	else
		printf("from %u bytes", c.rep_min);
	if (libc_all)
		printf("\n");
	else if (c.libc_min == UINT32_MAX)
		printf(", the C library's memcpy for no size\n");
	else
		printf(", the C library's memcpy from %u bytes\n",
		       c.libc_min);
	if (flags & SWITCHYARD_CALIBRATE_SAVE)
		printf("saved: %s (read by each program linked with "
		       "switchyard when it starts)\n", path);
	else if (!pr && !save_err)
		printf("not saved: --save writes %s\n", path);
done:
	if (save_err) {
		fprintf(stderr, "switchyard calibrate: measured, but %s could "
			"not be written: %s\n", path, save_err);
		return 1;
	}
	return 0;
}
