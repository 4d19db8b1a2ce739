/* SPDX-License-Identifier: MIT */
/*
 * naming.c - addresses as the user knows them: a key's name, a site's
 * function+offset (file:line), from the symbol and line tables of the file
 * each object was mapped from (elf.c, dwarf_line.c), the name records of
 * a stripped file, and the dynamic linker.
 *
 * Two users: report.c's messages (sy_name_key(), sy_name_site()) and the
 * listing API (introspect.c, introspect_call.c, through naming.h). Never
 * with the patch lock held: naming asks the dynamic linker (the lock
 * order, lock_order.c). It reads no registry: the listing hands it
 * addresses.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "naming.h"

/* ---- an object file's symbols and lines, for the duration of one call --- */

static bool obj_switch(struct sy_obj_cache *c, const char *path,
		       uintptr_t bias, uintptr_t anchor)
{
	if (!path)
		return false;
	if (c->path && !strcmp(c->path, path) && c->bias == bias)
		return true;
	free(c->path);
	sy_syms_free(&c->syms);
	sy_lines_free(&c->lines);
	c->path = strdup(path);
	c->bias = bias;
	c->anchor = anchor;
	c->syms_err = c->lines_err = 1;
	return c->path != NULL;
}

/*
 * Read the symbols or the lines of the object at c->anchor from the file
 * it was mapped from (sy_obj_open()), not from whatever file is at its
 * path now: after an upgrade (a new file renamed over the old) the names
 * at the path are another build's, and naming keys from them made
 * `set lib_alpha` flip lib_beta.
 */
static int load_mapped(struct sy_obj_cache *c, bool lines)
{
	struct sy_obj *o = malloc(sizeof(*o));
	char fdpath[40];
	int fd, r;

	if (!o)
		return -ENOMEM;
	sy_obj_lookup(c->anchor, o);
	fd = o->found && o->bias == c->bias ? sy_obj_open(o) : -ENOENT;
	free(o);
	if (fd < 0)
		return fd;
	/* the loaders take a path: this one reopens the very file */
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	r = lines ? sy_lines_load(fdpath, c->bias, &c->lines)
		  : sy_syms_load(fdpath, c->bias, &c->syms);
	close(fd);
	return r;
}

const struct sy_syms *sy_syms_for(struct sy_obj_cache *c, const char *path,
				  uintptr_t bias, uintptr_t anchor)
{
	if (!obj_switch(c, path, bias, anchor))
		return NULL;
	if (c->syms_err == 1)
		c->syms_err = load_mapped(c, false);
	return c->syms_err ? NULL : &c->syms;
}

const struct sy_lines *sy_lines_for(struct sy_obj_cache *c,
				    const char *path, uintptr_t bias,
				    uintptr_t anchor)
{
	if (!obj_switch(c, path, bias, anchor))
		return NULL;
	if (c->lines_err == 1)
		c->lines_err = load_mapped(c, true);
	return c->lines_err ? NULL : &c->lines;
}

void sy_obj_cache_free(struct sy_obj_cache *c)
{
	free(c->path);
	sy_syms_free(&c->syms);
	sy_lines_free(&c->lines);
}

/* Room for one more element in a doubling array; false when out of memory. */
bool sy_grow(void *vp, size_t *cap, size_t n, size_t elem)
{
	void **v = vp;

	if (n < *cap)
		return true;
	size_t c = *cap ? 2 * *cap : 64;
	void *nv = realloc(*v, c * elem);

	if (!nv)
		return false;
	*v = nv;
	*cap = c;
	return true;
}

static int first_bias_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uintptr_t *)arg = info->dlpi_addr;
	return 1;
}

/* The load bias of the main program (0 when it is not PIE). */
uintptr_t sy_exe_bias(void)
{
	uintptr_t b = 0;

	dl_iterate_phdr(first_bias_cb, &b);
	return b;
}

/* The readable name of a symbol, malloc'ed: demangled, and "a.c:k" when
 * another object of its file has its name (elf.c qualify_dups()). */
char *sy_readable_sym(const struct sy_sym *y)
{
	char *d = sy_demangle(y->name), *q;

	if (!y->file)
		return d ? d : strdup(y->name);
	if (asprintf(&q, "%s:%s", y->file, d ? d : y->name) < 0)
		q = NULL;
	free(d);
	return q;
}

/* The file of object o, malloc'ed ("/proc/self/exe" resolved for the main
 * program), or NULL. */
char *sy_obj_path(const struct sy_obj *o)
{
	return o->name[0] ? strdup(o->name) : sy_exe_path();
}

/* ---- name records (stripped files) --------------------------------------- */

/*
 * The {&object, "name", size} records of SY__NAME_RECORD() (core.h), as
 * symbols: a stripped file has no .symtab, and its keys and calls would
 * have no names. Read in memory, like the key descriptions; every name
 * copied with a bound.
 */
struct sy_namerecs {
	struct sy_syms s;	/* v sorted by address; names: each its own */
	size_t cap;
};

#define REC_NAME_MAX 256

static void name_rec(const struct sy_rec_obj *o, const void *rec, void *arg)
{
	const struct sy__name *r = rec;
	struct sy_namerecs *nr = arg;
	char *name;

	if (!r->obj || !r->size || r->size > (1u << 20) ||
	    !(name = sy_rec_strdup(o, r->name, REC_NAME_MAX)))
		return;
	if (!sy_grow(&nr->s.v, &nr->cap, nr->s.n, sizeof(*nr->s.v))) {
		free(name);
		return;
	}
	nr->s.v[nr->s.n++] = (struct sy_sym){ (uintptr_t)r->obj, r->size, name,
					      false, NULL, NULL };
}

static int cmp_sym_addr(const void *a, const void *b)
{
	uintptr_t x = ((const struct sy_sym *)a)->addr;
	uintptr_t y = ((const struct sy_sym *)b)->addr;

	return x < y ? -1 : x > y;
}

struct sy_namerecs *sy_namerecs_load(void)
{
	struct sy_namerecs *nr = calloc(1, sizeof(*nr));

	if (!nr)
		return NULL;
	sy_records_walk(SY_SEC_NAMES, SY_REC_NAMES_SIZE, name_rec, nr);
	if (nr->s.n)
		qsort(nr->s.v, nr->s.n, sizeof(*nr->s.v), cmp_sym_addr);
	return nr;
}

void sy_namerecs_free(struct sy_namerecs *nr)
{
	if (!nr)
		return;
	for (size_t i = 0; i < nr->s.n; i++)
		free((char *)nr->s.v[i].name);
	free(nr->s.v);
	free(nr);
}

/* The symbol of addr, else its name record (which has no "+0x.." form:
 * the record covers the whole object) */
static const struct sy_sym *find_name(const struct sy_syms *syms,
				      const struct sy_namerecs *recs,
				      uintptr_t addr, bool func)
{
	const struct sy_sym *y = syms ? sy_syms_find(syms, addr, func) : NULL;

	if (!y && recs && !func)
		y = sy_syms_find(&recs->s, addr, false);
	return y;
}

/* "name", "name[3]", "name+0x20" or "key@0x..."; with src, the source
 * file of a file-local key in *src (malloc'ed), and in *plain where the
 * name starts without it */
char *sy_key_name(struct sy_obj_cache *c, const struct static_key *key,
		  const char *path, uintptr_t bias,
		  const struct sy_namerecs *recs, char **src, size_t *plain)
{
	const struct sy_syms *syms = sy_syms_for(c, path, bias, (uintptr_t)key);
	const struct sy_sym *y = find_name(syms, recs, (uintptr_t)key, false);
	char buf[512], *name;

	if (y && src && y->src) {
		*src = strdup(y->src);
		*plain = y->file ? strlen(y->file) + 1 : 0;
	}
	if (!y) {
		snprintf(buf, sizeof(buf), "key@%p", (const void *)key);
		return strdup(buf);
	}
	size_t off = (uintptr_t)key - y->addr;

	name = sy_readable_sym(y);
	/* an array's every element is named by its index, [0] too: the
	 * listed name must be the element's (tools/records.c name_of()).
	 * A static call's key (sy_name_key(): 32 bytes) is never an array. */
	bool array = off % sizeof(struct static_key) == 0 &&
		     y->size % sizeof(struct static_key) == 0 &&
		     y->size > sizeof(struct static_key) &&
		     !(name && strstr(name, "__SCK__"));

	if (!name || (!off && !array))
		return name;
	if (array)
		snprintf(buf, sizeof(buf), "%s[%zu]", name,
			 off / sizeof(struct static_key));
	else
		snprintf(buf, sizeof(buf), "%s+%#zx", name, off);
	free(name);
	return strdup(buf);
}

char *sy_symbol_name(uintptr_t addr, bool func, const struct sy_namerecs *recs)
{
	struct sy_obj_cache c = { 0 };
	uintptr_t bias = 0;
	char *path = NULL, *name = NULL;

	if (!sy_object_of(addr, &path, &bias)) {
		const struct sy_syms *syms = sy_syms_for(&c, path, bias, addr);
		const struct sy_sym *y = find_name(syms, recs, addr, func);

		name = y ? sy_readable_sym(y) : NULL;
		if (name && addr != y->addr) {
			char *q = NULL;

			if (asprintf(&q, "%s+%#zx", name,
				     (size_t)(addr - y->addr)) < 0)
				q = NULL;
			free(name);
			name = q;
		}
	}
	free(path);
	sy_obj_cache_free(&c);
	return name;
}

/* ---- names for messages (report.c) --------------------------------------- */

const char *sy_base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* 'name' (object) or key@0x... */
void sy_name_key(const struct static_key *key, char *buf, size_t size)
{
	struct sy_obj_cache c = { 0 };
	uintptr_t bias = 0;
	char *path = NULL, *name;

	struct sy_namerecs *recs = sy_namerecs_load();

	sy_object_of((uintptr_t)key, &path, &bias);
	name = path ? sy_key_name(&c, key, path, bias, recs, NULL, NULL) : NULL;
	sy_namerecs_free(recs);
	/* a static call's key: __SCK__name, ns::__SCK__name in C++ */
	char *sck = name ? strstr(name, "__SCK__") : NULL;

	if (sck && sck[7])
		memmove(sck, sck + 7, strlen(sck + 7) + 1);
	if (!name)
		snprintf(buf, size, "key@%p", (const void *)key);
	else if (!strncmp(name, "key@", 4) || bias == sy_exe_bias())
		snprintf(buf, size, "'%s'", name);
	else
		snprintf(buf, size, "'%s' (%s)", name, sy_base_name(path));
	free(name);
	free(path);
	sy_obj_cache_free(&c);
}

/* function+0xoff (file:line), in object if not the program; or 0x... */
void sy_name_site(uintptr_t addr, char *buf, size_t size)
{
	struct sy_obj_cache c = { 0 };
	struct sy_obj o;
	char *path, *fn = NULL, where[512] = "";

	sy_obj_lookup(addr, &o);
	path = o.found ? sy_obj_path(&o) : NULL;
	if (!path) {
		snprintf(buf, size, "%p", (void *)addr);
		return;
	}

	const struct sy_syms *syms = sy_syms_for(&c, path, o.bias, addr);
	const struct sy_sym *f = syms ? sy_syms_find(syms, addr, true) : NULL;
	const struct sy_lines *lines = sy_lines_for(&c, path, o.bias, addr);
	const struct sy_line_row *ln = lines ? sy_lines_find(lines, addr) : NULL;

	if (!f && syms)	/* not in a function: whatever symbol covers it */
		f = sy_syms_find(syms, addr, false);
	if (ln && ln->line && ln->file < lines->nfiles)
		snprintf(where, sizeof(where), " (%s:%u)",
			 lines->files[ln->file], ln->line);
	if (f)
		fn = sy_readable_sym(f);
	if (fn)
		snprintf(buf, size, "%s+0x%zx%s", fn, (size_t)(addr - f->addr),
			 where);
	else
		snprintf(buf, size, "%p%s", (void *)addr, where);
	if (o.name[0]) {
		size_t l = strlen(buf);

		snprintf(buf + l, size - l, " in %s", sy_base_name(path));
	}
	free(fn);
	free(path);
	sy_obj_cache_free(&c);
}

