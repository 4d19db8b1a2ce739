/* SPDX-License-Identifier: MIT */
/*
 * test_dwarf_line.c - the DWARF line table reader (src/dwarf_line.c).
 *
 * First on this executable's own file: the line of a function of this
 * test is found at its address. Then on small hand-made line tables, for
 * what a compiler's output may not show (DWARF 2 and 64-bit DWARF 5
 * headers, each opcode kind, discarded sequences, adjacent sequences,
 * malformed headers), read both from memory and from a file. Then on
 * malformed input: every truncation of the file and of its .debug_line at
 * a sample of lengths, and thousands of random corruptions. Each must give
 * a result or an error, never a crash (ASan and UBSan check the bounds in
 * a sanitizer build).
 *
 * Optional arguments: more ELF files to parse and time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../src/sy_dwarf.h"

#include "sy_test.h"

/*
 * The probe: its body's line is recorded when it runs. The lookup uses
 * the function's own address, and that address + 1: both are inside the
 * function whatever the compiler makes of the body (a label's address
 * would not do: at -O2 the compiler may place it anywhere). The first
 * instruction may map to the line of the opening brace or of the
 * signature, hence the +-3 in the check.
 */
volatile int dwarf_probe_line;

__attribute__((noinline, used)) int dwarf_probe(int x)
{
	dwarf_probe_line = __LINE__;
	return x * 3 + 1;
}

static int (*volatile probe_ptr)(int) = dwarf_probe;
static volatile uintptr_t lookup_sink;

/* xorshift64: the same corruptions on every run */
static uint64_t rnd_state = 0x243f6a8885a308d3ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int first_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uintptr_t *)arg = info->dlpi_addr;
	return 1;	/* the first entry is the executable */
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* What any successful parse must give: sorted rows naming real files. */
static int well_formed(const struct sy_lines *l)
{
	for (size_t i = 0; i < l->n; i++) {
		if (i && l->rows[i].addr < l->rows[i - 1].addr)
			return 0;
		if (l->rows[i].file >= l->nfiles)
			return 0;
	}
	for (size_t i = 0; i < l->nfiles; i++)
		if (!l->files[i])
			return 0;
	return 1;
}

/* The header of a section of a (trusted) ELF image, by name, or NULL. */
static const Elf64_Shdr *find_section(const uint8_t *img, const char *name)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
	const char *names = (const char *)img + sh[eh->e_shstrndx].sh_offset;

	for (unsigned i = 0; i < eh->e_shnum; i++)
		if (!strcmp(names + sh[i].sh_name, name))
			return &sh[i];
	return NULL;
}

/* ---- hand-made ELF files --------------------------------------------- */

/*
 * An ELF image with sections .shstrtab, .debug_line (line, flags) and,
 * when lstr is given, .debug_line_str. malloc() aligns it.
 */
static uint8_t *mk_elf(const void *line, size_t line_len, uint64_t flags,
		       const void *lstr, size_t lstr_len, size_t *size)
{
	static const char names[] = "\0.shstrtab\0.debug_line\0.debug_line_str";
	size_t off = sizeof(Elf64_Ehdr), shoff, nsh = lstr ? 4 : 3;
	uint8_t *img = calloc(1, 4096 + line_len + lstr_len);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Shdr sh[4];

	memset(sh, 0, sizeof(sh));
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = (uint16_t)nsh;
	eh->e_shstrndx = 1;

	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_STRTAB,
			      .sh_offset = off, .sh_size = sizeof(names) };
	memcpy(img + off, names, sizeof(names));
	off += sizeof(names);
	sh[2] = (Elf64_Shdr){ .sh_name = 11, .sh_type = SHT_PROGBITS,
			      .sh_flags = flags, .sh_offset = off,
			      .sh_size = line_len };
	memcpy(img + off, line, line_len);
	off += line_len;
	if (lstr) {
		sh[3] = (Elf64_Shdr){ .sh_name = 23, .sh_type = SHT_PROGBITS,
				      .sh_offset = off, .sh_size = lstr_len };
		memcpy(img + off, lstr, lstr_len);
		off += lstr_len;
	}
	shoff = (off + 7) & ~(size_t)7;
	eh->e_shoff = shoff;
	memcpy(img + shoff, sh, nsh * sizeof(Elf64_Shdr));
	*size = shoff + nsh * sizeof(Elf64_Shdr);
	return img;
}

/* A byte buffer to assemble line programs in. */
struct buf {
	uint8_t b[1024];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put_u(struct buf *b, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		b->b[b->n++] = (uint8_t)(v >> (8 * i));
}

#define PUT(b, ...)                                                          \
	do {                                                                 \
		static const uint8_t bytes_[] = { __VA_ARGS__ };             \
		put(b, bytes_, sizeof(bytes_));                              \
	} while (0)

static void set_address(struct buf *b, uint64_t a)
{
	PUT(b, 0x00, 9, 0x02);
	put_u(b, a, 8);
}

/*
 * Unit A, DWARF 2: 32-bit, opcode_base 10 (so 10..12 are special
 * opcodes), files numbered from 1, directories from 1.
 */
static void unit_v2(struct buf *b)
{
	size_t len_at = b->n, hdr_at;

	put_u(b, 0, 4);				/* unit_length, below */
	put_u(b, 2, 2);				/* version */
	hdr_at = b->n;
	put_u(b, 0, 4);				/* header_length, below */
	PUT(b, 1, 1, (uint8_t)-5, 14, 10);	/* min_inst .. opcode_base */
	PUT(b, 0, 1, 1, 1, 1, 0, 0, 0, 1);	/* standard_opcode_lengths */
	PUT(b, 'i', 'n', 'c', 0, 0);		/* include_directories */
	PUT(b, 'a', '.', 'c', 0, 1, 0, 0);	/* file 1: inc/a.c */
	PUT(b, '/', 'a', 'b', 's', '/', 'b', '.', 'h', 0, 0, 0, 0);
	PUT(b, 0);
	{
		uint32_t h = (uint32_t)(b->n - hdr_at - 4);

		memcpy(b->b + hdr_at, &h, 4);
	}
	/* sequence 1, 0x1000..0x1010 */
	set_address(b, 0x1000);
	PUT(b, 0x03, 9);		/* advance_line 9: line 10 */
	PUT(b, 0x01);			/* copy: 0x1000 line 10 */
	PUT(b, 10 + 6 + 14 * 2);	/* special: +2, +1: 0x1002 line 11 */
	PUT(b, 0x04, 2);		/* set_file 2 */
	PUT(b, 0x02, 4);		/* advance_pc 4 */
	PUT(b, 0x01);			/* copy: 0x1006 line 11 b.h */
	PUT(b, 0x02, 10);		/* advance_pc 10 */
	PUT(b, 0x00, 1, 0x01);		/* end_sequence at 0x1010 */
	/* sequence 2, discarded by the linker: at address 0 */
	set_address(b, 0);
	PUT(b, 0x03, 50, 0x01, 0x02, 0x20, 0x00, 1, 0x01);
	/* sequence 3, right after sequence 1 */
	set_address(b, 0x1010);
	PUT(b, 0x01);			/* 0x1010 line 1 a.c */
	PUT(b, 0x08);			/* const_add_pc: +(255-10)/14 = 17 */
	PUT(b, 0x09, 5, 0);		/* fixed_advance_pc 5: 0x1026 */
	PUT(b, 0x00, 3, 0x80, 0xaa, 0xbb);	/* unknown extended op */
	PUT(b, 0x00, 2, 0x04, 5);	/* set_discriminator */
	PUT(b, 0x05, 7, 0x06, 0x07);	/* set_column, negate_stmt, bb */
	PUT(b, 0x03, 0x7f);		/* advance_line -1 ... */
	PUT(b, 0x03, 1);		/* ... and back */
	PUT(b, 0x01);			/* 0x1026 line 1 */
	PUT(b, 0x02, 2, 0x00, 1, 0x01);	/* end_sequence at 0x1028 */
	/* a sequence never ended: dropped */
	set_address(b, 0x3000);
	PUT(b, 0x01);
	{
		uint32_t l = (uint32_t)(b->n - len_at - 4);

		memcpy(b->b + len_at, &l, 4);
	}
}

/* .debug_line_str of unit B */
static const char lstr_b[] = "/comp\0sub";

/*
 * Unit B, DWARF 5 in the 64-bit format, opcode_base 14 (opcode 13 is
 * unknown, with 2 operands), directory names in .debug_line_str, file
 * names inline with an MD5 (data16) and a vendor block to skip.
 */
static void unit_v5_64(struct buf *b)
{
	size_t len_at, hdr_at;

	put_u(b, 0xffffffff, 4);
	len_at = b->n;
	put_u(b, 0, 8);				/* unit_length, below */
	put_u(b, 5, 2);				/* version */
	PUT(b, 8, 0);				/* address, segment size */
	hdr_at = b->n;
	put_u(b, 0, 8);				/* header_length, below */
	PUT(b, 1, 1, 1, (uint8_t)-5, 14, 14);	/* min_inst .. opcode_base */
	PUT(b, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 2);
	PUT(b, 1, 1, 0x1f);			/* dirs: path line_strp */
	PUT(b, 2);				/* 2 directories */
	put_u(b, 0, 8);				/* "/comp" */
	put_u(b, 6, 8);				/* "sub" */
	PUT(b, 4, 1, 0x08, 2, 0x0f, 5, 0x1e, 0x81, 0x40, 0x09);
	PUT(b, 3);				/* 3 files */
	PUT(b, '/', 'a', 'b', 's', '/', 'b', '.', 'h', 0, 0);
	PUT(b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0xee, 0xee);
	PUT(b, 'x', '.', 'c', 0, 1);
	PUT(b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
	PUT(b, 'z', '.', 'c', 0, 0);
	PUT(b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xee);
	{
		uint64_t h = b->n - hdr_at - 8;

		memcpy(b->b + hdr_at, &h, 8);
	}
	set_address(b, 0x2000);
	PUT(b, 0x01);			/* 0x2000 line 1, file 1: x.c */
	PUT(b, 0x04, 0);		/* set_file 0: /abs/b.h */
	PUT(b, 0x03, 41);		/* line 42 */
	PUT(b, 0x0d, 0x81, 0x01, 5);	/* unknown standard opcode */
	PUT(b, 14 + 5 + 14 * 3);	/* special: +3, +0: 0x2003 line 42 */
	PUT(b, 0x04, 2, 0x02, 5, 0x01);	/* z.c, 0x2008 line 42 */
	PUT(b, 0x02, 8, 0x00, 1, 0x01);	/* end_sequence at 0x2010 */
	{
		uint64_t l = b->n - len_at - 8;

		memcpy(b->b + len_at, &l, 8);
	}
}

static const char *name_at(const struct sy_lines *l, uintptr_t addr,
			   uint32_t *line)
{
	const struct sy_line_row *r = sy_lines_find(l, addr);

	*line = r ? r->line : 0;
	return r ? l->files[r->file] : NULL;
}

#define CHECK_AT(l, addr, want_line, want_file)                              \
	do {                                                                 \
		uint32_t line_;                                              \
		const char *f_ = name_at(l, addr, &line_);                   \
		CHECK(f_ && line_ == (want_line) && !strcmp(f_, want_file)); \
	} while (0)

static void test_handmade(void)
{
	const uintptr_t bias = 0x10000;
	struct buf b = { .n = 0 };
	struct sy_lines l;
	uint8_t *img;
	size_t size;

	unit_v2(&b);
	unit_v5_64(&b);
	img = mk_elf(b.b, b.n, 0, lstr_b, sizeof(lstr_b), &size);
	CHECK(sy_lines_parse(img, size, bias, &l) == 0);
	CHECK(well_formed(&l));
	CHECK_AT(&l, bias + 0x1000, 10, "inc/a.c");
	CHECK_AT(&l, bias + 0x1001, 10, "inc/a.c");
	CHECK_AT(&l, bias + 0x1002, 11, "inc/a.c");
	CHECK_AT(&l, bias + 0x1005, 11, "inc/a.c");
	CHECK_AT(&l, bias + 0x1006, 11, "/abs/b.h");
	CHECK_AT(&l, bias + 0x100f, 11, "/abs/b.h");
	/* sequence 1 ends where sequence 3 begins */
	CHECK_AT(&l, bias + 0x1010, 1, "inc/a.c");
	CHECK_AT(&l, bias + 0x1025, 1, "inc/a.c");
	CHECK_AT(&l, bias + 0x1027, 1, "inc/a.c");
	CHECK(!sy_lines_find(&l, bias + 0x1028));
	CHECK(!sy_lines_find(&l, bias + 0xfff));
	/* the discarded sequence at 0 and the unended one left nothing */
	CHECK(!sy_lines_find(&l, bias));
	CHECK(!sy_lines_find(&l, bias + 0x10));
	CHECK(!sy_lines_find(&l, bias + 0x3000));
	CHECK(!sy_lines_find(&l, 0));
	/* DWARF 5: names joined to directories, the relative one to the
	 * compilation directory */
	CHECK_AT(&l, bias + 0x2000, 1, "/comp/sub/x.c");
	CHECK_AT(&l, bias + 0x2002, 1, "/comp/sub/x.c");
	CHECK_AT(&l, bias + 0x2003, 42, "/abs/b.h");
	CHECK_AT(&l, bias + 0x2007, 42, "/abs/b.h");
	CHECK_AT(&l, bias + 0x2008, 42, "/comp/z.c");
	CHECK(!sy_lines_find(&l, bias + 0x2010));
	CHECK(!sy_lines_find(&l, UINTPTR_MAX));
	/* /abs/b.h of both units is one name */
	CHECK(l.nfiles == 4);
	sy_lines_free(&l);
	free(img);

	/* A compressed .debug_line counts as none. */
	img = mk_elf(b.b, b.n, SHF_COMPRESSED, lstr_b, sizeof(lstr_b), &size);
	CHECK(sy_lines_parse(img, size, 0, &l) == -ENOENT);
	free(img);

	/* Without .debug_line_str unit B's directories are unreadable. */
	img = mk_elf(b.b, b.n, 0, NULL, 0, &size);
	CHECK(sy_lines_parse(img, size, 0, &l) == -ENOEXEC);
	CHECK(l.n == 0 && l.rows == NULL && l.nfiles == 0);
	free(img);

	/* No .debug_line at all. */
	img = mk_elf(b.b, b.n, 0, NULL, 0, &size);
	memcpy(img + sizeof(Elf64_Ehdr) + 11, ".debug_lime", 11);
	CHECK(sy_lines_parse(img, size, 0, &l) == -ENOENT);
	free(img);

	/* Malformed headers: patch unit A (at offset 0), expect -ENOEXEC. */
	static const struct {
		size_t at;
		uint8_t v;
	} bad[] = {
		{ 4, 6 },	/* version 6 */
		{ 4, 1 },	/* version 1 */
		{ 13, 0 },	/* line_range 0 */
		{ 14, 0 },	/* opcode_base 0 */
		{ 1, 0x10 },	/* unit_length past the section */
		{ 0, 0xf5 },	/* reserved unit_length 0xfffffff5 */
		{ 6, 0xff },	/* header_length past the unit */
		{ 24, 'x' },	/* include_directories not ended */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct buf c = b;

		c.b[bad[i].at] = bad[i].v;
		if (bad[i].v == 0xf5)
			c.b[1] = c.b[2] = c.b[3] = 0xff;
		if (bad[i].v == 'x') {
			/* no NUL up to the end of the header, which is
			 * header_length (at 6) after its field */
			memset(c.b + 24, 'x', 10 + c.b[6] - 24);
		}
		img = mk_elf(c.b, c.n, 0, lstr_b, sizeof(lstr_b), &size);
		int r = sy_lines_parse(img, size, 0, &l);

		if (r != -ENOEXEC)
			fprintf(stderr, "bad[%zu]: %d\n", i, r);
		CHECK(r == -ENOEXEC);
		free(img);
	}

	/* Unit B alone with an unknown form (strx1) or an absurd count. */
	{
		struct buf c = { .n = 0 };
		size_t fmt;

		unit_v5_64(&c);
		/* the file format: 4, 1, 0x08, ... follows 2 dir offsets */
		fmt = 12 + 2 + 2 + 8 + 6 + 13 + 3 + 1 + 16;
		CHECK(c.b[fmt] == 4 && c.b[fmt + 2] == 0x08);
		c.b[fmt + 2] = 0x25;
		img = mk_elf(c.b, c.n, 0, lstr_b, sizeof(lstr_b), &size);
		CHECK(sy_lines_parse(img, size, 0, &l) == -ENOEXEC);
		free(img);
		c.b[fmt + 2] = 0x08;
		c.b[fmt + 10] = 0xff;	/* file count 0xff */
		img = mk_elf(c.b, c.n, 0, lstr_b, sizeof(lstr_b), &size);
		CHECK(sy_lines_parse(img, size, 0, &l) == -ENOEXEC);
		free(img);
		c.b[fmt + 10] = 3;
		img = mk_elf(c.b, c.n, 0, lstr_b, sizeof(lstr_b), &size);
		CHECK(sy_lines_parse(img, size, 0, &l) == 0);
		CHECK(l.n == 4);
		sy_lines_free(&l);
		free(img);
	}
}

/*
 * sy_lines_load() reads the file with pread() where sy_lines_parse() has
 * it in memory: both must agree on every truncation of a hand-made file
 * and on corruptions of it.
 */
static void test_load_matches_parse(void)
{
	struct buf b = { .n = 0 };
	char path[] = "/tmp/test_dwarf_line.XXXXXX";
	uint8_t *img;
	size_t size;
	int fd, same = 1, ok = 0;

	unit_v2(&b);
	unit_v5_64(&b);
	img = mk_elf(b.b, b.n, 0, lstr_b, sizeof(lstr_b), &size);
	fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0) {
		free(img);
		return;
	}
	for (size_t i = 0; i < 2 * size; i++) {
		struct sy_lines l, m;
		size_t len = i < size ? i : size;
		size_t at = (size_t)(rnd() % size);
		uint8_t was = img[at];
		int r, q;

		if (i >= size)		/* then corrupt a byte */
			img[at] = (uint8_t)(rnd() >> 32);
		if (pwrite(fd, img, len, 0) != (ssize_t)len ||
		    ftruncate(fd, (off_t)len)) {
			CHECK(0);
			break;
		}
		r = sy_lines_parse(img, len, 0, &l);
		q = sy_lines_load(path, 0, &m);
		ok += !r;
		if (r != q || l.n != m.n || l.nfiles != m.nfiles ||
		    (l.n && memcmp(l.rows, m.rows, l.n * sizeof(*l.rows))))
			same = 0;
		for (size_t j = 0; same && j < l.nfiles; j++)
			same = !strcmp(l.files[j], m.files[j]);
		sy_lines_free(&l);
		sy_lines_free(&m);
		img[at] = was;
	}
	CHECK(same);
	CHECK(ok > 0);
	close(fd);
	unlink(path);
	free(img);
}

/* ---- this executable ------------------------------------------------- */

int main(int argc, char **argv)
{
	struct sy_lines l, l2;
	struct stat st;
	uintptr_t bias = 0, probe = (uintptr_t)dwarf_probe;
	uint64_t *img;
	const Elf64_Shdr *dl;
	size_t size;
	int fd, ok = 0, refused = 0, r;
	double t;

	CHECK(probe_ptr(1) == 4 && dwarf_probe_line > 0);
	dl_iterate_phdr(first_bias, &bias);

	fd = open("/proc/self/exe", O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		perror("/proc/self/exe");
		return 1;
	}
	size = (size_t)st.st_size;
	img = malloc(size + 8);		/* malloc() aligns to 8 at least */
	if (!img || read(fd, img, size) != (ssize_t)size) {
		perror("read");
		return 1;
	}
	close(fd);
	dl = find_section((const uint8_t *)img, ".debug_line");
	CHECK(dl != NULL);
	if (!dl)
		return 1;
	{
		const uint8_t *u = (const uint8_t *)img + dl->sh_offset;

		printf("dwarf_line: this test's .debug_line: %zu bytes, "
		       "first unit DWARF %u\n", (size_t)dl->sh_size,
		       u[4] | u[5] << 8);
	}

	/* The probe's line, from the image and from the file. */
	t = now();
	r = sy_lines_parse(img, size, bias, &l);
	t = now() - t;
	CHECK(r == 0);
	printf("dwarf_line: parsed this test (%zu bytes) in %.3f ms: "
	       "%zu rows, %zu files\n", size, t * 1e3, l.n, l.nfiles);
	CHECK(well_formed(&l));
	for (uintptr_t off = 0; off < 2; off++) {
		const struct sy_line_row *row = sy_lines_find(&l, probe + off);

		CHECK(row != NULL);
		if (!row)
			continue;
		printf("dwarf_line: dwarf_probe+%lu: %s:%u (recorded %d)\n",
		       (unsigned long)off, l.files[row->file], row->line,
		       dwarf_probe_line);
		CHECK(ends_with(l.files[row->file], "test_dwarf_line.c"));
		CHECK(row->line + 3 >= (uint32_t)dwarf_probe_line &&
		      row->line <= (uint32_t)dwarf_probe_line + 3);
	}
	{
		const struct sy_line_row *row;

		row = sy_lines_find(&l, (uintptr_t)main);
		CHECK(row &&
		      ends_with(l.files[row->file], "test_dwarf_line.c"));
	}
	CHECK(l.n && !l.rows[l.n - 1].line);	/* ends with an end row */
	CHECK(!sy_lines_find(&l, 0));
	CHECK(!sy_lines_find(&l, UINTPTR_MAX));

	t = now();
	r = sy_lines_load("/proc/self/exe", bias, &l2);
	t = now() - t;
	CHECK(r == 0);
	printf("dwarf_line: loaded this test from its file in %.3f ms\n",
	       t * 1e3);
	CHECK(l2.n == l.n && l2.nfiles == l.nfiles &&
	      !memcmp(l2.rows, l.rows, l.n * sizeof(*l.rows)));
	for (size_t i = 0; !r && i < l.nfiles && i < l2.nfiles; i++)
		CHECK(!strcmp(l.files[i], l2.files[i]));
	sy_lines_free(&l2);

	/* lookups */
	{
		size_t n = 1000000;

		t = now();
		for (size_t i = 0; i < n; i++) {
			const struct sy_line_row *row;

			row = sy_lines_find(&l, probe + (i & 63));
			lookup_sink += row ? row->line : 0;
		}
		t = now() - t;
		printf("dwarf_line: %.1f ns per lookup\n", t * 1e9 / n);
	}
	sy_lines_free(&l);

	/* Errors. */
	CHECK(sy_lines_load("/nonexistent/file", 0, &l) == -ENOENT);
	CHECK(sy_lines_load("/", 0, &l) == -ENOEXEC);
	CHECK(sy_lines_load("/dev/null", 0, &l) == -ENOEXEC);
	CHECK(sy_lines_parse(NULL, 0, 0, &l) == -EINVAL);
	CHECK(sy_lines_parse(img, 0, 0, &l) == -ENOEXEC);
	{
		static uint64_t junk[16] = { 0x6f77202c6f6c6c65ull };

		CHECK(sy_lines_parse(junk, sizeof(junk), 0, &l) == -ENOEXEC);
	}

	test_handmade();
	test_load_matches_parse();

	/* (a) Every truncation of the file, sampled. */
	for (size_t len = 0; len < size; len += 1 + len / 64) {
		r = sy_lines_parse(img, len, bias, &l);
		CHECK(r <= 0);
		r ? refused++ : ok++;
		CHECK(r || well_formed(&l));
		sy_lines_free(&l);
	}
	printf("dwarf_line: file truncations: %d parsed, %d refused\n", ok,
	       refused);
	CHECK(refused > 0);

	/* (b) Every truncation of .debug_line alone, sampled: cuts inside
	 * units, headers and programs. */
	{
		uint64_t *copy = malloc(size + 8);
		Elf64_Shdr *sh;
		size_t full = dl->sh_size;

		memcpy(copy, img, size);
		sh = (Elf64_Shdr *)((uint8_t *)copy +
				    ((const uint8_t *)dl - (uint8_t *)img));
		ok = refused = 0;
		for (size_t len = 0; len < full; len += 1 + len / 256) {
			sh->sh_size = len;
			r = sy_lines_parse(copy, size, bias, &l);
			CHECK(r <= 0);
			r ? refused++ : ok++;
			CHECK(r || well_formed(&l));
			sy_lines_free(&l);
		}
		printf("dwarf_line: .debug_line truncations: %d parsed, "
		       "%d refused\n", ok, refused);
		CHECK(ok > 0 && refused > 0);	/* length 0 parses */
		free(copy);
	}

	/* (c) Random corruption, 4 bytes at a time: inside .debug_line and
	 * in the first 4 KiB (ELF and section headers are there in the
	 * hand-made files, program headers here). */
	{
		uint8_t *c = (uint8_t *)img;
		size_t head = size < 4096 ? size : 4096;
		int okd[2] = { 0, 0 }, refd[2] = { 0, 0 };

		t = now();
		for (int i = 0; i < 3000; i++) {
			size_t at[4];
			uint8_t was[4];

			for (int k = 0; k < 4; k++) {
				uint64_t x = rnd();

				if (i & 1)
					at[k] = x % head;
				else
					at[k] = dl->sh_offset + x % dl->sh_size;
				was[k] = c[at[k]];
				c[at[k]] = (uint8_t)(x >> 32);
			}
			r = sy_lines_parse(img, size, bias, &l);
			CHECK(r <= 0);
			r ? refd[i & 1]++ : okd[i & 1]++;
			if (!r) {
				CHECK(well_formed(&l));
				(void)sy_lines_find(&l, probe);
			}
			sy_lines_free(&l);
			for (int k = 4; k-- > 0;)
				c[at[k]] = was[k];
		}
		t = now() - t;
		printf("dwarf_line: corruptions in .debug_line: %d parsed, "
		       "%d refused; in the first 4 KiB: %d parsed, %d refused "
		       "(%.1f ms)\n", okd[0], refd[0], okd[1], refd[1],
		       t * 1e3);
	}
	/* section headers: in this file they are past the first 4 KiB */
	{
		const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
		uint8_t *c = (uint8_t *)img;
		size_t span = (size_t)eh->e_shnum * sizeof(Elf64_Shdr);

		ok = refused = 0;
		for (int i = 0; i < 1000; i++) {
			size_t at[4];
			uint8_t was[4];

			for (int k = 0; k < 4; k++) {
				uint64_t x = rnd();

				at[k] = eh->e_shoff + x % span;
				was[k] = c[at[k]];
				c[at[k]] = (uint8_t)(x >> 32);
			}
			r = sy_lines_parse(img, size, bias, &l);
			CHECK(r <= 0);
			r ? refused++ : ok++;
			CHECK(r || well_formed(&l));
			sy_lines_free(&l);
			for (int k = 4; k-- > 0;)
				c[at[k]] = was[k];
		}
		printf("dwarf_line: corruptions in the section headers: "
		       "%d parsed, %d refused\n", ok, refused);
	}
	free(img);

	/* Other files to time. */
	for (int i = 1; i < argc; i++) {
		t = now();
		r = sy_lines_load(argv[i], 0, &l);
		t = now() - t;
		CHECK(r == 0 && well_formed(&l));
		printf("dwarf_line: %s: %d, %zu rows, %zu files in %.3f ms\n",
		       argv[i], r, l.n, l.nfiles, t * 1e3);
		sy_lines_free(&l);
	}

	return sy_test_done("dwarf_line");
}
