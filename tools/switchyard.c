/* SPDX-License-Identifier: MIT */
/*
 * switchyard.c - the switchyard command line tool: main(), the global
 * options and the table of commands; each command is in a file of its own
 * group (cmds.h):
 *
 *   switchyard list FILE|PID      the static keys, static calls,
 *                                 alternatives and run-time constants of an
 *                                 ELF file, or a live process's keys and
 *                                 calls (cmd_list.c)
 *   switchyard set PID GLOB on|off|inc|dec
 *   switchyard call PID GLOB TARGET
 *   switchyard ps                 change or survey live processes through
 *                                 their control sockets (cmd_live.c)
 *   switchyard prepatch FILE [-o OUT]
 *                                 write every static key site's initial form
 *                                 into the file (cmd_prepatch.c)
 *   switchyard cpu                the CPU features the library sees and the
 *                                 copy routine's thresholds (cmd_cpu.c)
 *   switchyard bench [...]        the benchmark suite (cmd_bench.c)
 *
 * The options --json (every command but bench), -o OUT (prepatch), --help
 * and --version go anywhere on the line; "--" ends them. bench alone takes
 * the words after it as they are (they are its harness's options), and
 * only as the first word.
 *
 * Exit status: 0 done, 1 the command failed (a message on stderr says
 * why), 2 usage.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <switchyard.h>

#include "cmds.h"
#include "util.h"

/*
 * SWITCHYARD_CONTROL and SWITCHYARD_KEYS are meant for the programs the
 * tool inspects (a shell that exports them runs the tool too): the tool
 * neither serves a socket nor sets keys of its own from them.
 */
SWITCHYARD_IGNORE_CONTROL_ENV;

/* The commands, in the order the usage lists them. */
static const struct cmd {
	const char *name;
	int (*func)(int argc, char **argv);
	int nargs;		/* its operands; -1: the words after it as
				   they are, options included (bench) */
	bool out;		/* takes -o OUT */
	const char *operands;	/* as the usage and messages show them */
} cmds[] = {
	{ "list", cmd_list, 1, false, "FILE|PID" },
	{ "set", cmd_set, 3, false, "PID GLOB on|off|inc|dec" },
	{ "call", cmd_call, 3, false, "PID GLOB TARGET" },
	{ "ps", cmd_ps, 0, false, "" },
	{ "prepatch", cmd_prepatch, 1, true, "FILE [-o OUT]" },
	{ "cpu", cmd_cpu, 0, false, "" },
	{ "calibrate", cmd_calibrate, -1, false, "[--save] [--quick] [--json]" },
	{ "bench", cmd_bench, -1, false,
	  "[--quick] [--json FILE] [--md FILE] [--no-plots] [EXPERIMENT...]" },
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

static int usage(FILE *f, int rc)
{
	for (size_t i = 0; i < NCMDS; i++)
		fprintf(f, "%s switchyard %s%s%s%s\n", i ? "      " : "usage:",
			cmds[i].name, cmds[i].operands[0] ? " " : "",
			cmds[i].operands, cmds[i].nargs < 0 ? "" : " [--json]");
	fprintf(f, "       switchyard --help | --version\n");
	return rc;
}

/* The command called name: one that takes operands, or (raw) one that
 * takes its words as they are; NULL if there is none. */
static const struct cmd *find(const char *name, bool raw)
{
	for (size_t i = 0; i < NCMDS; i++)
		if (!strcmp(name, cmds[i].name) && (cmds[i].nargs < 0) == raw)
			return &cmds[i];
	return NULL;
}

/* The command line's command, run: its exit status, or CMD_USAGE. */
static int run(int argc, char **argv)
{
	char *args[5] = { NULL, NULL, NULL, NULL, NULL };
	const struct cmd *c;
	bool ended = false;
	int nargs = 0;

	if (argc > 1 && (c = find(argv[1], true)))
		return c->func(argc - 1, argv + 1);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--") && !ended) {
			ended = true;	/* operands only from here */
			continue;
		}
		if (ended || argv[i][0] != '-' || !argv[i][1]) {
			if (nargs == 4)
				return usage_error("too many operands "
						   "('%.100s' and after)",
						   argv[i]);
			args[nargs++] = argv[i];
		} else if (!strcmp(argv[i], "--json"))
			json_output = true;
		else if (!strcmp(argv[i], "-o") && i + 1 < argc && !out_path)
			out_path = argv[++i];
		else if (!strcmp(argv[i], "-o"))
			return usage_error(out_path ? "-o given twice" :
					   "-o needs a file name");
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return usage(stdout, 0);
		else if (!strcmp(argv[i], "--version")) {
			printf("switchyard %s\n", switchyard_version());
			return 0;
		}
		else
			return usage_error("unknown option '%.100s'", argv[i]);
	}
	if (out_path && !*out_path)
		return usage_error("-o needs a file name, not an empty one");
	if (!nargs)
		return usage_error("no command given");
	c = find(args[0], false);
	if (!c)
		return usage_error("unknown command '%.100s'", args[0]);
	if (nargs - 1 != c->nargs)
		return usage_error("%s takes %s%s", args[0],
				   c->nargs ? "" : "no operands", c->operands);
	if (out_path && !c->out)
		return usage_error("-o is an option of prepatch only");
	return c->func(nargs, args);
}

int main(int argc, char **argv)
{
	int r = run(argc, argv);

	return r == CMD_USAGE ? usage(stderr, 2) : r;
}
