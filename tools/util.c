/* SPDX-License-Identifier: MIT */
/*
 * util.c - what every command of the switchyard tool shares (util.h): the
 * global options, usage errors, C++ names, JSON strings, and the one
 * function+offset namer of addresses.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sy_dwarf.h"
#include "../src/sy_elf.h"
#include "../src/sy_names.h"
#include "util.h"

bool json_output;
const char *out_path;

int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("switchyard: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n", stderr);
	return CMD_USAGE;
}

/* C++ names as the library spells them in a live process (src/names.c):
 * one demangler for every command, not libstdc++'s */
const char *demangle(const char *name, char **owned)
{
	*owned = sy_demangle(name);
	return *owned ? *owned : name;
}

void json_str(FILE *f, const char *s)
{
	char small[256], *big = NULL;
	size_t need = sy_json_escape(s, small, sizeof(small));

	if (need > sizeof(small) && (big = malloc(need)))
		sy_json_escape(s, big, need);
	fprintf(f, "\"%s\"", big ? big : small);
	free(big);
}

void json_str_null(FILE *f, const char *s)
{
	if (s)
		json_str(f, s);
	else
		fputs("null", f);
}

void place_find(struct place *p, const struct sy_syms *syms,
		const struct sy_lines *lines, uint64_t addr)
{
	const struct sy_sym *fn = sy_syms_find(syms, addr, true);
	const struct sy_line_row *ln = lines ? sy_lines_find(lines, addr)
					     : NULL;

	p->addr = addr;
	p->owned = NULL;
	p->func = fn ? demangle(fn->name, &p->owned) : NULL;
	p->off = fn ? addr - fn->addr : 0;
	p->file = ln && ln->line && ln->file < lines->nfiles ?
		  lines->files[ln->file] : NULL;
	p->line = p->file ? ln->line : 0;
}

void place_free(struct place *p)
{
	free(p->owned);
	p->owned = NULL;
}

void func_off(const struct place *p, const char *none, char *buf,
	      size_t size)
{
	if (p->func)
		snprintf(buf, size, "%s+0x%llx", p->func, p->off);
	else if (none)
		snprintf(buf, size, "%s", none);
	else
		snprintf(buf, size, "0x%llx", (unsigned long long)p->addr);
}

void place_text(const struct place *p, char *buf, size_t size)
{
	size_t n;

	func_off(p, "?+0x0", buf, size);
	n = strlen(buf);
	snprintf(buf + n, size - n, " %s%s%u", p->file ? p->file : "-",
		 p->file ? ":" : "", p->line);
	if (!p->file)
		buf[strlen(buf) - 1] = 0;	/* the line's 0 */
}

void json_place(const struct place *p)
{
	printf("\"function\": ");
	json_str_null(stdout, p->func);
	printf(", \"offset\": %llu, \"file\": ", p->off);
	json_str_null(stdout, p->file);
	printf(", \"line\": %u", p->line);
}
