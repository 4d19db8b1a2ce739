/* SPDX-License-Identifier: MIT */
/*
 * elf_image.c - a 64-bit x86-64 or AArch64 ELF file on disk as the
 * dynamic linker would leave it in memory at a load bias of 0
 * (elf_image.h).
 *
 * A pointer in a record is absolute: in an executable linked without PIE
 * the field holds the address; in a PIE or a shared object it holds 0 and
 * a dynamic relocation supplies it: RELATIVE (addend: an object of this
 * file) or a symbol's (symbol + addend: an object that may live in
 * another file). img_ptr() applies both, as the dynamic linker would with
 * a load bias of 0. The relocation types are the machine's own numbers
 * (each psABI's table; struct rtypes): x86-64 R_X86_64_RELATIVE, 64 and
 * GLOB_DAT; AArch64 R_AARCH64_RELATIVE, ABS64, GLOB_DAT and JUMP_SLOT
 * (all S + A there). A table of another machine's relocations would be
 * misread, which is why img_open() takes only the two.
 *
 * Everything read is checked against the file first: a malformed file
 * gives -ENOEXEC and a reason.
 */
#include <elf.h>
#include <errno.h>
#include <string.h>

#include "elf_image.h"

/* A machine's dynamic relocations that can fill a record's pointer; 0:
 * none (type 0 is R_*_NONE on both, never one of these) */
struct rtypes {
	unsigned relative;	/* B + A */
	unsigned sym[3];	/* S + A */
	unsigned copy;
};

static const struct rtypes *rtypes_of(unsigned machine)
{
	static const struct rtypes x86 = {
		R_X86_64_RELATIVE, { R_X86_64_64, R_X86_64_GLOB_DAT, 0 },
		R_X86_64_COPY
	};
	static const struct rtypes a64 = {
		R_AARCH64_RELATIVE,
		{ R_AARCH64_ABS64, R_AARCH64_GLOB_DAT, R_AARCH64_JUMP_SLOT },
		R_AARCH64_COPY
	};

	return machine == EM_AARCH64 ? &a64 : &x86;
}

const char *elf_str(const char *str, uint64_t size, uint64_t off)
{
	if (off >= size || !memchr(str + off, 0, size - off))
		return NULL;
	return str + off;
}

int img_open(struct img *m, const uint8_t *p, size_t size, const char **why)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)p;
	const Elf64_Shdr *shs;

	*m = (struct img){ p, size, NULL, 0, NULL, 0, 0 };
	*why = NULL;
	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		*why = "not an ELF file";
	else if (eh->e_ident[EI_CLASS] != ELFCLASS64 ||
		 eh->e_ident[EI_DATA] != ELFDATA2LSB ||
		 (eh->e_machine != EM_X86_64 && eh->e_machine != EM_AARCH64))
		*why = "not a 64-bit x86-64 or AArch64 ELF file";
	else if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		*why = "not an executable or a shared object";
	else if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff % 8 ||
		 !in_file(eh->e_shoff,
			  (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), size) ||
		 eh->e_shstrndx >= eh->e_shnum)
		*why = "section headers outside the file";
	if (*why)
		return -ENOEXEC;
	m->sh = (const Elf64_Shdr *)(p + eh->e_shoff);
	m->shnum = eh->e_shnum;
	m->machine = eh->e_machine;
	shs = &m->sh[eh->e_shstrndx];
	if (!in_file(shs->sh_offset, shs->sh_size, size)) {
		*why = "section names outside the file";
		return -ENOEXEC;
	}
	m->shstr = (const char *)p + shs->sh_offset;
	m->shstrsize = shs->sh_size;
	return 0;
}

/* The section called name, or NULL */
static const Elf64_Shdr *img_section(const struct img *m, const char *name)
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

const uint8_t *img_at(const struct img *m, uint64_t addr, uint64_t len,
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

const uint8_t *img_table(const struct img *m, const char *name, size_t esize,
			 const Elf64_Shdr **sec, long *n)
{
	const Elf64_Shdr *s = img_section(m, name);

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

/* The dynamic relocation at addr that gives a 64-bit value, if any:
 * 1 and *val (and *sym: an undefined symbol's name, else NULL), 0 none,
 * -1 malformed. */
static int reloc_at(const struct img *m, uint64_t addr, uint64_t *val,
		    const char **sym)
{
	const struct rtypes *rt = rtypes_of(m->machine);

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
			if (type == rt->relative) {
				*val = (uint64_t)r[k].r_addend;
				return 1;
			}
			if (!type || (type != rt->sym[0] &&
				      type != rt->sym[1] &&
				      type != rt->sym[2]))
				return -1;
			if (rela_sym(m, s, si, &y, &str, &strsize))
				return -1;
			if (y->st_shndx == SHN_UNDEF) {
				*sym = elf_str(str, strsize, y->st_name);
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
 * An executable that refers to a variable a shared library exports
 * (from code not compiled as PIC, or PIE code with copy relocations, the
 * x86-64 default) gets a copy of it in its own .bss, filled at load time
 * from the library's. The executable's symbol table then shows the
 * variable as its own, zero; its value comes from the library that
 * defines it.
 */
int img_copy_reloc(const struct img *m, uint64_t addr, const char **name)
{
	unsigned copy = rtypes_of(m->machine)->copy;

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

			if (ELF64_R_TYPE(r[k].r_info) != copy ||
			    addr < r[k].r_offset)
				continue;
			if (rela_sym(m, s, si, &y, &str, &strsize))
				return -1;
			/* the copy is st_size bytes (a key: at least 1) */
			if (addr - r[k].r_offset >= (y->st_size ? y->st_size
								: 1))
				continue;
			*name = elf_str(str, strsize, y->st_name);
			if (!*name)
				return -1;
			return 1;
		}
	}
	return 0;
}

int img_ptr(const struct img *m, uint64_t addr, uint64_t *val,
	    const char **ext)
{
	const uint8_t *b;
	bool zero;
	int k = reloc_at(m, addr, val, ext);

	if (k)
		return k;
	b = img_at(m, addr, sizeof(*val), &zero);
	if (!b)
		return zero ? (*val = 0, 1) : 0;
	memcpy(val, b, sizeof(*val));
	return 1;
}
