/* SPDX-License-Identifier: MIT */
/*
 * util.h - what every command of the switchyard tool shares (util.c): the
 * global options, usage errors, C++ names, JSON strings, and where an
 * address lies in a file (function+offset, file:line). Not library API.
 *
 * The tool's files form layers, each calling only the ones below it:
 * switchyard.c (main, the command table) on top; the commands (cmd_*.c);
 * the helpers at the bottom: this file, client.c (the control socket),
 * records.c, elf_image.c and needed.c (a file's records), insn.c (the
 * instructions of sites, per machine, as text), and the library's own
 * readers (src/elf.c, src/dwarf_line.c, src/names.c).
 */
#ifndef SY_TOOLS_UTIL_H
#define SY_TOOLS_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct sy_syms;
struct sy_lines;

/* The global options, as main() read them */
extern bool json_output;	/* --json */
extern const char *out_path;	/* -o OUT (prepatch), or NULL */

/* What a command returns when its operands are wrong: main() then shows
 * the usage, exit status 2. */
#define CMD_USAGE (-1)
/* "switchyard: MSG" on stderr: CMD_USAGE */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* C++ names demangled (*owned: free() it), others as they are */
const char *demangle(const char *name, char **owned);
/* s as a JSON string */
void json_str(FILE *f, const char *s);
/* s as a JSON string, or null when s is NULL */
void json_str_null(FILE *f, const char *s);

/* Where an address lies in a file: its function and its source line. */
struct place {
	uint64_t addr;
	const char *func;	/* the function's name, demangled; NULL: no
				   function symbol holds addr */
	unsigned long long off;	/* addr's offset into func (0 without) */
	const char *file;	/* NULL: no line information for addr */
	unsigned line;		/* 0 without file */
	char *owned;		/* func's storage (place_free()) */
};

/* Where addr lies by the file's symbols and lines (NULL: none read). */
void place_find(struct place *p, const struct sy_syms *syms,
		const struct sy_lines *lines, uint64_t addr);
void place_free(struct place *p);

/*
 * The function+offset name of an address, as every listing and message
 * of the tool gives it: "func+0x12" in buf. Where no function holds the
 * address, none as it is, or with none NULL the address ("0x401000").
 */
void func_off(const struct place *p, const char *none, char *buf,
	      size_t size);
/* "func+0x12 file:line" ("?+0x0" without a function, "-" without a
 * line), the column of `list FILE` for the records other than keys */
void place_text(const struct place *p, char *buf, size_t size);
/* "function": ..., "offset": ..., "file": ..., "line": ... on stdout,
 * the fields of a site in `list FILE --json` */
void json_place(const struct place *p);

#endif /* SY_TOOLS_UTIL_H */
