/* SPDX-License-Identifier: MIT */
/*
 * elf_image.h - a 64-bit little-endian ELF file on disk, x86-64 or
 * AArch64, as the dynamic linker would leave it in memory at a load bias
 * of 0 (elf_image.c): its sections, the bytes behind a link-time address,
 * and the pointers there with their dynamic relocations applied. For the
 * record reader (records.c). Not library API.
 *
 * The file's machine need not be the tool's: an x86-64 tool reads
 * AArch64 files (cross-built products inspected on the build machine).
 *
 * The file is untrusted input: every offset, size and count is checked
 * against the file before it is read.
 */
#ifndef SY_TOOLS_ELF_IMAGE_H
#define SY_TOOLS_ELF_IMAGE_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct img {
	const uint8_t *p;
	size_t size;
	const Elf64_Shdr *sh;	/* the section headers, checked */
	unsigned shnum;
	const char *shstr;	/* the section names */
	size_t shstrsize;
	unsigned machine;	/* EM_X86_64 or EM_AARCH64 */
};

/* [off, off + len) lies within a file of size bytes */
static inline bool in_file(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* The NUL-terminated string at off of a string table of size bytes, or
 * NULL. */
const char *elf_str(const char *str, uint64_t size, uint64_t off);

/* The image p[0, size) of an executable or a shared object: 0, or
 * -ENOEXEC and *why (not ELF, not 64-bit little-endian x86-64 or AArch64,
 * headers outside the file). */
int img_open(struct img *m, const uint8_t *p, size_t size, const char **why);
/* The section called name as a table of entries of esize bytes: its
 * bytes and *n entries; NULL without it (*n 0) or when it is not whole
 * entries in the file (*n -1). *sec: the section, or NULL. */
const uint8_t *img_table(const struct img *m, const char *name, size_t esize,
			 const Elf64_Shdr **sec, long *n);
/* The file bytes behind [addr, addr + len) of the image as linked: from
 * the allocated section that holds them. NULL if none does, or if it is
 * NOBITS (*zero is then set: .bss reads as zeros). */
const uint8_t *img_at(const struct img *m, uint64_t addr, uint64_t len,
		      bool *zero);
/* The 64-bit pointer stored at addr as the dynamic linker would leave it:
 * the relocation's value if one applies there, else the file's bytes. 1
 * and *val (*ext: an undefined symbol's name, the value is then its
 * addend), 0 nothing there, -1 malformed. */
int img_ptr(const struct img *m, uint64_t addr, uint64_t *val,
	    const char **ext);
/* The symbol of the copy relocation (R_X86_64_COPY, R_AARCH64_COPY)
 * whose copy holds addr: 1 and *name, 0 none, -1 malformed. */
int img_copy_reloc(const struct img *m, uint64_t addr, const char **name);

#endif /* SY_TOOLS_ELF_IMAGE_H */
