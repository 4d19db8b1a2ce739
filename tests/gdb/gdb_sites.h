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
 * filler goes on the straight-line one to make a site long). The path is
 * recorded by a call on each (each object has its own gdb_path): a return
 * value, or a store merged after the branch, is computed by clang before
 * the site. */
extern volatile int gdb_path;
__attribute__((noinline)) void gdb_on(void);
__attribute__((noinline)) void gdb_off(void);
#define GDB_PATH_FNS                                                         \
	volatile int gdb_path;                                               \
	__attribute__((noinline)) void gdb_on(void) { gdb_path = 1; }        \
	__attribute__((noinline)) void gdb_off(void) { gdb_path = 0; }
#define GDB_SITE_FN(fn, test, key, fill_on, fill_off)                        \
	__attribute__((noinline, used)) void fn(void)                        \
	{                                                                    \
		if (test(&key)) {                                            \
			fill_on;                                             \
			gdb_on();                                            \
			return;                                              \
		}                                                            \
		fill_off;                                                    \
		gdb_off();                                                   \
	}
#define GDB_NONE (void)0

#endif
