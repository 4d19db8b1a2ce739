/* SPDX-License-Identifier: MIT */
/*
 * exec_self.h - run a program of the test suite again, as a child: itself,
 * or through the emulator the suite runs the tests under
 * (SY_TEST_EMULATOR: a cross build's CMAKE_CROSSCOMPILING_EMULATOR, words
 * separated by blanks), where the kernel cannot run it alone (an AArch64
 * program on an x86-64 host without binfmt_misc: qemu-user passes the
 * execve() to the host, which then runs the emulator itself).
 */
#ifndef SY_TEST_EXEC_SELF_H
#define SY_TEST_EXEC_SELF_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* exec prog with argv0 and arg (may be NULL); returns only on failure */
static void sy_exec(const char *prog, const char *argv0, const char *arg)
{
	const char *emu = getenv("SY_TEST_EMULATOR");
	static char buf[1024];
	char *argv[36];
	int n = 0;

	if (emu && !*emu)
		emu = NULL;
	if (emu) {
		snprintf(buf, sizeof(buf), "%s", emu);
		for (char *t = strtok(buf, " "); t && n < 32;
		     t = strtok(NULL, " "))
			argv[n++] = t;
		argv[n++] = (char *)prog;	/* the emulator's argument */
	} else {
		argv[n++] = (char *)argv0;
	}
	if (arg)
		argv[n++] = (char *)arg;
	argv[n] = NULL;
	execvp(emu ? argv[0] : prog, argv);
}

#endif /* SY_TEST_EXEC_SELF_H */
