/* SPDX-License-Identifier: MIT */
/*
 * gdb_sites.h - site functions for the debugger tests: each returns 1 when
 * it took the branch of its key's enabled state, 0 otherwise. A LONG site
 * has 200 bytes of straight-line code between it and its label, which
 * makes the assembler emit the 5-byte jump; a short one the 2-byte jump.
 * noinline, and nothing before the site: the function's first instruction
 * is the site, where `break f` puts gdb's breakpoint (the test checks).
 */
#ifndef GDB_SITES_H
#define GDB_SITES_H

#include <switchyard.h>

#define GDB_FILLER() __asm__ volatile(".skip 200, 0x90")

/* fill_on, fill_off: code on the enabled and the disabled path (the
 * filler goes on the straight-line one to make a site long) */
#define GDB_SITE_FN(fn, test, key, fill_on, fill_off)                        \
	__attribute__((noinline, used)) int fn(void)                         \
	{                                                                    \
		if (test(&key)) {                                            \
			fill_on;                                             \
			return 1;                                            \
		}                                                            \
		fill_off;                                                    \
		return 0;                                                    \
	}
#define GDB_NONE (void)0

#endif
