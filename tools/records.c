/* SPDX-License-Identifier: MIT */
/*
 * records.c - the static key records of an ELF file on disk (records.h).
 *
 * The records are the 16-byte entries of section "sy_jump_entries"
 * (include/switchyard/arch/x86_64.h): code and target self-relative, the
 * key absolute. In an executable linked without PIE the key field holds
 * the address; in a PIE or a shared object it holds 0 and a dynamic
 * relocation supplies it: R_X86_64_RELATIVE (addend: a key of this
 * object) or R_X86_64_64 / GLOB_DAT (symbol + addend: a key that may live
 * in another object). Both are applied here, as the dynamic linker would
 * with a load bias of 0. The branch bit rides in bit 0 of the key.
 *
 * Everything read is checked against the file first: a malformed file
 * gives -ENOEXEC and a reason.
 */
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sy_elf.h"
#include "../src/sy_names.h"
#include "records.h"

#define ENTRY_SIZE 16

struct img {
	const uint8_t *p;
	size_t size;
	const Elf64_Shdr *sh;
	unsigned shnum;
	const char *shstr;
	size_t shstrsize;
};

static bool in_file(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

static int bad(struct sy_records *out, const char *why)
{
	out->why = why;
	return -ENOEXEC;
}

static const Elf64_Shdr *section(const struct img *m, const char *name)
{
	size_t len = strlen(name) + 1;

	for (unsigned i = 0; i < m->shnum; i++) {
		uint32_t n = m->sh[i].sh_name;

		if (n < m->shstrsize && len <= m->shstrsize - n &&
		    !memcmp(m->shstr + n, name, len))
			return &m->sh[i];
	}
	return NULL;
}

/*
 * The file bytes behind [addr, addr + len) of the image as linked: from the
 * allocated section that holds them. NULL if none does, or if it is
 * NOBITS (*zero is then set: .bss reads as zeros).
 */
static const uint8_t *at_addr(const struct img *m, uint64_t addr, uint64_t len,
			      bool *zero)
{
	*zero = false;
	for (unsigned i = 0; i < m->shnum; i++) {
		const Elf64_Shdr *s = &m->sh[i];

		if (!(s->sh_flags & SHF_ALLOC) || addr < s->sh_addr ||
		    addr - s->sh_addr > s->sh_size ||
		    len > s->sh_size - (addr - s->sh_addr))
			continue;
		if (s->sh_type == SHT_NOBITS) {
			*zero = true;
			return NULL;
		}
		if (!in_file(s->sh_offset + (addr - s->sh_addr), len, m->size) ||
		    s->sh_offset > m->size)
			return NULL;
		return m->p + s->sh_offset + (addr - s->sh_addr);
	}
	return NULL;
}

/*
 * A site's length from its bytes: the jump to its target (eb rel8, e9
 * rel32) as the assembler emitted it, or the TEST of the same rel (a8,
 * a9) that `switchyard prepatch` writes; 0 for anything else.
 */
static unsigned site_len(const struct sy_rec_site *s)
{
	int32_t r32;

	if (s->nbytes >= 2 && (s->bytes[0] == 0xeb || s->bytes[0] == 0xa8) &&
	    s->target - (s->addr + 2) == (uint64_t)(int64_t)(int8_t)s->bytes[1])
		return 2;
	if (s->nbytes < 5 || (s->bytes[0] != 0xe9 && s->bytes[0] != 0xa9))
		return 0;
	memcpy(&r32, s->bytes + 1, 4);
	return s->target - (s->addr + 5) == (uint64_t)(int64_t)r32 ? 5 : 0;
}

/* Section s as a table of n relocations with addends that the loader
 * applies (SHT_RELA, SHF_ALLOC): 1, 0 for another section (n = 0), -1 when
 * it lies outside the file or is misaligned. */
static int rela_table(const struct img *m, const Elf64_Shdr *s,
		      const Elf64_Rela **r, size_t *n)
{
	*r = NULL;
	*n = 0;
	if (s->sh_type != SHT_RELA || !(s->sh_flags & SHF_ALLOC))
		return 0;
	if (s->sh_entsize != sizeof(Elf64_Rela) ||
	    !in_file(s->sh_offset, s->sh_size, m->size) || s->sh_offset % 8)
		return -1;
	*r = (const Elf64_Rela *)(m->p + s->sh_offset);
	*n = s->sh_size / sizeof(**r);
	return 1;
}

/* Symbol si of the symbol table RELA section s links to, and its string
 * table: 0, or -1 when either table lies outside the file or is malformed. */
static int rela_sym(const struct img *m, const Elf64_Shdr *s, uint32_t si,
		    const Elf64_Sym **y, const char **str, uint64_t *strsize)
{
	const Elf64_Shdr *symtab, *strtab;

	if (s->sh_link >= m->shnum)
		return -1;
	symtab = &m->sh[s->sh_link];
	if (symtab->sh_entsize != sizeof(Elf64_Sym) ||
	    !in_file(symtab->sh_offset, symtab->sh_size, m->size) ||
	    symtab->sh_offset % 8 ||
	    si >= symtab->sh_size / sizeof(Elf64_Sym) ||
	    symtab->sh_link >= m->shnum)
		return -1;
	*y = (const Elf64_Sym *)(m->p + symtab->sh_offset) + si;
	strtab = &m->sh[symtab->sh_link];
	if (!in_file(strtab->sh_offset, strtab->sh_size, m->size))
		return -1;
	*str = (const char *)m->p + strtab->sh_offset;
	*strsize = strtab->sh_size;
	return 0;
}

/* The NUL-terminated name at off in a string table of size bytes, or NULL. */
static const char *str_at(const char *str, uint64_t size, uint32_t off)
{
	if (off >= size || !memchr(str + off, 0, size - off))
		return NULL;
	return str + off;
}

/* The dynamic relocation at addr that gives a 64-bit value, if any:
 * 1 and *val (and *sym: an undefined symbol's name, else NULL), 0 none,
 * -1 malformed. */
static int reloc_at(const struct img *m, uint64_t addr, uint64_t *val,
		    const char **sym)
{
	*sym = NULL;
	for (unsigned i = 0; i < m->shnum; i++) {
		const Elf64_Shdr *s = &m->sh[i];
		const Elf64_Rela *r;
		size_t n;
		int t = rela_table(m, s, &r, &n);

		if (t < 0)
			return -1;
		for (size_t k = 0; k < n; k++) {
			unsigned type = ELF64_R_TYPE(r[k].r_info);
			uint32_t si = ELF64_R_SYM(r[k].r_info);
			const Elf64_Sym *y;
			const char *str;
			uint64_t strsize;

			if (r[k].r_offset != addr)
				continue;
			if (type == R_X86_64_RELATIVE) {
				*val = (uint64_t)r[k].r_addend;
				return 1;
			}
			if (type != R_X86_64_64 && type != R_X86_64_GLOB_DAT)
				return -1;
			if (rela_sym(m, s, si, &y, &str, &strsize))
				return -1;
			if (y->st_shndx == SHN_UNDEF) {
				*sym = str_at(str, strsize, y->st_name);
				if (!*sym)
					return -1;
				*val = (uint64_t)r[k].r_addend;
			} else {
				*val = y->st_value + (uint64_t)r[k].r_addend;
			}
			return 1;
		}
	}
	return 0;
}

/*
 * The symbol of the copy relocation (R_X86_64_COPY) whose copy holds
 * addr: an executable that refers to a variable a shared library exports
 * (from code not compiled as PIC, or PIE code with copy relocations, the
 * x86-64 default) gets a copy of it in its own .bss, filled at load time
 * from the library's. The executable's symbol table then shows the
 * variable as its own, zero; its value comes from the library that
 * defines it. 1 and *name, 0 none, -1 malformed.
 */
static int copy_reloc_at(const struct img *m, uint64_t addr,
			 const char **name)
{
	for (unsigned i = 0; i < m->shnum; i++) {
		const Elf64_Shdr *s = &m->sh[i];
		const Elf64_Rela *r;
		size_t n;
		int t = rela_table(m, s, &r, &n);

		if (t < 0)
			return -1;
		for (size_t k = 0; k < n; k++) {
			uint32_t si = ELF64_R_SYM(r[k].r_info);
			const Elf64_Sym *y;
			const char *str;
			uint64_t strsize;

			if (ELF64_R_TYPE(r[k].r_info) != R_X86_64_COPY ||
			    addr < r[k].r_offset)
				continue;
			if (rela_sym(m, s, si, &y, &str, &strsize))
				return -1;
			/* the copy is st_size bytes (a key: at least 1) */
			if (addr - r[k].r_offset >= (y->st_size ? y->st_size
								: 1))
				continue;
			*name = str_at(str, strsize, y->st_name);
			if (!*name)
				return -1;
			return 1;
		}
	}
	return 0;
}

/*
 * The 64-bit pointer stored at addr in the image as the dynamic linker
 * would leave it (bias 0): the relocation's value if one applies there,
 * else the file's bytes. 1 and *val (*ext: an undefined symbol's name,
 * the value is then its addend), 0 nothing there, -1 malformed.
 */
static int ptr_at(const struct img *m, uint64_t addr, uint64_t *val,
		  const char **ext)
{
	const uint8_t *b;
	bool zero;
	int k = reloc_at(m, addr, val, ext);

	if (k)
		return k;
	b = at_addr(m, addr, 8, &zero);
	if (!b)
		return zero ? (*val = 0, 1) : 0;
	memcpy(val, b, 8);
	return 1;
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

/* sizeof(struct static_key) in an x86-64 file (the only kind read here) */
#define KEY_SIZE 16

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
	if (!strcmp(fallback, "key") && off % KEY_SIZE == 0 &&
	    s->size % KEY_SIZE == 0 && s->size > KEY_SIZE)
		r = pool_add(pl, "%s%s%s[%llu]", f, colon, n,
			     (unsigned long long)(off / KEY_SIZE));
	else if (!off)
		r = pool_add(pl, "%s%s%s", f, colon, n);
	else
		r = pool_add(pl, "%s%s%s+%#llx", f, colon, n,
			     (unsigned long long)off);
	free(d);
	return r;
}

/* A records section: NULL (none), or its entries in *n (-1: malformed). */
static const uint8_t *records(const struct img *m, const char *name,
			      size_t esize, const Elf64_Shdr **sec, long *n)
{
	const Elf64_Shdr *s = section(m, name);

	*n = 0;
	*sec = s;
	if (!s || !s->sh_size)
		return NULL;
	if (s->sh_type != SHT_PROGBITS || s->sh_size % esize ||
	    !in_file(s->sh_offset, s->sh_size, m->size)) {
		*n = -1;
		return NULL;
	}
	*n = (long)(s->sh_size / esize);
	return m->p + s->sh_offset;
}

static int cmp_sym_addr(const void *a, const void *b)
{
	uint64_t x = ((const struct sy_sym *)a)->addr;
	uint64_t y = ((const struct sy_sym *)b)->addr;

	return (x > y) - (x < y);
}

/*
 * The name records of SY__NAME_RECORD() (section sy_names, 24 bytes: the
 * object's and the name's addresses, by relocation or as linked, and the
 * object's size), as symbols in pl->recs; each name NUL-terminated within
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

	records(m, "sy_names", 24, &sec, &n);
	if (n < 0)
		return bad(out, "section sy_names is malformed");
	v = calloc(n ? (size_t)n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	pl->recs.v = v;
	for (long i = 0; i < n; i++) {
		uint64_t ea = sec->sh_addr + (uint64_t)i * 24, obj = 0, nm = 0;
		uint64_t size = 0;
		const char *ext = NULL, *ext2 = NULL;
		const uint8_t *t = NULL, *b;
		size_t len = 0;
		bool zero;

		if (ptr_at(m, ea, &obj, &ext) < 0 ||
		    ptr_at(m, ea + 8, &nm, &ext2) < 0)
			return bad(out, "a relocation of sy_names is malformed");
		b = at_addr(m, ea + 16, 8, &zero);
		if (b)
			memcpy(&size, b, 8);
		if (ext || ext2 || !obj || !size || size > (1u << 20))
			continue;
		for (size_t l = REC_NAME_MAX; l && !t; l--) {
			t = at_addr(m, nm, l, &zero);
			len = l;
		}
		if (!t || !memchr(t, 0, len))
			continue;	/* not a string of this file */
		v[pl->recs.n++] = (struct sy_sym){ obj, size, (const char *)t,
						   false, NULL, NULL };
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

/* Static calls, alternatives, run-time constants; names as pool offsets. */
/*
 * SWITCHYARD_KEY_DESCRIPTION() records (section sy_key_desc, 16 bytes:
 * the key's and the text's addresses, by relocation or as linked): each
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

	records(m, "sy_key_desc", 16, &sec, &n);
	if (n < 0)
		return bad(out, "section sy_key_desc is malformed");
	for (long i = 0; i < n; i++) {
		uint64_t ea = sec->sh_addr + (uint64_t)i * 16, key = 0, text = 0;
		const char *ext = NULL, *ext2 = NULL;
		const uint8_t *t;
		size_t len = 0;
		bool zero;

		if (ptr_at(m, ea, &key, &ext) < 0 ||
		    ptr_at(m, ea + 8, &text, &ext2) < 0)
			return bad(out, "a relocation of sy_key_desc is "
					"malformed");
		if (ext || ext2 || !key)
			continue;
		/* the most bytes up to DESC_MAX inside one section */
		t = NULL;
		for (size_t l = DESC_MAX; l && !t; l--) {
			t = at_addr(m, text, l, &zero);
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

static int read_others(const struct img *m, const struct sy_syms *syms,
		       struct pool *pl, struct sy_records *out)
{
	const Elf64_Shdr *sec;
	const uint8_t *e;
	long n;

	e = records(m, "sy_static_call_sites", 16, &sec, &n);
	if (n < 0)
		return bad(out, "sy_static_call_sites: not whole records in "
				"the file");
	out->calls = calloc(n ? (size_t)n : 1, sizeof(*out->calls));
	if (!out->calls)
		return -ENOMEM;
	for (long i = 0; i < n; i++, e += 16) {
		struct sy_rec_call *c = &out->calls[out->ncalls];
		uint64_t ea = sec->sh_addr + (uint64_t)i * 16, meta = 0;
		uint64_t key = 0, fn = 0, kind = 0;
		const char *ext = NULL;
		const uint8_t *b;
		bool zero;
		int32_t code;

		memcpy(&code, e + 8, 4);
		c->addr = ea + 8 + (uint64_t)(int64_t)code;
		if (ptr_at(m, ea, &meta, &ext) < 0 ||
		    (!ext && ptr_at(m, meta, &key, &ext) < 0))
			return bad(out, "a static call record's relocation is "
					"malformed");
		if (!ext && (b = at_addr(m, meta + 8, 8, &zero)))
			memcpy(&kind, b, 8);
		c->callee_save = kind >= 16;
		if (ext) {
			c->name = (const char *)prefixed_name(pl, NULL, ext,
							      "__SCK__");
			c->target = NULL;
		} else {
			int k = ptr_at(m, key, &fn, &ext);

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

	e = records(m, "sy_altinstr", 16, &sec, &n);
	if (n < 0)
		return bad(out, "sy_altinstr: not whole records in the file");
	out->alts = calloc(n ? (size_t)n : 1, sizeof(*out->alts));
	if (!out->alts)
		return -ENOMEM;
	for (long i = 0; i < n; i++, e += 16) {
		struct sy_rec_alt *a = &out->alts[out->nalts++];
		uint64_t ea = sec->sh_addr + (uint64_t)i * 16;
		int32_t site;
		uint16_t f;

		memcpy(&site, e, 4);
		memcpy(&f, e + 12, 2);
		a->addr = ea + (uint64_t)(int64_t)site;
		a->feature = f & 0x3fffu;
		a->absent = f >> 15 & 1;
		a->len = e[14];
		a->repl_len = e[15];
	}

	e = records(m, "sy_runtime_const", 16, &sec, &n);
	if (n < 0)
		return bad(out, "sy_runtime_const: not whole records in the "
				"file");
	out->rcs = calloc(n ? (size_t)n : 1, sizeof(*out->rcs));
	if (!out->rcs)
		return -ENOMEM;
	for (long i = 0; i < n; i++, e += 16) {
		struct sy_rec_rc *c = &out->rcs[out->nrcs++];
		uint64_t ea = sec->sh_addr + (uint64_t)i * 16, sym = 0;
		const char *ext = NULL;
		int32_t code;
		int k = ptr_at(m, ea, &sym, &ext);

		if (k < 0)
			return bad(out, "a run-time constant's relocation is "
					"malformed");
		memcpy(&code, e + 8, 4);
		c->addr = ea + 8 + (uint64_t)(int64_t)code;
		c->size = e[13];
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
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)p;
	const Elf64_Shdr *sec, *shs;
	struct sy_syms syms = { 0 };
	struct img m = { p, size, NULL, 0, NULL, 0 };
	struct pool pl = { NULL, 0, 0, false, { NULL, 0, NULL } };
	struct raw *raw = NULL;
	const uint8_t *ents;
	long n;
	int r = 0;

	memset(out, 0, sizeof(*out));
	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return bad(out, "not an ELF file");
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_machine != EM_X86_64)
		return bad(out, "not a 64-bit x86-64 ELF file");
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return bad(out, "not an executable or a shared object");
	if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff % 8 ||
	    !in_file(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr),
		     size) || eh->e_shstrndx >= eh->e_shnum)
		return bad(out, "section headers outside the file");
	m.sh = (const Elf64_Shdr *)(p + eh->e_shoff);
	m.shnum = eh->e_shnum;
	shs = &m.sh[eh->e_shstrndx];
	if (!in_file(shs->sh_offset, shs->sh_size, size))
		return bad(out, "section names outside the file");
	m.shstr = (const char *)p + shs->sh_offset;
	m.shstrsize = shs->sh_size;

	/* names: the object and function symbols (.symtab, else .dynsym) */
	r = sy_syms_parse(p, size, 0, &syms);
	if (r == -ENOMEM)
		return r;
	r = 0;
	pool_add(&pl, "%s", "");	/* offset 0: no name */
	r = read_names(&m, &pl, out);
	if (r)
		goto out;

	ents = records(&m, "sy_jump_entries", ENTRY_SIZE, &sec, &n);
	if (n < 0) {
		r = bad(out, "sy_jump_entries: not whole records in the file");
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
		const uint8_t *e = ents + i * ENTRY_SIZE;
		uint64_t ea = sec->sh_addr + (uint64_t)i * ENTRY_SIZE, key = 0;
		int32_t code, target;
		const uint8_t *b;
		bool zero;

		memcpy(&code, e, 4);
		memcpy(&target, e + 4, 4);
		if (ptr_at(&m, ea + 8, &key, &raw[i].ext) < 0) {
			r = bad(out, "a relocation of sy_jump_entries is "
				     "malformed");
			goto out;
		}
		raw[i].site.likely = key & 1;
		raw[i].key = key & ~(uint64_t)7;
		raw[i].site.addr = ea + (uint64_t)(int64_t)code;
		raw[i].site.target = ea + 4 + (uint64_t)(int64_t)target;
		for (unsigned l = 8; l; l--) {
			b = at_addr(&m, raw[i].site.addr, l, &zero);
			if (b) {
				memcpy(raw[i].site.bytes, b, l);
				raw[i].site.nbytes = l;
				raw[i].site.off = (uint64_t)(b - m.p);
				break;
			}
		}
		raw[i].site.len = site_len(&raw[i].site);
	}
	qsort(raw, (size_t)n, sizeof(*raw), cmp_raw);
	for (long i = 0; i < n; i++) {
		struct sy_rec_key *k = out->nkeys ? &out->keys[out->nkeys - 1]
						  : NULL;
		const uint8_t *b;
		const char *copied = NULL;
		bool zero;
		int32_t en;
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
		cr = copy_reloc_at(&m, k->addr, &copied);
		if (cr < 0) {
			r = bad(out, "a copy relocation is malformed");
			goto out;
		}
		if (cr) {
			k->copied = (const char *)pool_add(&pl, "%s", copied);
			continue;
		}
		/* struct static_key: int enabled first */
		b = at_addr(&m, k->addr, 4, &zero);
		if (b) {
			memcpy(&en, b, 4);
			k->initial = en > 0;
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
