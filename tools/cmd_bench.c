/* SPDX-License-Identifier: MIT */
/*
 * cmd_bench.c - `switchyard bench [--quick] [--json FILE] [--md FILE]
 * [--no-plots] [EXPERIMENT...]`: runs the benchmark suite's harness
 * (sybench.py, python3) with its benchmark programs: those installed with
 * this tool (<libexecdir>/switchyard/bench, found relative to the tool:
 * SY_BENCH_FROM_BIN), else those of the build tree the tool belongs to
 * (<build>/bench beside <build>/tools). The words after `bench` are the
 * harness's, passed as they are; its exit status is the command's. 1: the
 * suite or python3 was not found.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"

#ifndef SY_BENCH_FROM_BIN
#define SY_BENCH_FROM_BIN "../libexec/switchyard/bench"
#endif

/* switchyard bench ARGS...: argv[0] is "bench", the rest the harness's */
int cmd_bench(int argc, char **argv)
{
	static const char *const where[] = { SY_BENCH_FROM_BIN, "../bench" };
	char self[PATH_MAX], dir[2][PATH_MAX + sizeof(SY_BENCH_FROM_BIN) + 16];
	char script[sizeof(dir[0]) + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self));
	char **args;
	int found = -1;

	if (n <= 0 || n >= (ssize_t)sizeof(self)) {
		fprintf(stderr, "switchyard bench: cannot find the tool's own "
			"location (/proc/self/exe: %s)\n",
			n < 0 ? strerror(errno) : "path too long");
		return 1;
	}
	self[n] = 0;
	*strrchr(self, '/') = 0;
	for (int i = 0; i < 2 && found < 0; i++) {
		/* (a truncated path names nothing: not found) */
		if (snprintf(dir[i], sizeof(dir[i]), "%s/%s", self, where[i]) <
			    (int)sizeof(dir[i]) &&
		    snprintf(script, sizeof(script), "%s/sybench.py", dir[i]) <
			    (int)sizeof(script) &&
		    !access(script, R_OK))
			found = i;
	}
	if (found < 0) {
		fprintf(stderr, "switchyard bench: the benchmark suite is not "
			"installed (no sybench.py in %s, nor in a build tree's "
			"%s): install a build configured with "
			"-DSWITCHYARD_BUILD_BENCH=ON and "
			"-DSWITCHYARD_INSTALL_BENCH=ON (both the default on "
			"x86-64), or run build/tools/switchyard bench in a "
			"build tree\n",
			dir[0], dir[1]);
		return 1;
	}
	args = calloc((size_t)argc + 5, sizeof(*args));
	if (!args)
		return 1;
	/* -B: no __pycache__ written into the install (run as root, python
	 * would; nothing removes it at uninstall) */
	args[0] = "python3";
	args[1] = "-B";
	args[2] = script;
	args[3] = "--bindir";
	args[4] = dir[found];
	for (int i = 1; i < argc; i++)
		args[i + 4] = argv[i];
	execvp("python3", args);
	fprintf(stderr, "switchyard bench: python3: %s\n", strerror(errno));
	free(args);
	return 1;
}
