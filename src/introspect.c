/* SPDX-License-Identifier: MIT */
/*
 * introspect.c - switchyard_for_each_key() and switchyard_for_each_site().
 *
 * Three steps, and the lock held in the first only:
 *  1. under the patch lock, a snapshot of the registry: addresses, counts,
 *     each key's state and count, each site's current form; nothing that
 *     takes the dynamic linker's lock (internal.h: dlopen holds it while an
 *     object's constructor registers, i.e. waits for the patch lock);
 *  2. without it, names: the objects that map those addresses
 *     (dl_iterate_phdr, dladdr) and their symbol and line tables (files);
 *  3. the caller's function, on the snapshot only: it may change keys or
 *     unload the very objects being listed.
 * An object unloaded between 1 and 2 leaves its addresses unnamed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "sy_dwarf.h"
#include "sy_elf.h"
#include "sy_names.h"

/* ---- an object file's symbols and lines, for the duration of one call --- */

/*
 * One object at a time: calls visit sites and keys grouped by object, so a
 * cache of one is enough. Symbols and lines are read on first use.
 */
struct obj_cache {
	char *path;
	uintptr_t bias;
	uintptr_t anchor;	/* an address in the object: finds its file */
	struct sy_syms syms;
	struct sy_lines lines;
	int syms_err, lines_err;	/* 1: not read yet */
};

static bool obj_switch(struct obj_cache *c, const char *path, uintptr_t bias,
		       uintptr_t anchor)
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
static int load_mapped(struct obj_cache *c, bool lines)
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

static const struct sy_syms *syms_for(struct obj_cache *c, const char *path,
				      uintptr_t bias, uintptr_t anchor)
{
	if (!obj_switch(c, path, bias, anchor))
		return NULL;
	if (c->syms_err == 1)
		c->syms_err = load_mapped(c, false);
	return c->syms_err ? NULL : &c->syms;
}

static const struct sy_lines *lines_for(struct obj_cache *c, const char *path,
					uintptr_t bias, uintptr_t anchor)
{
	if (!obj_switch(c, path, bias, anchor))
		return NULL;
	if (c->lines_err == 1)
		c->lines_err = load_mapped(c, true);
	return c->lines_err ? NULL : &c->lines;
}

static void obj_cache_free(struct obj_cache *c)
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

/* ---- keys ---------------------------------------------------------------- */

static int first_bias_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uintptr_t *)arg = info->dlpi_addr;
	return 1;
}

/* The load bias of the main program (0 when it is not PIE). */
static uintptr_t exe_bias(void)
{
	uintptr_t b = 0;

	dl_iterate_phdr(first_bias_cb, &b);
	return b;
}

struct key_row {
	const struct static_key *key;
	size_t sites;
	int enabled, count;	/* read under the patch lock */
	char *name, *object, *desc;
	char *local, *src;	/* struct sy_key_aka */
	size_t plain;		/* local + plain: without "src:" */
};

struct key_snap {
	struct key_row *v;
	size_t n, cap;
	int err;
};

static void add_key_site(const struct sy_jump_entry *e, void *arg)
{
	struct key_snap *s = arg;
	const struct static_key *key = sy_entry_key(e);

	/* tables are indexed by key: a key's sites arrive together per table */
	for (size_t i = s->n; i-- > 0 && i + 8 >= s->n;)
		if (s->v[i].key == key) {
			s->v[i].sites++;
			return;
		}
	if (!sy_grow(&s->v, &s->cap, s->n, sizeof(*s->v))) {
		s->err = -ENOMEM;
		return;
	}
	s->v[s->n++] = (struct key_row){ .key = key, .sites = 1 };
}

static int cmp_key_row(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct key_row *)a)->key;
	uintptr_t y = (uintptr_t)((const struct key_row *)b)->key;

	return x < y ? -1 : x > y;
}

/* by the name without the source file that told file-local keys of one
 * object apart ("k" for "a.c:k"): a plugin's k is a second k beside an
 * executable's a.c:k and b.c:k */
static const char *plain_name(const struct key_row *r)
{
	return r->plain < strlen(r->name) ? r->name + r->plain : r->name;
}

static int cmp_name(const void *a, const void *b)
{
	const struct key_row *x = *(struct key_row *const *)a;
	const struct key_row *y = *(struct key_row *const *)b;

	return strcmp(plain_name(x), plain_name(y));
}

/* The readable name of a symbol, malloc'ed: demangled, and "a.c:k" when
 * another object of its file has its name (elf.c qualify_dups()). */
static char *readable_sym(const struct sy_sym *y)
{
	char *d = sy_demangle(y->name), *q;

	if (!y->file)
		return d ? d : strdup(y->name);
	if (asprintf(&q, "%s:%s", y->file, d ? d : y->name) < 0)
		q = NULL;
	free(d);
	return q;
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

/* "name", "name[3]", "name+0x20" or "key@0x..."; with row, the source
 * file of a file-local key in row->src (malloc'ed), and in row->plain
 * where the name starts without it */
static char *key_name(struct obj_cache *c, const struct static_key *key,
		      const char *path, uintptr_t bias,
		      const struct sy_namerecs *recs, struct key_row *row)
{
	const struct sy_syms *syms = syms_for(c, path, bias, (uintptr_t)key);
	const struct sy_sym *y = find_name(syms, recs, (uintptr_t)key, false);
	char buf[512], *name;

	if (y && row && y->src) {
		row->src = strdup(y->src);
		row->plain = y->file ? strlen(y->file) + 1 : 0;
	}
	if (!y) {
		snprintf(buf, sizeof(buf), "key@%p", (const void *)key);
		return strdup(buf);
	}
	size_t off = (uintptr_t)key - y->addr;

	name = readable_sym(y);
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
	struct obj_cache c = { 0 };
	uintptr_t bias = 0;
	char *path = NULL, *name = NULL;

	if (!sy_object_of(addr, &path, &bias)) {
		const struct sy_syms *syms = syms_for(&c, path, bias, addr);
		const struct sy_sym *y = find_name(syms, recs, addr, func);

		name = y ? readable_sym(y) : NULL;
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
	obj_cache_free(&c);
	return name;
}

/* ---- names for messages (report.c) --------------------------------------- */

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* 'name' (object) or key@0x... */
void sy_name_key(const struct static_key *key, char *buf, size_t size)
{
	struct obj_cache c = { 0 };
	uintptr_t bias = 0;
	char *path = NULL, *name;

	struct sy_namerecs *recs = sy_namerecs_load();

	sy_object_of((uintptr_t)key, &path, &bias);
	name = path ? key_name(&c, key, path, bias, recs, NULL) : NULL;
	sy_namerecs_free(recs);
	/* a static call's key: __SCK__name, ns::__SCK__name in C++ */
	char *sck = name ? strstr(name, "__SCK__") : NULL;

	if (sck && sck[7])
		memmove(sck, sck + 7, strlen(sck + 7) + 1);
	if (!name)
		snprintf(buf, size, "key@%p", (const void *)key);
	else if (!strncmp(name, "key@", 4) || bias == exe_bias())
		snprintf(buf, size, "'%s'", name);
	else
		snprintf(buf, size, "'%s' (%s)", name, base_name(path));
	free(name);
	free(path);
	obj_cache_free(&c);
}

static char *obj_path(const struct sy_obj *o);

/* function+0xoff (file:line), in object if not the program; or 0x... */
void sy_name_site(uintptr_t addr, char *buf, size_t size)
{
	struct obj_cache c = { 0 };
	struct sy_obj o;
	char *path, *fn = NULL, where[512] = "";

	sy_obj_lookup(addr, &o);
	path = o.found ? obj_path(&o) : NULL;
	if (!path) {
		snprintf(buf, size, "%p", (void *)addr);
		return;
	}

	const struct sy_syms *syms = syms_for(&c, path, o.bias, addr);
	const struct sy_sym *f = syms ? sy_syms_find(syms, addr, true) : NULL;
	const struct sy_lines *lines = lines_for(&c, path, o.bias, addr);
	const struct sy_line_row *ln = lines ? sy_lines_find(lines, addr) : NULL;

	if (!f && syms)	/* not in a function: whatever symbol covers it */
		f = sy_syms_find(syms, addr, false);
	if (ln && ln->line && ln->file < lines->nfiles)
		snprintf(where, sizeof(where), " (%s:%u)",
			 lines->files[ln->file], ln->line);
	if (f)
		fn = readable_sym(f);
	if (fn)
		snprintf(buf, size, "%s+0x%zx%s", fn, (size_t)(addr - f->addr),
			 where);
	else
		snprintf(buf, size, "%p%s", (void *)addr, where);
	if (o.name[0]) {
		size_t l = strlen(buf);

		snprintf(buf + l, size - l, " in %s", base_name(path));
	}
	free(fn);
	free(path);
	obj_cache_free(&c);
}

static void free_keys(struct key_snap *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].name);
		free(s->v[i].object);
		free(s->v[i].desc);
		free(s->v[i].local);
		free(s->v[i].src);
	}
	free(s->v);
}

/* Step 1, patch lock held. */
static int snapshot_keys(struct key_snap *s)
{
	size_t w = 0;

	sy_registry_visit(add_key_site, s);
	if (s->err)
		return s->err;
	/* merge the runs of the same key from different tables */
	if (s->n)	/* qsort(NULL, 0): undefined */
		qsort(s->v, s->n, sizeof(*s->v), cmp_key_row);
	for (size_t i = 0; i < s->n; i++) {
		if (w && s->v[w - 1].key == s->v[i].key)
			s->v[w - 1].sites += s->v[i].sites;
		else
			s->v[w++] = s->v[i];
	}
	s->n = w;
	/* The keys' objects are mapped while their sites are registered
	 * (unloading marks the sites of a departing key dead first). */
	for (size_t i = 0; i < s->n; i++) {
		int v = __atomic_load_n(&s->v[i].key->enabled, __ATOMIC_RELAXED);

		s->v[i].count = v >= 0 ? v : 1;	/* as static_key_count() */
		s->v[i].enabled = s->v[i].count > 0;
	}
	return 0;
}

/*
 * The descriptions (SWITCHYARD_KEY_DESCRIPTION): each loaded object's
 * section sy_key_desc, found through its file's section headers and read
 * in memory, where the dynamic linker relocated its pointers: each record
 * names the key as the object's code reaches it (the program's copy of an
 * exported key included). Read inside dl_iterate_phdr()'s callback: the
 * linker's lock keeps the object mapped meanwhile. Every pointer is
 * checked against the object's loaded segments, every text copied with a
 * bound: a record is data, not trusted.
 */
struct desc {
	const void *key;
	char *text;
};

struct desc_set {
	struct desc *v;
	size_t n, cap;
};

/* bytes readable at a in info's object (0: not in a loaded segment) */
static size_t readable_at(const struct dl_phdr_info *info, uintptr_t a)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && a >= lo &&
		    a - lo < ph->p_memsz)
			return ph->p_memsz - (a - lo);
	}
	return 0;
}

struct sy_rec_obj {
	const struct dl_phdr_info *info;
};

char *sy_rec_strdup(const struct sy_rec_obj *o, const char *p, size_t max)
{
	size_t room = readable_at(o->info, (uintptr_t)p), len;

	if (!room)
		return NULL;
	len = strnlen(p, room < max ? room : max);
	return len < room ? strndup(p, len) : NULL;	/* else unterminated */
}

struct walk {
	const char *section;
	size_t rsize;
	sy_rec_fn fn;
	void *arg;
	bool main_seen;
};

/* The section's place in info's object, from the section headers of the
 * file it was mapped from (sy_obj_open()): the file now at its path may be
 * another build, whose section is elsewhere. */
static int section_of(const struct dl_phdr_info *info, const char *name,
		      uint64_t *addr, uint64_t *sz)
{
	struct sy_obj *o = calloc(1, sizeof(*o));
	char fdpath[40];
	int fd, r;

	if (!o)
		return -ENOMEM;
	o->found = true;
	snprintf(o->name, sizeof(o->name), "%s",
		 info->dlpi_name ? info->dlpi_name : "");
	o->bias = info->dlpi_addr;
	o->phdr = info->dlpi_phdr;
	o->phnum = info->dlpi_phnum;
	for (int i = 0; i < info->dlpi_phnum && !o->nseg; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			o->lo[0] = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			o->hi[0] = o->lo[0] + info->dlpi_phdr[i].p_memsz;
			o->nseg = 1;
		}
	fd = sy_obj_open(o);
	free(o);
	if (fd < 0)
		return fd;
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	r = sy_elf_section_load(fdpath, name, addr, sz);
	close(fd);
	return r;
}

static int walk_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct walk *w = arg;
	struct sy_rec_obj o = { info };
	uint64_t addr, sz;

	(void)size;
	if (!info->dlpi_name || !info->dlpi_name[0]) {
		if (w->main_seen)
			return 0;
		w->main_seen = true;
	}
	if (section_of(info, w->section, &addr, &sz) || !sz ||
	    sz % w->rsize || readable_at(info, info->dlpi_addr + addr) < sz)
		return 0;
	for (uint64_t off = 0; off < sz; off += w->rsize)
		w->fn(&o, (const void *)(info->dlpi_addr + addr + off), w->arg);
	return 0;
}

void sy_records_walk(const char *section, size_t rsize, sy_rec_fn fn,
		     void *arg)
{
	struct walk w = { section, rsize, fn, arg, false };

	dl_iterate_phdr(walk_cb, &w);
}

#define DESC_MAX 512

static void desc_rec(const struct sy_rec_obj *o, const void *rec, void *arg)
{
	const struct sy__key_desc *r = rec;
	struct desc_set *d = arg;
	char *text;

	if (!r->key || !(text = sy_rec_strdup(o, r->text, DESC_MAX)))
		return;
	if (!sy_grow(&d->v, &d->cap, d->n, sizeof(*d->v))) {
		free(text);
		return;
	}
	d->v[d->n].key = r->key;
	d->v[d->n++].text = text;
}

static int cmp_desc(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct desc *)a)->key;
	uintptr_t y = (uintptr_t)((const struct desc *)b)->key;

	return x < y ? -1 : x > y;
}

/* Give each key its description, if it has one (one of them, if two). */
static void describe_keys(struct key_snap *s)
{
	struct desc_set d = { NULL, 0, 0 };

	sy_records_walk(SY_SEC_DESC, SY_REC_DESC_SIZE, desc_rec, &d);
	if (d.n)	/* qsort(NULL, 0): undefined (UBSan) */
		qsort(d.v, d.n, sizeof(*d.v), cmp_desc);
	for (size_t i = 0; i < s->n; i++) {
		struct desc q = { s->v[i].key, NULL };
		struct desc *hit = d.n ? bsearch(&q, d.v, d.n, sizeof(*d.v),
						 cmp_desc) : NULL;

		if (hit) {
			s->v[i].desc = hit->text;
			hit->text = NULL;	/* taken */
		}
	}
	for (size_t i = 0; i < d.n; i++)
		free(d.v[i].text);
	free(d.v);
}

/* Step 2, without the lock. */
static int name_keys(struct key_snap *s)
{
	struct obj_cache c = { 0 };
	struct sy_namerecs *recs = sy_namerecs_load();

	for (size_t i = 0; i < s->n; i++) {
		uintptr_t bias;
		Dl_info dl;

		sy_object_of((uintptr_t)s->v[i].key, &s->v[i].object, &bias);
		s->v[i].name = key_name(&c, s->v[i].key, s->v[i].object, bias,
					recs, &s->v[i]);
		s->v[i].local = s->v[i].name ? strdup(s->v[i].name) : NULL;
		if (!s->v[i].name || !s->v[i].local) {
			obj_cache_free(&c);
			sy_namerecs_free(recs);
			return -ENOMEM;
		}
		/*
		 * An exported key used by the executable lives in the
		 * executable (a copy relocation made at load time), but it
		 * is defined by the library that exports it: name that one.
		 */
		if (bias == exe_bias() && dladdr(s->v[i].key, &dl) && dl.dli_sname &&
		    dl.dli_saddr == (void *)s->v[i].key) {
			char *lib = sy_definer_of(dl.dli_sname);

			if (lib) {
				free(s->v[i].object);
				s->v[i].object = lib;
			}
		}
	}
	obj_cache_free(&c);
	sy_namerecs_free(recs);

	/* two keys with one name in two objects: qualify both by their
	 * object's file name (in one object, elf.c told them apart by their
	 * source files if it could; the object's name would not). One name
	 * means one without those source files: prog's a.c:k and a plugin's
	 * k are prog:a.c:k and libplug.so:k (the plugin's was a bare k, which
	 * set then took for the only k) */
	struct key_row **by = malloc((s->n ? s->n : 1) * sizeof(*by));

	if (!by)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++)
		by[i] = &s->v[i];
	qsort(by, s->n, sizeof(*by), cmp_name);
	bool *dup = calloc(s->n ? s->n : 1, sizeof(*dup));

	if (!dup) {
		free(by);
		return -ENOMEM;
	}
	for (size_t i = 0, j; i < s->n; i = j) {
		bool other = false;

		for (j = i + 1; j < s->n &&
		     !strcmp(plain_name(by[j]), plain_name(by[i])); j++)
			if (!by[i]->object || !by[j]->object ||
			    strcmp(by[j]->object, by[i]->object))
				other = true;
		for (size_t m = i; other && m < j; m++)
			dup[m] = true;
	}
	for (size_t i = 0; i < s->n; i++) {
		if (!dup[i] || !by[i]->object)
			continue;
		const char *base = strrchr(by[i]->object, '/');
		size_t len = strlen(by[i]->name) + strlen(by[i]->object) + 2;
		char *q = malloc(len);

		if (q) {
			snprintf(q, len, "%s:%s", base ? base + 1 : by[i]->object,
				 by[i]->name);
			free(by[i]->name);
			by[i]->name = q;
		}
	}
	free(dup);
	free(by);
	return 0;
}

int sy_for_each_key_aka(sy_key_aka_fn fn, void *arg)
{
	struct key_snap s = { NULL, 0, 0, 0 };
	int r = sy_enter();

	if (r)
		return r;
	r = SY_LOCKED(snapshot_keys(&s));
	if (!r)
		r = name_keys(&s);
	if (!r)
		describe_keys(&s);
	sy_leave();	/* fn may call back into switchyard */
	for (size_t i = 0; !r && i < s.n; i++) {
		struct switchyard_key_info info = {
			s.v[i].key, s.v[i].name,
			s.v[i].object ? s.v[i].object : "?",
			s.v[i].enabled, s.v[i].count, s.v[i].sites,
			s.v[i].desc,
		};
		struct sy_key_aka aka = {
			s.v[i].local,
			s.v[i].object ? base_name(s.v[i].object) : NULL,
			s.v[i].src,
			/* "key@0x...+" has no src: plain is within local */
			s.v[i].src ? s.v[i].local + s.v[i].plain : s.v[i].local,
		};

		r = fn(&info, &aka, arg);
	}
	free_keys(&s);
	return r;
}

struct key_fn_arg {
	switchyard_key_fn fn;
	void *arg;
};

static int key_fn_shim(const struct switchyard_key_info *k,
		       const struct sy_key_aka *aka, void *arg)
{
	const struct key_fn_arg *a = arg;

	(void)aka;
	return a->fn(k, a->arg);
}

int switchyard_for_each_key(switchyard_key_fn fn, void *arg)
{
	struct key_fn_arg a = { fn, arg };

	return sy_for_each_key_aka(key_fn_shim, &a);
}

/* ---- sites --------------------------------------------------------------- */

struct site_row {
	uintptr_t code, target;
	unsigned len;
	bool branch, jumps;	/* read under the patch lock */
};

struct site_snap {
	const struct static_key *key;
	struct site_row *v;
	size_t n, cap;
	struct switchyard_site_info *info;
	char **strs;
	int err;
};

/* Step 1, patch lock held: registered sites are mapped. */
static void add_site(const struct sy_jump_entry *e, void *arg)
{
	struct site_snap *s = arg;
	uintptr_t code = sy_entry_code(e);
	bool hidden_jump;

	if (sy_entry_key(e) != s->key || s->err)
		return;
	if (!sy_grow(&s->v, &s->cap, s->n, sizeof(*s->v))) {
		s->err = -ENOMEM;
		return;
	}
	/* under a breakpoint: the opcode its key's state asks for (the
	 * registry's invariant, src/arch/x86_64/sy_arch.h) */
	hidden_jump = (__atomic_load_n(&s->key->enabled, __ATOMIC_RELAXED) != 0) !=
		      sy_entry_branch(e);
	s->v[s->n++] = (struct site_row){
		code, sy_entry_target(e), sy_entry_len(e), sy_entry_branch(e),
		sy_arch_site_jumps((const uint8_t *)code, sy_entry_len(e),
				   hidden_jump),
	};
}

static int snapshot_sites(struct site_snap *s)
{
	sy_registry_visit(add_site, s);
	return s->err;
}

/* The file of object o, malloc'ed ("/proc/self/exe" resolved for the main
 * program), or NULL. */
static char *obj_path(const struct sy_obj *o)
{
	return o->name[0] ? strdup(o->name) : sy_exe_path();
}

/* Step 2, without the lock: fill s->info and the strings it points to. */
static int describe_sites(struct site_snap *s, struct obj_cache *cache)
{
	struct obj_cache local = { 0 }, *cp = cache ? cache : &local;
	struct sy_obj o = { .found = false };
	char *path = NULL;

	s->info = calloc(s->n ? s->n : 1, sizeof(*s->info));
	s->strs = calloc(3 * (s->n ? s->n : 1), sizeof(*s->strs));
	if (!s->info || !s->strs)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		const struct site_row *row = &s->v[i];

		/* sites come grouped by object: one lookup per object */
		if (!o.found || !sy_obj_contains(&o, row->code)) {
			free(path);
			sy_obj_lookup(row->code, &o);
			path = o.found ? obj_path(&o) : NULL;
		}

		const struct sy_syms *syms = syms_for(cp, path, o.bias, row->code);
		const struct sy_sym *f = syms ? sy_syms_find(syms, row->code, true) : NULL;
		const struct sy_lines *lines = lines_for(cp, path, o.bias, row->code);
		const struct sy_line_row *ln = lines ? sy_lines_find(lines, row->code) : NULL;

		s->strs[3 * i] = path ? strdup(path) : NULL;
		s->strs[3 * i + 1] = f ? readable_sym(f) : NULL;
		s->strs[3 * i + 2] = ln && ln->line && ln->file < lines->nfiles ?
				     strdup(lines->files[ln->file]) : NULL;
		s->info[i] = (struct switchyard_site_info){
			(const void *)row->code,
			s->strs[3 * i] ? s->strs[3 * i] : "?",
			s->strs[3 * i + 1],
			f ? (size_t)(row->code - f->addr) : 0,
			(int)row->len, row->jumps, row->branch,
			s->strs[3 * i + 2], s->strs[3 * i + 2] ? ln->line : 0,
		};
	}
	free(path);
	obj_cache_free(&local);
	return 0;
}

/* The object cache kept across calls (control.c lists every key's sites:
 * one read of each object's symbols and lines, not one per key). */
struct sy_site_cache {
	struct obj_cache c;
};

struct sy_site_cache *sy_site_cache_new(void)
{
	return calloc(1, sizeof(struct sy_site_cache));
}

void sy_site_cache_free(struct sy_site_cache *sc)
{
	if (sc) {
		obj_cache_free(&sc->c);
		free(sc);
	}
}

int switchyard_for_each_site(const struct static_key *key,
			     switchyard_site_fn fn, void *arg)
{
	return sy_for_each_site_cached(key, fn, arg, NULL);
}

int sy_for_each_site_cached(const struct static_key *key,
			    switchyard_site_fn fn, void *arg,
			    struct sy_site_cache *cache)
{
	struct site_snap s = { key, NULL, 0, 0, NULL, NULL, 0 };
	int r = sy_enter();

	if (r)
		return r;
	r = SY_LOCKED(snapshot_sites(&s));
	if (!r)
		r = describe_sites(&s, cache ? &cache->c : NULL);
	sy_leave();
	for (size_t i = 0; !r && i < s.n; i++)
		r = fn(&s.info[i], arg);
	for (size_t i = 0; s.strs && i < 3 * s.n; i++)
		free(s.strs[i]);
	free(s.strs);
	free(s.info);
	free(s.v);
	return r;
}
