/* SPDX-License-Identifier: MIT */
/*
 * records.c - the records of an ELF file on disk (records.h): its static
 * keys and their sites, static call sites, alternatives, run-time
 * constants, key descriptions, and the names each is listed under.
 *
 * The records are the ones the public headers' macros emit, one section
 * and one layout each (src/sy_records.h, shared with the library, which
 * reads the same records in memory): the jump entries of section
 * sy_jump_entries, code and target self-relative, the key absolute, the
 * branch bit riding in the key's low bits; the others likewise. Absolute
 * fields are read as the dynamic linker would leave them, their
 * relocations applied (elf_image.c).
 *
 * Everything read is checked against the file first: a malformed file
 * gives -ENOEXEC and a reason.
 */
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sy_elf.h"
#include "../src/sy_names.h"
#include "../src/sy_records.h"
#include "elf_image.h"
#include "insn.h"
#include "records.h"

/*
 * A record is copied from the file into its struct and its fields read
 * there, at the offsets offsetof() gives: the host's layout of the structs
 * is the x86-64 file's only on a 64-bit host (pointers and unsigned long
 * of 8 bytes; sy_records.h asserts each record's size and offsets there).
 * A 32-bit build of the tool would misread every record with a pointer.
 */
_Static_assert(sizeof(void *) == 8 && sizeof(unsigned long) == 8,
	       "records.c reads 64-bit files through the host's layout of "
	       "the records: it needs a 64-bit host");

static int bad(struct sy_records *out, const char *why)
{
	out->why = why;
	return -ENOEXEC;
}

/* The address a self-relative field names: the field's own address (at)
 * plus its value. */
static uint64_t rel(uint64_t at, int32_t v)
{
	return at + (uint64_t)(int64_t)v;
}

/*
 * A site's length from its bytes, by the file's machine. x86-64: the jump
 * to its target (eb rel8, e9 rel32) as the assembler emitted it, or the
 * TEST of the same rel (a8, a9) that `switchyard prepatch` writes.
 * AArch64 (include/switchyard/arch/aarch64.h): one aligned word, the B to
 * its target as assembled or the NOP prepatch writes. 0 for anything else.
 */
static unsigned site_len(unsigned machine, const struct sy_rec_site *s)
{
	int32_t r32;

	if (machine == EM_AARCH64) {
		uint32_t w, b = a64_branch(A64_B, s->addr, s->target);

		if (s->nbytes < 4 || (s->addr & 3) || !b)
			return 0;
		w = a64_word(s->bytes);
		return w == b || w == A64_NOP ? 4 : 0;
	}
	if (s->nbytes >= 2 && (s->bytes[0] == 0xeb || s->bytes[0] == 0xa8) &&
	    s->target - (s->addr + 2) == (uint64_t)(int64_t)(int8_t)s->bytes[1])
		return 2;
	if (s->nbytes < 5 || (s->bytes[0] != 0xe9 && s->bytes[0] != 0xa9))
		return 0;
	memcpy(&r32, s->bytes + 1, sizeof(r32));
	return s->target - (s->addr + 5) == (uint64_t)(int64_t)r32 ? 5 : 0;
}

/* Names: one growing pool, offsets until the end (then pointers). */
struct pool {
	char *p;
	size_t len, cap;
	bool failed;
	struct sy_syms recs;	/* the name records (sy_names), by address */
};

static uintptr_t pool_add(struct pool *pl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static uintptr_t pool_add(struct pool *pl, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || pl->failed) {
		pl->failed = true;
		return 0;
	}
	if (pl->len + (size_t)n + 1 > pl->cap) {
		size_t cap = (pl->len + (size_t)n + 1) * 2;
		char *p = realloc(pl->p, cap);

		if (!p) {
			pl->failed = true;
			return 0;
		}
		pl->p = p;
		pl->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(pl->p + pl->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	pl->len += (size_t)n + 1;
	return pl->len - (size_t)n - 1;
}

/*
 * A static call's name from its key's symbol: readable (demangled here:
 * list_others() prints it as it is) and without prefix, wherever the
 * prefix is: "__SCK__encoder", or "net::io::__SCK__encoder" from
 * _ZN3net2io14__SCK__encoderE, as the library names it in a live process
 * (introspect_call.c call_name()).
 */
static uintptr_t prefixed_name(struct pool *pl, const char *file,
			       const char *sym, const char *prefix)
{
	char *d = sy_demangle(sym), *p;
	const char *n = d ? d : sym;
	size_t pl_len = strlen(prefix);
	uintptr_t r;

	p = strstr(n, prefix);
	if (!p || !p[pl_len])
		p = NULL, pl_len = 0;
	r = pool_add(pl, "%s%s%.*s%s", file ? file : "", file ? ":" : "",
		     p ? (int)(p - n) : 0, n, p ? p + pl_len : n);
	free(d);
	return r;
}

/*
 * The name of the object at addr: its symbol, else its name record (a
 * stripped file), without prefix (when it starts with it); a key inside an
 * array of keys as "keys[3]", else "name+0x10" past its start, as the
 * library names it in a live process (introspect.c key_name()); or
 * fallback@0x...
 */
static uintptr_t name_of(struct pool *pl, const struct sy_syms *syms,
			 uint64_t addr, bool func, const char *prefix,
			 const char *fallback)
{
	const struct sy_sym *s = sy_syms_find(syms, addr, func);
	uint64_t off;

	if (!s && !func)
		s = sy_syms_find(&pl->recs, addr, false);
	if (s && s->addr == addr && prefix)
		return prefixed_name(pl, s->file, s->name, prefix);
	if (!s)
		return pool_add(pl, "%s@0x%llx", fallback,
				(unsigned long long)addr);
	off = addr - s->addr;
	/* readable before "[3]" is added (C++: ns::keys[3]); "a.c:k" when
	 * another object of the file has its name (elf.c qualify_dups()) */
	char *d = sy_demangle(s->name);
	const char *n = d ? d : s->name, *f = s->file ? s->file : "";
	const char *colon = s->file ? ":" : "";
	uintptr_t r;

	/* an array's every element, [0] too: the name a listing gives
	 * must be the one element's, not the array's */
	if (!strcmp(fallback, "key") && off % SY_REC_KEY_SIZE == 0 &&
	    s->size % SY_REC_KEY_SIZE == 0 && s->size > SY_REC_KEY_SIZE)
		r = pool_add(pl, "%s%s%s[%llu]", f, colon, n,
			     (unsigned long long)(off / SY_REC_KEY_SIZE));
	else if (!off)
		r = pool_add(pl, "%s%s%s", f, colon, n);
	else
		r = pool_add(pl, "%s%s%s+%#llx", f, colon, n,
			     (unsigned long long)off);
	free(d);
	return r;
}

static int cmp_sym_addr(const void *a, const void *b)
{
	uint64_t x = ((const struct sy_sym *)a)->addr;
	uint64_t y = ((const struct sy_sym *)b)->addr;

	return (x > y) - (x < y);
}

/*
 * The name records of SY__NAME_RECORD() (struct sy__name: the object's and
 * the name's addresses, by relocation or as linked, and the object's
 * size), as symbols in pl->recs; each name NUL-terminated within
 * 256 bytes of one section, pointing into the image (pool_add() copies
 * it). Read before any name is given: a stripped file's keys and calls
 * are named by them.
 */
#define REC_NAME_MAX 256

static int read_names(const struct img *m, struct pool *pl,
		      struct sy_records *out)
{
	const Elf64_Shdr *sec;
	struct sy_sym *v;
	long n;

	img_table(m, SY_SEC_NAMES, SY_REC_NAMES_SIZE, &sec, &n);
	if (n < 0)
		return bad(out, "section " SY_SEC_NAMES " is malformed");
	v = calloc(n ? (size_t)n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	pl->recs.v = v;
	for (long i = 0; i < n; i++) {
		uint64_t ea = sec->sh_addr + (uint64_t)i * SY_REC_NAMES_SIZE;
		uint64_t obj = 0, nm = 0;
		struct sy__name rec = { NULL, NULL, 0 };
		const char *ext = NULL, *ext2 = NULL;
		const uint8_t *t = NULL, *b;
		size_t len = 0;
		bool zero;

		if (img_ptr(m, ea + offsetof(struct sy__name, obj), &obj,
			    &ext) < 0 ||
		    img_ptr(m, ea + offsetof(struct sy__name, name), &nm,
			    &ext2) < 0)
			return bad(out, "a relocation of " SY_SEC_NAMES
					" is malformed");
		b = img_at(m, ea + offsetof(struct sy__name, size),
			   sizeof(rec.size), &zero);
		if (b)
			memcpy(&rec.size, b, sizeof(rec.size));
		if (ext || ext2 || !obj || !rec.size || rec.size > (1u << 20))
			continue;
		for (size_t l = REC_NAME_MAX; l && !t; l--) {
			t = img_at(m, nm, l, &zero);
			len = l;
		}
		if (!t || !memchr(t, 0, len))
			continue;	/* not a string of this file */
		v[pl->recs.n++] = (struct sy_sym){ obj, rec.size,
						   (const char *)t, false,
						   NULL, NULL };
	}
	if (pl->recs.n)
		qsort(v, pl->recs.n, sizeof(*v), cmp_sym_addr);
	return 0;
}

static int cmp_call(const void *a, const void *b)
{
	const struct sy_rec_call *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->addr > y->addr) - (x->addr < y->addr);
}

static int cmp_alt(const void *a, const void *b)
{
	const struct sy_rec_alt *x = a, *y = b;

	return (x->addr > y->addr) - (x->addr < y->addr);
}

static int cmp_rc(const void *a, const void *b)
{
	const struct sy_rec_rc *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->addr > y->addr) - (x->addr < y->addr);
}

/*
 * SWITCHYARD_KEY_DESCRIPTION() records (struct sy__key_desc: the key's
 * and the text's addresses, by relocation or as linked): each
 * text, NUL-terminated within 512 bytes of one section, goes to the key
 * at that address. A record of a key with no site, or of another
 * object's key, lists nothing.
 */
#define DESC_MAX 512

static int read_descs(const struct img *m, struct pool *pl,
		      struct sy_records *out)
{
	const Elf64_Shdr *sec;
	long n;

	img_table(m, SY_SEC_DESC, SY_REC_DESC_SIZE, &sec, &n);
	if (n < 0)
		return bad(out, "section " SY_SEC_DESC " is malformed");
	for (long i = 0; i < n; i++) {
		uint64_t ea = sec->sh_addr + (uint64_t)i * SY_REC_DESC_SIZE;
		uint64_t key = 0, text = 0;
		const char *ext = NULL, *ext2 = NULL;
		const uint8_t *t;
		size_t len = 0;
		bool zero;

		if (img_ptr(m, ea + offsetof(struct sy__key_desc, key), &key,
			    &ext) < 0 ||
		    img_ptr(m, ea + offsetof(struct sy__key_desc, text), &text,
			    &ext2) < 0)
			return bad(out, "a relocation of " SY_SEC_DESC " is "
					"malformed");
		if (ext || ext2 || !key)
			continue;
		/* the most bytes up to DESC_MAX inside one section */
		t = NULL;
		for (size_t l = DESC_MAX; l && !t; l--) {
			t = img_at(m, text, l, &zero);
			len = l;
		}
		const uint8_t *nul = t ? memchr(t, 0, len) : NULL;

		if (!nul)
			continue;	/* not a string of this file */
		len = (size_t)(nul - t);
		for (size_t k = 0; k < out->nkeys; k++)
			if (out->keys[k].addr == key)
				out->keys[k].description = (const char *)
					pool_add(pl, "%.*s", (int)len, t);
	}
	return 0;
}

/* Static calls, alternatives, run-time constants; names as pool offsets. */
static int read_others(const struct img *m, const struct sy_syms *syms,
		       struct pool *pl, struct sy_records *out)
{
	const Elf64_Shdr *sec;
	const uint8_t *e;
	long n;

	e = img_table(m, SY_SEC_CALL, SY_REC_CALL_SIZE, &sec, &n);
	if (n < 0)
		return bad(out, SY_SEC_CALL ": not whole records in the file");
	out->calls = calloc(n ? (size_t)n : 1, sizeof(*out->calls));
	if (!out->calls)
		return -ENOMEM;
	for (long i = 0; i < n; i++, e += SY_REC_CALL_SIZE) {
		struct sy_rec_call *c = &out->calls[out->ncalls];
		uint64_t ea = sec->sh_addr + (uint64_t)i * SY_REC_CALL_SIZE;
		uint64_t meta = 0, key = 0, fn = 0;
		struct sy__sc_meta sm = { NULL, 0 };
		struct sy_sc_entry rec;
		const char *ext = NULL;
		const uint8_t *b;
		bool zero;

		memcpy(&rec, e, sizeof(rec));
		c->addr = rel(ea + offsetof(struct sy_sc_entry, code),
			      rec.code);
		/*
		 * AArch64 (arch/aarch64_static_call.h): the site is one BL,
		 * assembled to the site's veneer, whose distance from the
		 * flags field the file's flags field holds (a multiple of 4;
		 * the library reuses bits 0-1 at run time).
		 */
		if (m->machine == EM_AARCH64) {
			c->insn = img_at(m, c->addr, 4, &zero);
			if (rec.flags)
				c->veneer = rel(ea + offsetof(struct sy_sc_entry,
							      flags),
						(int32_t)(rec.flags & ~3u));
		}
		if (img_ptr(m, ea + offsetof(struct sy_sc_entry, meta), &meta,
			    &ext) < 0 ||
		    (!ext && img_ptr(m, meta + offsetof(struct sy__sc_meta,
							 key), &key, &ext) < 0))
			return bad(out, "a static call record's relocation is "
					"malformed");
		if (!ext && (b = img_at(m, meta + offsetof(struct sy__sc_meta,
							    kind),
					sizeof(sm.kind), &zero)))
			memcpy(&sm.kind, b, sizeof(sm.kind));
		c->callee_save = sm.kind >= SY_SC_KIND_CALLEE_SAVE;
		if (ext) {
			c->name = (const char *)prefixed_name(pl, NULL, ext,
							      "__SCK__");
			c->target = NULL;
		} else {
			int k = img_ptr(m, key, &fn, &ext);

			c->name = (const char *)name_of(pl, syms, key, false,
							"__SCK__", "call");
			if (k < 0)
				return bad(out, "a static call key's "
						"relocation is malformed");
			c->target = !k ? NULL : ext ?
				(const char *)pool_add(pl, "%s", ext) :
				!fn ? (const char *)pool_add(pl, "(none)") :
				(const char *)name_of(pl, syms, fn, true,
						      NULL, "func");
		}
		out->ncalls++;
	}

	e = img_table(m, SY_SEC_ALT, SY_REC_ALT_SIZE, &sec, &n);
	if (n < 0)
		return bad(out, SY_SEC_ALT ": not whole records in the file");
	out->alts = calloc(n ? (size_t)n : 1, sizeof(*out->alts));
	if (!out->alts)
		return -ENOMEM;
	for (long i = 0; i < n; i++, e += SY_REC_ALT_SIZE) {
		struct sy_rec_alt *a = &out->alts[out->nalts++];
		uint64_t ea = sec->sh_addr + (uint64_t)i * SY_REC_ALT_SIZE;
		struct sy_alt_entry rec;
		bool zero;

		memcpy(&rec, e, sizeof(rec));
		a->addr = rel(ea + offsetof(struct sy_alt_entry, site),
			      rec.site);
		a->repl = rel(ea + offsetof(struct sy_alt_entry, repl),
			      rec.repl);
		/* the feature's number, bit 15 for "absent" (bit 14 is the
		 * library's, at run time) */
		a->feature = rec.feature & 0x3fffu;
		a->absent = rec.feature >> 15 & 1;
		a->len = rec.len;
		a->repl_len = rec.repl_len;
		a->bytes = img_at(m, a->addr, a->len, &zero);
		a->repl_bytes = img_at(m, a->repl, a->repl_len, &zero);
	}

	e = img_table(m, SY_SEC_RC, SY_REC_RC_SIZE, &sec, &n);
	if (n < 0)
		return bad(out, SY_SEC_RC ": not whole records in the file");
	out->rcs = calloc(n ? (size_t)n : 1, sizeof(*out->rcs));
	if (!out->rcs)
		return -ENOMEM;
	for (long i = 0; i < n; i++, e += SY_REC_RC_SIZE) {
		struct sy_rec_rc *c = &out->rcs[out->nrcs++];
		uint64_t ea = sec->sh_addr + (uint64_t)i * SY_REC_RC_SIZE;
		uint64_t sym = 0;
		struct sy_rc_entry rec;
		const char *ext = NULL;
		bool zero;
		int k = img_ptr(m, ea + offsetof(struct sy_rc_entry, sym), &sym,
				&ext);

		if (k < 0)
			return bad(out, "a run-time constant's relocation is "
					"malformed");
		memcpy(&rec, e, sizeof(rec));
		c->addr = rel(ea + offsetof(struct sy_rc_entry, code),
			      rec.code);
		c->size = rec.size;
		c->end = rec.end;
		c->bytes = img_at(m, c->addr, c->end, &zero);
		c->name = (const char *)(ext ? pool_add(pl, "%s", ext) :
					 name_of(pl, syms, sym, false, NULL,
						 "var"));
	}
	return 0;
}

struct raw {
	uint64_t key;		/* flags cleared; 0 with ext: another object's */
	const char *ext;
	struct sy_rec_site site;
};

static int cmp_raw(const void *a, const void *b)
{
	const struct raw *x = a, *y = b;
	int c;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	c = strcmp(x->ext ? x->ext : "", y->ext ? y->ext : "");
	if (c)
		return c;
	return x->site.addr < y->site.addr ? -1 : x->site.addr > y->site.addr;
}

void sy_records_free(struct sy_records *r)
{
	free(r->keys);
	free(r->sites);
	free(r->calls);
	free(r->alts);
	free(r->rcs);
	free(r->names);
	r->keys = NULL;
	r->sites = NULL;
	r->calls = NULL;
	r->alts = NULL;
	r->rcs = NULL;
	r->names = NULL;
	r->nkeys = r->nsites = r->ncalls = r->nalts = r->nrcs = 0;
}

int sy_records_read(const uint8_t *p, size_t size, struct sy_records *out)
{
	const Elf64_Shdr *sec;
	struct sy_syms syms = { 0 };
	struct img m;
	struct pool pl = { NULL, 0, 0, false, { NULL, 0, NULL } };
	struct raw *raw = NULL;
	const uint8_t *ents;
	long n;
	int r = 0;

	memset(out, 0, sizeof(*out));
	r = img_open(&m, p, size, &out->why);
	if (r)
		return r;
	out->machine = m.machine;

	/* names: the object and function symbols (.symtab, else .dynsym) */
	r = sy_syms_parse(p, size, 0, &syms);
	if (r == -ENOMEM)
		return r;
	r = 0;
	pool_add(&pl, "%s", "");	/* offset 0: no name */
	r = read_names(&m, &pl, out);
	if (r)
		goto out;

	ents = img_table(&m, SY_SEC_JUMP, SY_REC_JUMP_SIZE, &sec, &n);
	if (n < 0) {
		r = bad(out, SY_SEC_JUMP ": not whole records in the file");
		goto out;
	}
	raw = calloc(n ? (size_t)n : 1, sizeof(*raw));
	out->keys = calloc(n ? (size_t)n : 1, sizeof(*out->keys));
	out->sites = calloc(n ? (size_t)n : 1, sizeof(*out->sites));
	if (!raw || !out->keys || !out->sites) {
		r = -ENOMEM;
		goto out;
	}
	for (long i = 0; i < n; i++) {
		uint64_t ea = sec->sh_addr + (uint64_t)i * SY_REC_JUMP_SIZE;
		uint64_t key = 0;
		struct sy_jump_entry rec;
		const uint8_t *b;
		bool zero;

		memcpy(&rec, ents + i * SY_REC_JUMP_SIZE, sizeof(rec));
		if (img_ptr(&m, ea + offsetof(struct sy_jump_entry, key), &key,
			    &raw[i].ext) < 0) {
			r = bad(out, "a relocation of " SY_SEC_JUMP " is "
				     "malformed");
			goto out;
		}
		raw[i].site.likely = (key & SY_ENTRY_BRANCH) != 0;
		raw[i].key = key & ~(uint64_t)SY_ENTRY_FLAGS;
		raw[i].site.addr = rel(ea + offsetof(struct sy_jump_entry,
						      code), rec.code);
		raw[i].site.target = rel(ea + offsetof(struct sy_jump_entry,
							target), rec.target);
		/* the site's bytes, as many as the file holds up to 8 */
		for (unsigned l = sizeof(raw[i].site.bytes); l; l--) {
			b = img_at(&m, raw[i].site.addr, l, &zero);
			if (b) {
				memcpy(raw[i].site.bytes, b, l);
				raw[i].site.nbytes = l;
				raw[i].site.off = (uint64_t)(b - m.p);
				break;
			}
		}
		raw[i].site.len = site_len(m.machine, &raw[i].site);
	}
	qsort(raw, (size_t)n, sizeof(*raw), cmp_raw);
	for (long i = 0; i < n; i++) {
		struct sy_rec_key *k = out->nkeys ? &out->keys[out->nkeys - 1]
						  : NULL;
		const uint8_t *b;
		const char *copied = NULL;
		struct static_key sk;
		bool zero;
		int cr;

		out->sites[i] = raw[i].site;
		out->nsites++;
		if (k && (raw[i].ext ? !k->addr && !strcmp(pl.p +
					(uintptr_t)k->name, raw[i].ext)
				     : k->addr && k->addr == raw[i].key)) {
			k->nsites++;
			continue;
		}
		k = &out->keys[out->nkeys++];
		k->addr = raw[i].ext ? 0 : raw[i].key;
		k->sites = &out->sites[i];
		k->nsites = 1;
		k->initial = -1;
		if (raw[i].ext) {
			k->name = (const char *)pool_add(&pl, "%s", raw[i].ext);
			continue;
		}
		k->name = (const char *)name_of(&pl, &syms, k->addr, false,
						NULL, "key");
		/* copied from a library: its state is the library's */
		cr = img_copy_reloc(&m, k->addr, &copied);
		if (cr < 0) {
			r = bad(out, "a copy relocation is malformed");
			goto out;
		}
		if (cr) {
			k->copied = (const char *)pool_add(&pl, "%s", copied);
			continue;
		}
		/* its initial state: struct static_key's enabled */
		b = img_at(&m, k->addr + offsetof(struct static_key, enabled),
			   sizeof(sk.enabled), &zero);
		if (b) {
			memcpy(&sk.enabled, b, sizeof(sk.enabled));
			k->initial = sk.enabled > 0;
		} else if (zero) {
			k->initial = 0;
		}
	}
	r = read_others(&m, &syms, &pl, out);
	if (!r)
		r = read_descs(&m, &pl, out);
	if (!r && pl.failed)
		r = -ENOMEM;
	if (r)
		goto out;
	/* the pool is final: offsets to pointers */
	out->names = pl.p;
	pl.p = NULL;
	for (size_t i = 0; i < out->nkeys; i++) {
		out->keys[i].name = out->names + (uintptr_t)out->keys[i].name;
		if (out->keys[i].copied)
			out->keys[i].copied = out->names +
				(uintptr_t)out->keys[i].copied;
		if (out->keys[i].description)
			out->keys[i].description = out->names +
				(uintptr_t)out->keys[i].description;
	}
	for (size_t i = 0; i < out->ncalls; i++) {
		out->calls[i].name = out->names + (uintptr_t)out->calls[i].name;
		if (out->calls[i].target)
			out->calls[i].target = out->names +
				(uintptr_t)out->calls[i].target;
	}
	for (size_t i = 0; i < out->nrcs; i++)
		out->rcs[i].name = out->names + (uintptr_t)out->rcs[i].name;
	qsort(out->calls, out->ncalls, sizeof(*out->calls), cmp_call);
	qsort(out->alts, out->nalts, sizeof(*out->alts), cmp_alt);
	qsort(out->rcs, out->nrcs, sizeof(*out->rcs), cmp_rc);
out:
	free(raw);
	free(pl.p);
	free(pl.recs.v);
	sy_syms_free(&syms);
	if (r)
		sy_records_free(out);
	return r;
}
