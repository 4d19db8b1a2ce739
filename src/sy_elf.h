/* SPDX-License-Identifier: MIT */
/*
 * sy_elf.h - symbols of an ELF file (src/elf.c). Internal.
 */
#ifndef SY_ELF_H
#define SY_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sy_sym {
	uintptr_t addr;		/* run-time address (value + load bias) */
	size_t size;
	const char *name;
	bool func;		/* STT_FUNC, else STT_OBJECT */
	const char *file;	/* an object whose name another object of
				   the file has too: the source file of its
				   definition (the STT_FILE symbol before
				   it, base name), else NULL */
	const char *src;	/* a file-local object's (or function's)
				   source file, whether or not its name is
				   another's: the same base name; else NULL
				   (a global; the file does not say) */
};

struct sy_syms {
	struct sy_sym *v;	/* sorted by address */
	size_t n;
	char *names;
};

/* Read the function and object symbols of the ELF file at path (.symtab,
 * else .dynsym), relocated by bias. Returns 0, -ENOEXEC for a malformed
 * file, -ENOENT without symbols, or another negative errno. */
__attribute__((visibility("hidden")))
int sy_syms_load(const char *path, uintptr_t bias, struct sy_syms *out);
/* The same from an image in memory (aligned to 8 bytes). */
__attribute__((visibility("hidden")))
int sy_syms_parse(const void *img, size_t size, uintptr_t bias,
		  struct sy_syms *out);
/* The function (func) or object symbol that contains addr, or NULL. */
__attribute__((visibility("hidden")))
const struct sy_sym *sy_syms_find(const struct sy_syms *s, uintptr_t addr,
				  bool func);
__attribute__((visibility("hidden")))
void sy_syms_free(struct sy_syms *s);

/* The allocated section called name: its address and size as linked.
 * 0, -ENOENT (none), -ENOEXEC (malformed), or another negative errno.
 * From an image in memory (aligned to 8 bytes), or from the file at path
 * (its headers only are read). */
__attribute__((visibility("hidden")))
int sy_elf_section(const void *img, size_t size, const char *name,
		   uint64_t *addr, uint64_t *sz);
__attribute__((visibility("hidden")))
int sy_elf_section_load(const char *path, const char *name, uint64_t *addr,
			uint64_t *size);

#endif /* SY_ELF_H */
