/* SPDX-License-Identifier: MIT */
/*
 * sy_dwarf.h - source lines of code addresses, from the DWARF line table
 * (.debug_line) of an ELF file (src/dwarf_line.c). Internal.
 */
#ifndef SY_DWARF_H
#define SY_DWARF_H

#include <stddef.h>
#include <stdint.h>

struct sy_line_row {
	uintptr_t addr;		/* run-time address (table address + bias) */
	uint32_t line;		/* 0: no line from here (the end of a
				 * sequence, or code a compiler gave line 0) */
	uint32_t file;		/* index into sy_lines.files[] */
};

struct sy_lines {
	struct sy_line_row *rows;	/* sorted by addr */
	size_t n;
	char **files;		/* "dir/name" when name is relative and the
				 * directory is known; "?" for a row whose
				 * file index the unit's table lacks */
	size_t nfiles;
};

/* Parse the .debug_line of the ELF file at path, relocating every address
 * by bias. Returns 0, -ENOENT if the file has no (uncompressed)
 * .debug_line, -ENOEXEC if it is malformed, or another negative errno.
 * On error *out is empty (and safe to free). */
__attribute__((visibility("hidden")))
int sy_lines_load(const char *path, uintptr_t bias, struct sy_lines *out);
/* The same from an ELF image in memory (of any alignment). */
__attribute__((visibility("hidden")))
int sy_lines_parse(const void *img, size_t size, uintptr_t bias,
		   struct sy_lines *out);
/* The row covering addr: the last row at or before it, unless that row
 * ends its sequence (addr is in no sequence). NULL if none. */
__attribute__((visibility("hidden")))
const struct sy_line_row *sy_lines_find(const struct sy_lines *l,
					uintptr_t addr);
__attribute__((visibility("hidden")))
void sy_lines_free(struct sy_lines *l);

#endif /* SY_DWARF_H */
