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
#include "naming.h"

/* ---- keys ---------------------------------------------------------------- */

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
	struct sy_obj_cache c = { 0 };
	struct sy_namerecs *recs = sy_namerecs_load();

	for (size_t i = 0; i < s->n; i++) {
		uintptr_t bias;
		Dl_info dl;

		sy_object_of((uintptr_t)s->v[i].key, &s->v[i].object, &bias);
		s->v[i].name = sy_key_name(&c, s->v[i].key, s->v[i].object,
					   bias, recs, &s->v[i].src,
					   &s->v[i].plain);
		s->v[i].local = s->v[i].name ? strdup(s->v[i].name) : NULL;
		if (!s->v[i].name || !s->v[i].local) {
			sy_obj_cache_free(&c);
			sy_namerecs_free(recs);
			return -ENOMEM;
		}
		/*
		 * An exported key used by the executable lives in the
		 * executable (a copy relocation made at load time), but it
		 * is defined by the library that exports it: name that one.
		 */
		if (bias == sy_exe_bias() && dladdr(s->v[i].key, &dl) && dl.dli_sname &&
		    dl.dli_saddr == (void *)s->v[i].key) {
			char *lib = sy_definer_of(dl.dli_sname);

			if (lib) {
				free(s->v[i].object);
				s->v[i].object = lib;
			}
		}
	}
	sy_obj_cache_free(&c);
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
			s.v[i].object ? sy_base_name(s.v[i].object) : NULL,
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

/* Step 2, without the lock: fill s->info and the strings it points to. */
static int describe_sites(struct site_snap *s, struct sy_obj_cache *cache)
{
	struct sy_obj_cache local = { 0 }, *cp = cache ? cache : &local;
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
			path = o.found ? sy_obj_path(&o) : NULL;
		}

		const struct sy_syms *syms = sy_syms_for(cp, path, o.bias, row->code);
		const struct sy_sym *f = syms ? sy_syms_find(syms, row->code, true) : NULL;
		const struct sy_lines *lines = sy_lines_for(cp, path, o.bias, row->code);
		const struct sy_line_row *ln = lines ? sy_lines_find(lines, row->code) : NULL;

		s->strs[3 * i] = path ? strdup(path) : NULL;
		s->strs[3 * i + 1] = f ? sy_readable_sym(f) : NULL;
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
	sy_obj_cache_free(&local);
	return 0;
}

/* The object cache kept across calls (control_cmd.c lists every key's sites:
 * one read of each object's symbols and lines, not one per key). */
struct sy_site_cache {
	struct sy_obj_cache c;
};

struct sy_site_cache *sy_site_cache_new(void)
{
	return calloc(1, sizeof(struct sy_site_cache));
}

void sy_site_cache_free(struct sy_site_cache *sc)
{
	if (sc) {
		sy_obj_cache_free(&sc->c);
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
