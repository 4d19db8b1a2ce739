/* SPDX-License-Identifier: MIT */
/*
 * needed.c - which library a file needs defines a symbol: for a key the
 * executable holds a copy of (a copy relocation, records.h), the library
 * whose key it is, as `switchyard list FILE` names it.
 *
 * The libraries are looked for as the dynamic linker would, without its
 * cache: the file's DT_RPATH (when it has no DT_RUNPATH), LD_LIBRARY_PATH,
 * DT_RUNPATH ($ORIGIN is the file's directory), then the usual system
 * directories; the first of the file's DT_NEEDED libraries in that order
 * that defines the symbol is the answer. It is a best guess about the
 * library found at run time (another LD_LIBRARY_PATH, an upgrade), which
 * is why it only names it: the key's state is not taken from it.
 *
 * Every library read is untrusted: bounds are checked, a malformed one is
 * skipped, and so is one of another machine than the file's (an AArch64
 * file read on an x86-64 machine is never answered with an x86-64
 * library of the same name).
 */
#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf_image.h"
#include "records.h"

/* The section headers of img, checked, and its machine (x86-64 or
 * AArch64); NULL if malformed. */
static const Elf64_Shdr *shdrs(const uint8_t *img, size_t size, unsigned *n,
			       unsigned *machine)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    (eh->e_machine != EM_X86_64 && eh->e_machine != EM_AARCH64) ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff % 8 ||
	    !in_file(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr),
		     size))
		return NULL;
	*n = eh->e_shnum;
	*machine = eh->e_machine;
	return (const Elf64_Shdr *)(img + eh->e_shoff);
}

/* The string at off of the string table section strndx; NULL if bad. */
static const char *str_at(const uint8_t *img, size_t size,
			  const Elf64_Shdr *sh, unsigned n, unsigned strndx,
			  uint64_t off)
{
	const Elf64_Shdr *s;

	if (strndx >= n)
		return NULL;
	s = &sh[strndx];
	if (!in_file(s->sh_offset, s->sh_size, size))
		return NULL;
	return elf_str((const char *)img + s->sh_offset, s->sh_size, off);
}

/* Does the ELF image, of machine, export (define, in .dynsym) sym? */
static bool defines(const uint8_t *img, size_t size, unsigned machine,
		    const char *sym)
{
	unsigned n, m = 0;
	const Elf64_Shdr *sh = shdrs(img, size, &n, &m);

	if (m != machine)
		return false;
	for (unsigned i = 0; sh && i < n; i++) {
		const Elf64_Sym *y;

		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		if (sh[i].sh_entsize != sizeof(Elf64_Sym) ||
		    sh[i].sh_offset % 8 ||
		    !in_file(sh[i].sh_offset, sh[i].sh_size, size))
			return false;
		y = (const Elf64_Sym *)(img + sh[i].sh_offset);
		for (size_t k = 0; k < sh[i].sh_size / sizeof(*y); k++) {
			const char *nm;

			if (y[k].st_shndx == SHN_UNDEF)
				continue;
			nm = str_at(img, size, sh, n, sh[i].sh_link,
				    y[k].st_name);
			if (nm && !strcmp(nm, sym))
				return true;
		}
	}
	return false;
}

static bool file_defines(const char *path, unsigned machine, const char *sym)
{
	struct stat st;
	void *p;
	bool yes = false;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return false;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0) {
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd,
			 0);
		if (p != MAP_FAILED) {
			yes = defines(p, (size_t)st.st_size, machine, sym);
			munmap(p, (size_t)st.st_size);
		}
	}
	close(fd);
	return yes;
}

/* Look for lib in the colon-separated dirs ($ORIGIN: origin); its path
 * if found there, of machine, and defines sym. */
static char *search(const char *dirs, const char *origin, const char *lib,
		    unsigned machine, const char *sym)
{
	while (dirs && *dirs) {
		size_t len = strcspn(dirs, ":");
		char dir[4096], *path = NULL;
		const char *o = memmem(dirs, len, "$ORIGIN", 7);
		int w;

		if (o)
			w = snprintf(dir, sizeof(dir), "%.*s%s%.*s",
				     (int)(o - dirs), dirs, origin,
				     (int)(len - (size_t)(o - dirs) - 7),
				     o + 7);
		else
			w = snprintf(dir, sizeof(dir), "%.*s", (int)len, dirs);
		if (w > 0 && (size_t)w < sizeof(dir) &&
		    asprintf(&path, "%s/%s", *dir ? dir : ".", lib) > 0) {
			if (file_defines(path, machine, sym))
				return path;
			free(path);
		}
		dirs += len + (dirs[len] == ':');
	}
	return NULL;
}

char *sy_needed_definer(const char *path, const void *image, size_t size,
			const char *sym)
{
	/* the system directories of a Debian-style multiarch machine of
	 * the file's machine, then the usual ones */
	static const char sys_x86[] = "/lib/x86_64-linux-gnu:"
				      "/usr/lib/x86_64-linux-gnu:/lib64:"
				      "/usr/lib64:/lib:/usr/lib:/usr/local/lib";
	static const char sys_a64[] = "/lib/aarch64-linux-gnu:"
				      "/usr/lib/aarch64-linux-gnu:/lib64:"
				      "/usr/lib64:/lib:/usr/lib:/usr/local/lib";
	const uint8_t *img = image;
	const char *rpath = NULL, *runpath = NULL, *slash, *sys;
	const char *env = getenv("LD_LIBRARY_PATH");
	const Elf64_Dyn *dyn = NULL;
	size_t ndyn = 0;
	unsigned n, strndx = 0, machine = 0;
	const Elf64_Shdr *sh = shdrs(img, size, &n, &machine);
	char origin[4096], *found = NULL;

	sys = machine == EM_AARCH64 ? sys_a64 : sys_x86;

	for (unsigned i = 0; sh && i < n; i++)
		if (sh[i].sh_type == SHT_DYNAMIC) {
			if (sh[i].sh_offset % 8 ||
			    !in_file(sh[i].sh_offset, sh[i].sh_size, size))
				return NULL;
			dyn = (const Elf64_Dyn *)(img + sh[i].sh_offset);
			ndyn = sh[i].sh_size / sizeof(*dyn);
			strndx = sh[i].sh_link;
			break;
		}
	slash = strrchr(path, '/');
	snprintf(origin, sizeof(origin), "%.*s",
		 slash ? (int)(slash - path) : 1, slash ? path : ".");
	for (size_t i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
		if (dyn[i].d_tag == DT_RPATH)
			rpath = str_at(img, size, sh, n, strndx,
				       dyn[i].d_un.d_val);
		if (dyn[i].d_tag == DT_RUNPATH)
			runpath = str_at(img, size, sh, n, strndx,
					 dyn[i].d_un.d_val);
	}
	for (size_t i = 0; !found && i < ndyn && dyn[i].d_tag != DT_NULL;
	     i++) {
		const char *lib;

		if (dyn[i].d_tag != DT_NEEDED)
			continue;
		lib = str_at(img, size, sh, n, strndx, dyn[i].d_un.d_val);
		if (!lib || !*lib)
			continue;
		if (strchr(lib, '/')) {
			if (file_defines(lib, machine, sym))
				found = strdup(lib);
			continue;
		}
		if (!runpath)
			found = search(rpath, origin, lib, machine,
				       sym);
		if (!found)
			found = search(env, origin, lib, machine,
				       sym);
		if (!found)
			found = search(runpath, origin, lib, machine,
				       sym);
		if (!found)
			found = search(sys, origin, lib, machine,
				       sym);
	}
	return found;
}
