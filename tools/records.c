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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/sy_elf.h"
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

/* The dynamic relocation at addr that gives a 64-bit value, if any:
 * 1 and *val (and *sym: an undefined symbol's name, else NULL), 0 none,
 * -1 malformed. */
static int reloc_at(const struct img *m, uint64_t addr, uint64_t *val,
		    const char **sym)
{
	*sym = NULL;
	for (unsigned i = 0; i < m->shnum; i++) {
		const Elf64_Shdr *s = &m->sh[i], *symtab, *strtab;
		const Elf64_Rela *r;
		size_t n;

		if (s->sh_type != SHT_RELA || !(s->sh_flags & SHF_ALLOC))
			continue;
		if (s->sh_entsize != sizeof(Elf64_Rela) ||
		    !in_file(s->sh_offset, s->sh_size, m->size) ||
		    s->sh_offset % 8)
			return -1;
		r = (const Elf64_Rela *)(m->p + s->sh_offset);
		n = s->sh_size / sizeof(*r);
		for (size_t k = 0; k < n; k++) {
			unsigned type = ELF64_R_TYPE(r[k].r_info);
			uint32_t si = ELF64_R_SYM(r[k].r_info);
			const Elf64_Sym *y;

			if (r[k].r_offset != addr)
				continue;
			if (type == R_X86_64_RELATIVE) {
				*val = (uint64_t)r[k].r_addend;
				return 1;
			}
			if (type != R_X86_64_64 && type != R_X86_64_GLOB_DAT)
				return -1;
			if (s->sh_link >= m->shnum)
				return -1;
			symtab = &m->sh[s->sh_link];
			if (symtab->sh_entsize != sizeof(Elf64_Sym) ||
			    !in_file(symtab->sh_offset, symtab->sh_size,
				     m->size) || symtab->sh_offset % 8 ||
			    si >= symtab->sh_size / sizeof(Elf64_Sym) ||
			    symtab->sh_link >= m->shnum)
				return -1;
			y = (const Elf64_Sym *)(m->p + symtab->sh_offset) + si;
			strtab = &m->sh[symtab->sh_link];
			if (!in_file(strtab->sh_offset, strtab->sh_size, m->size))
				return -1;
			if (y->st_shndx == SHN_UNDEF) {
				const char *str = (const char *)m->p +
						  strtab->sh_offset;

				if (y->st_name >= strtab->sh_size ||
				    !memchr(str + y->st_name, 0,
					    strtab->sh_size - y->st_name))
					return -1;
				*sym = str + y->st_name;
				*val = (uint64_t)r[k].r_addend;
			} else {
				*val = y->st_value + (uint64_t)r[k].r_addend;
			}
			return 1;
		}
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
	free(r->names);
	r->keys = NULL;
	r->sites = NULL;
	r->names = NULL;
	r->nkeys = r->nsites = 0;
}

int sy_records_read(const uint8_t *p, size_t size, struct sy_records *out)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)p;
	const Elf64_Shdr *sec, *shs;
	struct sy_syms syms = { 0 };
	struct img m = { p, size, NULL, 0, NULL, 0 };
	struct raw *raw = NULL;
	size_t n, pool = 0, used = 0;
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

	sec = section(&m, "sy_jump_entries");
	if (!sec || !sec->sh_size)
		return 0;	/* no static key sites */
	if (sec->sh_type != SHT_PROGBITS || sec->sh_size % ENTRY_SIZE ||
	    !in_file(sec->sh_offset, sec->sh_size, size))
		return bad(out, "sy_jump_entries: not whole records in the file");
	n = sec->sh_size / ENTRY_SIZE;
	raw = calloc(n, sizeof(*raw));
	if (!raw)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *e = p + sec->sh_offset + i * ENTRY_SIZE;
		uint64_t ea = sec->sh_addr + i * ENTRY_SIZE, key, v;
		int32_t code, target;
		const uint8_t *b;
		bool zero;
		int k;

		memcpy(&code, e, 4);
		memcpy(&target, e + 4, 4);
		memcpy(&key, e + 8, 8);
		k = reloc_at(&m, ea + 8, &v, &raw[i].ext);
		if (k < 0) {
			r = bad(out, "a relocation of sy_jump_entries is "
				     "malformed");
			goto out;
		}
		if (k)
			key = v;
		raw[i].site.likely = key & 1;
		raw[i].key = key & ~(uint64_t)7;
		raw[i].site.addr = ea + (uint64_t)(int64_t)code;
		raw[i].site.target = ea + 4 + (uint64_t)(int64_t)target;
		if (raw[i].ext)
			pool += strlen(raw[i].ext) + 1;
		for (unsigned l = 8; l; l--) {
			b = at_addr(&m, raw[i].site.addr, l, &zero);
			if (b) {
				memcpy(raw[i].site.bytes, b, l);
				raw[i].site.nbytes = l;
				break;
			}
		}
		raw[i].site.len = raw[i].site.nbytes >= 2 &&
				  raw[i].site.bytes[0] == 0xeb ? 2 :
				  raw[i].site.nbytes >= 5 &&
				  raw[i].site.bytes[0] == 0xe9 ? 5 : 0;
	}
	qsort(raw, n, sizeof(*raw), cmp_raw);

	/* names: the object symbols of the file (.symtab, else .dynsym) */
	r = sy_syms_parse(p, size, 0, &syms);
	if (r == -ENOMEM)
		goto out;
	r = 0;
	out->keys = calloc(n, sizeof(*out->keys));
	out->sites = calloc(n, sizeof(*out->sites));
	/* every key's name: a symbol (+offset) or an address, at most 40 */
	pool += n * 41;
	for (size_t i = 0; i < syms.n; i++)
		pool += strlen(syms.v[i].name) + 1;
	out->names = malloc(pool);
	if (!out->keys || !out->sites || !out->names) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct sy_rec_key *k = out->nkeys ? &out->keys[out->nkeys - 1]
						  : NULL;

		out->sites[i] = raw[i].site;
		out->nsites++;
		if (k && k->addr == raw[i].key && (raw[i].ext ?
		    !strcmp(k->name, raw[i].ext) : raw[i].key != 0)) {
			k->nsites++;
			continue;
		}
		k = &out->keys[out->nkeys++];
		k->addr = raw[i].ext ? 0 : raw[i].key;
		k->sites = &out->sites[i];
		k->nsites = 1;
		k->initial = -1;
		k->name = out->names + used;
		if (raw[i].ext) {
			used += (size_t)sprintf(out->names + used, "%s",
						raw[i].ext) + 1;
		} else {
			const struct sy_sym *s = sy_syms_find(&syms, k->addr,
							      false);
			const uint8_t *b;
			bool zero;
			int32_t en;

			if (s && s->addr == k->addr)
				used += (size_t)sprintf(out->names + used,
							"%s", s->name) + 1;
			else if (s && strlen(s->name) < 20)
				used += (size_t)sprintf(out->names + used,
						"%s+%llu", s->name,
						(unsigned long long)(k->addr -
								     s->addr)) + 1;
			else
				used += (size_t)sprintf(out->names + used,
						"key@0x%llx",
						(unsigned long long)k->addr) + 1;
			/* struct static_key: int enabled first */
			b = at_addr(&m, k->addr, 4, &zero);
			if (b) {
				memcpy(&en, b, 4);
				k->initial = en > 0;
			} else if (zero) {
				k->initial = 0;
			}
		}
	}
out:
	free(raw);
	sy_syms_free(&syms);
	if (r)
		sy_records_free(out);
	return r;
}
