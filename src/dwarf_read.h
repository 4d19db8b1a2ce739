/* SPDX-License-Identifier: MIT */
/*
 * dwarf_read.h - the reader under the DWARF line table (dwarf_line.c): a
 * bounds-checked cursor over bytes (here, inline), and from
 * dwarf_read.c an ELF file's sections, its string sections and DWARF 5's
 * forms. Shared by those two files only. The input is untrusted (see
 * dwarf_line.c): every read is checked against the bytes that hold it.
 * No state but the caller's: any thread, one struct dwarf at a time.
 */
#ifndef SY_DWARF_READ_H
#define SY_DWARF_READ_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* From the DWARF 5 standard (6.2 and 7.5); <dwarf.h> is not in libc. */
enum {
	DW_LNS_copy = 1,
	DW_LNS_advance_pc = 2,
	DW_LNS_advance_line = 3,
	DW_LNS_set_file = 4,
	DW_LNS_set_column = 5,
	DW_LNS_negate_stmt = 6,
	DW_LNS_set_basic_block = 7,
	DW_LNS_const_add_pc = 8,
	DW_LNS_fixed_advance_pc = 9,
	DW_LNS_set_prologue_end = 10,
	DW_LNS_set_epilogue_begin = 11,
	DW_LNS_set_isa = 12,

	DW_LNE_end_sequence = 1,
	DW_LNE_set_address = 2,

	DW_LNCT_path = 1,
	DW_LNCT_directory_index = 2,

	DW_FORM_data2 = 0x05,
	DW_FORM_data4 = 0x06,
	DW_FORM_data8 = 0x07,
	DW_FORM_string = 0x08,
	DW_FORM_block = 0x09,
	DW_FORM_data1 = 0x0b,
	DW_FORM_strp = 0x0e,
	DW_FORM_udata = 0x0f,
	DW_FORM_data16 = 0x1e,
	DW_FORM_line_strp = 0x1f,
};

/* ---- reading bytes --------------------------------------------------- */

/*
 * A cursor over [p, end). A read past the end marks it bad and moves it to
 * the end, so loops of the form "while (r.p < r.end)" stop by themselves;
 * callers check ->bad once after a group of reads.
 */
struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static inline size_t rd_left(const struct rd *r)
{
	return (size_t)(r->end - r->p);
}

static inline void rd_fail(struct rd *r)
{
	r->bad = true;
	r->p = r->end;
}

static inline bool rd_has(struct rd *r, uint64_t n)
{
	if (rd_left(r) >= n)
		return true;
	rd_fail(r);
	return false;
}

/* A little-endian unsigned integer of n <= 8 bytes. The data has no
 * alignment, so it is read byte by byte. */
static inline uint64_t rd_uint(struct rd *r, unsigned n)
{
	uint64_t v = 0;

	if (!rd_has(r, n))
		return 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static inline uint8_t rd_u8(struct rd *r)
{
	return (uint8_t)rd_uint(r, 1);
}

static inline void rd_skip(struct rd *r, uint64_t n)
{
	if (rd_has(r, n))
		r->p += n;
}

/* LEB128. Bits beyond 64 are dropped rather than shifted (which would be
 * undefined): only a corrupt file has them, and it gets a wrong value,
 * which every user of the value bounds-checks anyway. */
static inline uint64_t rd_uleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (r->p < r->end) {
		uint8_t b = *r->p++;

		if (shift < 64) {
			v |= (uint64_t)(b & 0x7f) << shift;
			shift += 7;
		}
		if (!(b & 0x80))
			return v;
	}
	rd_fail(r);
	return 0;
}

/* Signed LEB128, as the two's complement bits: the registers it adjusts
 * are unsigned and wrap. */
static inline uint64_t rd_sleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (r->p >= r->end) {
			rd_fail(r);
			return 0;
		}
		b = *r->p++;
		if (shift < 64) {
			v |= (uint64_t)(b & 0x7f) << shift;
			shift += 7;
		}
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return v;
}

/* An inline NUL-terminated string; the NUL must be inside the cursor. */
static inline const char *rd_cstr(struct rd *r)
{
	const uint8_t *nul;
	const char *s;

	nul = r->p < r->end ? memchr(r->p, 0, rd_left(r)) : NULL;
	if (!nul) {
		rd_fail(r);
		return NULL;
	}
	s = (const char *)r->p;
	r->p = nul + 1;
	return s;
}

/* ---- the ELF file: sections (dwarf_read.c) --------------------------- */

/*
 * Where the bytes come from: an image in memory, or a file descriptor.
 * Both hand out [off, off + len) of the file after the same bounds check,
 * so the parser above them cannot tell them apart.
 */
struct src {
	const uint8_t *img;	/* the image, or NULL: pread() fd */
	int fd;
	uint64_t size;
};

/* Point *p at [off, off + len) of the file. From an fd that is a new
 * buffer, *buf, which the caller frees; from an image *buf is NULL.
 * 0, -ENOEXEC (outside the file), -ENOMEM, or pread()'s error. */
__attribute__((visibility("hidden")))
int sy_dw_src_get(const struct src *s, uint64_t off, uint64_t len,
		  const uint8_t **p, void **buf);

enum { SEC_LINE, SEC_LINE_STR, SEC_STR, NSEC };

struct sec {
	uint64_t off, size;
	bool present;		/* in the file, uncompressed */
};

/* Find our sections by name through the section headers: 0, -ENOENT (no
 * section headers), -ENOEXEC (not a valid ELF64 little-endian file, or a
 * section outside it), -ENOMEM or a read error. */
__attribute__((visibility("hidden")))
int sy_dw_locate(const struct src *s, struct sec sec[NSEC]);

/* ---- string sections and forms (dwarf_read.c) ------------------------- */

/*
 * A string section (.debug_str, .debug_line_str), read on first use: gcc
 * only refers to .debug_line_str, and .debug_str can be large.
 */
struct strtab {
	const char *p;
	uint64_t lim;		/* a string at an offset below lim ends
				 * inside the section: one check per string,
				 * not one scan */
	bool loaded;
	void *buf;
};

/* One parse of one file: its sections, and its string sections as read
 * (the caller frees each str[k].buf). */
struct dwarf {
	const struct src *src;
	struct sec sec[NSEC];
	struct strtab str[NSEC];	/* SEC_LINE_STR and SEC_STR used */
};

/* The string at offset off of string section k (SEC_LINE_STR, SEC_STR),
 * loaded on first use: 0, -ENOEXEC (not a string of the section), or
 * sy_dw_src_get()'s error. */
__attribute__((visibility("hidden")))
int sy_dw_strtab_at(struct dwarf *d, int k, uint64_t off, const char **s);

/* One field of a DWARF 5 directory or file entry, in form `form` (offsz:
 * 4 or 8, the unit's DWARF format): a string in *s (NULL for other
 * forms), a constant in *v. 0 or -ENOEXEC (malformed, or a form it does
 * not know), or sy_dw_strtab_at()'s error. */
__attribute__((visibility("hidden")))
int sy_dw_read_form(struct rd *r, struct dwarf *d, unsigned offsz,
		    uint64_t form, const char **s, uint64_t *v);

#endif /* SY_DWARF_READ_H */
