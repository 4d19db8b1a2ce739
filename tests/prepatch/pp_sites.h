/* SPDX-License-Identifier: MIT */
/*
 * pp_sites.h - site functions for the prepatch test: PP_FN(name, test,
 * key, long) returns 1 when it took its key's enabled-state branch. A long
 * one has 600 bytes of straight-line code on that branch: the assembler
 * emits the 5-byte jump, and the functions spread over several pages.
 */
#ifndef PP_SITES_H
#define PP_SITES_H

#include <switchyard.h>

#define PP_FILL_1 __asm__ volatile(".skip 600, 0x90")
#define PP_FILL_0 (void)0
#define PP_FN(fn, test, key, fill)                                           \
	__attribute__((noinline, used)) int fn(void)                         \
	{                                                                    \
		if (test(&key)) {                                            \
			PP_FILL_##fill;                                      \
			return 1;                                            \
		}                                                            \
		return 0;                                                    \
	}

/* Sum of Private_Dirty (kB) of the executable mappings of path. */
static inline long pp_text_dirty_kb(const char *path)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[4352];
	bool in = false;
	long kb, sum = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char perms[8], *name;
		unsigned long lo, hi;
		int end = 0;

		/* the path is the rest of the line: it may hold spaces */
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi,
			   perms, &end) >= 3 && end > 0 &&
		    strchr(line, '-') && line[0] != ' ' &&
		    strlen(perms) == 4) {
			name = line + end;
			name[strcspn(name, "\n")] = 0;
			in = perms[2] == 'x' && !strcmp(name, path);
			continue;
		}
		if (in && sscanf(line, "Private_Dirty: %ld kB", &kb) == 1)
			sum += kb;
	}
	fclose(f);
	return sum;
}

#endif
