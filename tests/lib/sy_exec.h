/* SPDX-License-Identifier: MIT */
/*
 * sy_exec.h - start a program of this build from a test, in a native
 * build and in a cross build alike: sy_test_execv() is execv() through
 * the emulator SY_TEST_EMULATOR names, when it names one.
 *
 * In a cross build ctest starts each test through the emulator (qemu-user,
 * CMAKE_CROSSCOMPILING_EMULATOR), but a program the test starts itself is
 * started by the kernel, which runs another architecture's program only
 * where binfmt_misc hands it to the emulator. The build puts the
 * emulator's command in SY_TEST_EMULATOR (words separated by spaces; the
 * top-level CMakeLists.txt); unset, sy_test_execv() is execv().
 *
 * "/proc/self/exe" is read first: in the new process it would be the
 * emulator's own file. The child's argv[0] is the emulator's choice (qemu:
 * the program's path).
 *
 * Async-signal-safe as far as getenv() is (it reads environ; no
 * allocation, the words are split into a buffer on the stack): the child
 * of a fork() in a multithreaded test may call it. Returns only on error,
 * -1 with errno set, as execv() does.
 */
#ifndef SY_EXEC_H
#define SY_EXEC_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline int sy_test_execv(const char *path, char *const argv[])
{
	const char *emu = getenv("SY_TEST_EMULATOR");
	char words[1024], self[4096];
	char *av[64];
	size_t n = 0;
	char *p;

	if (!emu || !*emu)
		return execv(path, argv);
	if (!strcmp(path, "/proc/self/exe")) {
		ssize_t len = readlink(path, self, sizeof(self) - 1);

		if (len <= 0)
			return -1;
		self[len] = '\0';
		path = self;
	}
	if (strlen(emu) >= sizeof(words)) {
		errno = E2BIG;
		return -1;
	}
	strcpy(words, emu);
	for (p = words; *p && n < 32;) {
		if (*p == ' ') {
			*p++ = '\0';
			continue;
		}
		av[n++] = p;
		while (*p && *p != ' ')
			p++;
	}
	if (!n) {
		errno = ENOEXEC;
		return -1;
	}
	av[n++] = (char *)path;
	for (size_t i = 1; argv[0] && argv[i]; i++) {
		if (n == sizeof(av) / sizeof(av[0]) - 1) {
			errno = E2BIG;
			return -1;
		}
		av[n++] = argv[i];
	}
	av[n] = NULL;
	return execvp(av[0], av);
}

#endif /* SY_EXEC_H */
