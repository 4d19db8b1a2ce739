/* SPDX-License-Identifier: MIT */
/*
 * elf.c - the symbols of an ELF file, for names: of keys (hidden and static
 * ones are only in .symtab, which dladdr() does not read) and of the
 * functions holding sites.
 *
 * The file is untrusted input (it may be truncated, or not what the mapping
 * was made from): every offset and size is checked against the file before
 * use, and a malformed file gives -ENOEXEC, never a crash.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sy_elf.h"

static int cmp_sym(const void *a, const void *b)
{
	uintptr_t x = ((const struct sy_sym *)a)->addr;
	uintptr_t y = ((const struct sy_sym *)b)->addr;

	return x < y ? -1 : x > y;
}

/* [off, off + len) lies inside a file of `size` bytes. */
static bool in_file(uint64_t off, uint64_t len, uint64_t size)
{
#ifdef SY__ELF_BROKEN
	/* the fuzz replay's negative control (fuzz/CMakeLists.txt): without
	 * this check it must crash */
	(void)off, (void)len, (void)size;
	return true;
#endif
	return off <= size && len <= size - off;
}

static int cmp_sym_name(const void *a, const void *b)
{
	const struct sy_sym *x = *(const struct sy_sym *const *)a;
	const struct sy_sym *y = *(const struct sy_sym *const *)b;
	int c = x->func - y->func;

	return c ? c : strcmp(x->name, y->name);
}

/* v[i].src's base name, from an offset into names + 1 (0: none), as
 * .file's (qualify_dups()) */
static const char *src_base(uintptr_t f, const char *names)
{
	const char *base = f ? strrchr(names + f - 1, '/') : NULL;
	const char *r = !f ? NULL : base ? base + 1 : names + f - 1;

	return r && r[0] ? r : NULL;
}

/*
 * Two objects of one file with one name (file-local keys of two
 * translation units, `static DEFINE_STATIC_KEY_FALSE(k)` in a.c and b.c)
 * would be listed alike and could not be told apart by a name: give each
 * the source file .symtab says it comes from (the STT_FILE symbol that
 * opens its translation unit's local symbols), kept in v[i].file until
 * here as an offset into names + 1 (0: none). Files alike too (two util.c
 * in two directories): the names stay alike. Every local symbol keeps its
 * file in v[i].src, which a request may name it by ("a.c:k" when no other
 * k needs it: key_names.c).
 */
static int qualify_dups(struct sy_syms *out, const char *names)
{
	struct sy_sym **by = malloc((out->n ? out->n : 1) * sizeof(*by));

	if (!by)
		return -ENOMEM;
	for (size_t i = 0; i < out->n; i++)
		by[i] = &out->v[i];
	qsort(by, out->n, sizeof(*by), cmp_sym_name);
	for (size_t i = 0; i < out->n; i++) {
		bool dup = !by[i]->func &&
			   ((i && !cmp_sym_name(&by[i], &by[i - 1])) ||
			    (i + 1 < out->n && !cmp_sym_name(&by[i], &by[i + 1])));
		by[i]->file = dup ? src_base((uintptr_t)by[i]->file, names) :
			      NULL;
		by[i]->src = src_base((uintptr_t)by[i]->src, names);
	}
	free(by);
	return 0;
}

static int parse(const uint8_t *img, size_t size, uintptr_t bias,
		 struct sy_syms *out)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *sh, *symsec = NULL, *strsec;
	size_t nsyms, strsize, pool = 0, n = 0;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !in_file(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), size) ||
	    eh->e_shoff % _Alignof(Elf64_Shdr))
		return -ENOEXEC;
	sh = (const Elf64_Shdr *)(img + eh->e_shoff);
	/* .symtab has everything; a stripped file still has .dynsym */
	for (int pass = 0; pass < 2 && !symsec; pass++)
		for (unsigned i = 0; i < eh->e_shnum; i++)
			if (sh[i].sh_type == (pass ? SHT_DYNSYM : SHT_SYMTAB)) {
				symsec = &sh[i];
				break;
			}
	if (!symsec)
		return -ENOENT;
	if (symsec->sh_link >= eh->e_shnum || symsec->sh_entsize != sizeof(Elf64_Sym) ||
	    !in_file(symsec->sh_offset, symsec->sh_size, size) ||
	    symsec->sh_offset % _Alignof(Elf64_Sym))
		return -ENOEXEC;
	strsec = &sh[symsec->sh_link];
	if (strsec->sh_type != SHT_STRTAB ||
	    !in_file(strsec->sh_offset, strsec->sh_size, size))
		return -ENOEXEC;
	nsyms = symsec->sh_size / sizeof(Elf64_Sym);
	strsize = strsec->sh_size;

	const Elf64_Sym *sym = (const Elf64_Sym *)(img + symsec->sh_offset);
	const char *str = (const char *)(img + strsec->sh_offset);

	/* Count what we keep and the bytes of their names. */
	for (size_t i = 0; i < nsyms; i++) {
		unsigned type = ELF64_ST_TYPE(sym[i].st_info);
		const char *end;

		if (type == STT_FILE && sym[i].st_name < strsize &&
		    (end = memchr(str + sym[i].st_name, 0,
				  strsize - sym[i].st_name))) {
			pool += (size_t)(end - (str + sym[i].st_name)) + 1;
			continue;
		}
		if ((type != STT_OBJECT && type != STT_FUNC) ||
		    sym[i].st_shndx == SHN_UNDEF || sym[i].st_name >= strsize)
			continue;
		end = memchr(str + sym[i].st_name, 0, strsize - sym[i].st_name);
		if (!end)
			return -ENOEXEC;	/* name runs off the table */
		pool += (size_t)(end - (str + sym[i].st_name)) + 1;
		n++;
	}
	out->v = malloc(n ? n * sizeof(*out->v) : 1);
	out->names = malloc(pool ? pool : 1);
	if (!out->v || !out->names) {
		sy_syms_free(out);
		return -ENOMEM;
	}
	pool = 0;
	size_t file = 0;	/* the current STT_FILE's name + 1, or 0 */

	for (size_t i = 0; i < nsyms; i++) {
		unsigned type = ELF64_ST_TYPE(sym[i].st_info);
		size_t len;

		if (type == STT_FILE) {
			/* copied: the image is gone after parse() */
			file = 0;
			if (sym[i].st_name < strsize &&
			    memchr(str + sym[i].st_name, 0,
				   strsize - sym[i].st_name)) {
				len = strlen(str + sym[i].st_name) + 1;
				memcpy(out->names + pool, str + sym[i].st_name,
				       len);
				file = pool + 1;
				pool += len;
			}
			continue;
		}
		if ((type != STT_OBJECT && type != STT_FUNC) ||
		    sym[i].st_shndx == SHN_UNDEF || sym[i].st_name >= strsize)
			continue;
		len = strlen(str + sym[i].st_name) + 1;
		memcpy(out->names + pool, str + sym[i].st_name, len);
		out->v[out->n].addr = bias + sym[i].st_value;
		out->v[out->n].size = sym[i].st_size;
		out->v[out->n].name = (const char *)(uintptr_t)pool; /* fixed below */
		out->v[out->n].func = type == STT_FUNC;
		/* only a local symbol belongs to the file before it; a
		 * hidden one made local by the linker is a global of some
		 * file (GNU ld puts them after an empty STT_FILE, and makes
		 * them default: lld keeps them hidden) */
		bool local = ELF64_ST_BIND(sym[i].st_info) == STB_LOCAL;

		out->v[out->n].file = (const char *)(uintptr_t)
			(local ? file : 0);
		out->v[out->n].src = (const char *)(uintptr_t)
			(local && ELF64_ST_VISIBILITY(sym[i].st_other) ==
				  STV_DEFAULT ? file : 0);
		out->n++;
		pool += len;
	}
	for (size_t i = 0; i < out->n; i++)
		out->v[i].name = out->names + (uintptr_t)out->v[i].name;
	if (qualify_dups(out, out->names)) {
		sy_syms_free(out);
		return -ENOMEM;
	}
	qsort(out->v, out->n, sizeof(*out->v), cmp_sym);
	return 0;
}

#if defined(__SANITIZE_THREAD__)
#define SY_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SY_TSAN 1
#endif
#endif

int sy_syms_load(const char *path, uintptr_t bias, struct sy_syms *out)
{
	struct stat st;
	void *img;
	int fd, r;

	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0) {
		close(fd);
		return -ENOEXEC;
	}
#ifdef SY_TSAN
	/*
	 * ThreadSanitizer build: read, do not map. TSan records a mapping as
	 * written and, at munmap, forgets only the whole shadow pages; when
	 * dlopen (whose mmap TSan does not see: the dynamic linker is not
	 * instrumented) then maps a library over the same addresses, its
	 * registration's first reads of the site table race with that ghost
	 * write. Reading into the heap costs the file's size for a moment.
	 */
	img = malloc((size_t)st.st_size);
	r = img && pread(fd, img, (size_t)st.st_size, 0) == st.st_size ? 0 : -EIO;
	close(fd);
	if (!r)
		r = parse(img, (size_t)st.st_size, bias, out);
	free(img);
	return r;
#else
	img = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (img == MAP_FAILED)
		return -errno;
	r = parse(img, (size_t)st.st_size, bias, out);
	munmap(img, (size_t)st.st_size);
	return r;
#endif
}

int sy_syms_parse(const void *img, size_t size, uintptr_t bias,
		  struct sy_syms *out)
{
	memset(out, 0, sizeof(*out));
	if (((uintptr_t)img % _Alignof(Elf64_Ehdr)))
		return -EINVAL;
	return parse(img, size, bias, out);
}

const struct sy_sym *sy_syms_find(const struct sy_syms *s, uintptr_t addr,
				  bool func)
{
	size_t lo = 0, hi = s->n;

	/* last symbol starting at or before addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* symbols may share an address or nest; look back a little */
	for (size_t i = lo; i-- > 0 && lo - i <= 16;) {
		const struct sy_sym *y = &s->v[i];

		if (y->func == func && addr >= y->addr &&
		    (addr < y->addr + y->size || (y->size == 0 && addr == y->addr)))
			return y;
	}
	return NULL;
}

void sy_syms_free(struct sy_syms *s)
{
	free(s->v);
	free(s->names);
	memset(s, 0, sizeof(*s));
}

/* ---- one section's place ---------------------------------------------- */

/* The allocated section called name among sh[0, n) (names in str, strsize
 * bytes): its address and size as linked. */
static int find_section(const Elf64_Shdr *sh, unsigned n, const char *str,
			size_t strsize, const char *name, uint64_t *addr,
			uint64_t *size)
{
	size_t len = strlen(name) + 1;

	for (unsigned i = 0; i < n; i++) {
		if (sh[i].sh_name >= strsize || strsize - sh[i].sh_name < len ||
		    memcmp(str + sh[i].sh_name, name, len) ||
		    !(sh[i].sh_flags & SHF_ALLOC) || sh[i].sh_type == SHT_NOBITS)
			continue;
		*addr = sh[i].sh_addr;
		*size = sh[i].sh_size;
		return 0;
	}
	return -ENOENT;
}

static int check_ehdr(const Elf64_Ehdr *eh, uint64_t fsize)
{
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || !eh->e_shnum ||
	    eh->e_shstrndx >= eh->e_shnum ||
	    !in_file(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr),
		     fsize))
		return -ENOEXEC;
	return 0;
}

int sy_elf_section(const void *img, size_t size, const char *name,
		   uint64_t *addr, uint64_t *sz)
{
	const Elf64_Ehdr *eh = img;
	const Elf64_Shdr *sh, *ss;

	if ((uintptr_t)img % _Alignof(Elf64_Ehdr))
		return -EINVAL;
	if (size < sizeof(*eh) || check_ehdr(eh, size) ||
	    eh->e_shoff % _Alignof(Elf64_Shdr))
		return -ENOEXEC;
	sh = (const Elf64_Shdr *)((const uint8_t *)img + eh->e_shoff);
	ss = &sh[eh->e_shstrndx];
	if (ss->sh_type != SHT_STRTAB || !in_file(ss->sh_offset, ss->sh_size, size))
		return -ENOEXEC;
	return find_section(sh, eh->e_shnum, (const char *)img + ss->sh_offset,
			    ss->sh_size, name, addr, sz);
}

int sy_elf_section_load(const char *path, const char *name, uint64_t *addr,
			uint64_t *size)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	char *str = NULL;
	struct stat st;
	size_t shlen;
	int fd, r = -ENOEXEC;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    check_ehdr(&eh, (uint64_t)st.st_size))
		goto out;
	shlen = (size_t)eh.e_shnum * sizeof(*sh);
	sh = malloc(shlen);
	if (!sh) {
		r = -ENOMEM;
		goto out;
	}
	if (pread(fd, sh, shlen, (off_t)eh.e_shoff) != (ssize_t)shlen ||
	    sh[eh.e_shstrndx].sh_type != SHT_STRTAB ||
	    !in_file(sh[eh.e_shstrndx].sh_offset, sh[eh.e_shstrndx].sh_size,
		     (uint64_t)st.st_size) ||
	    sh[eh.e_shstrndx].sh_size > (1u << 20))	/* names, not data */
		goto out;
	str = malloc(sh[eh.e_shstrndx].sh_size + 1);
	if (!str) {
		r = -ENOMEM;
		goto out;
	}
	if (pread(fd, str, sh[eh.e_shstrndx].sh_size,
		  (off_t)sh[eh.e_shstrndx].sh_offset) !=
	    (ssize_t)sh[eh.e_shstrndx].sh_size)
		goto out;
	r = find_section(sh, eh.e_shnum, str, sh[eh.e_shstrndx].sh_size, name,
			 addr, size);
out:
	free(str);
	free(sh);
	close(fd);
	return r;
}
