/* SPDX-License-Identifier: MIT */
/*
 * dwarf_line.c - "file:line" of a code address, from the DWARF line table
 * (.debug_line) of an ELF64 little-endian file: versions 2 to 5, the
 * 32- and 64-bit DWARF formats, as gcc and clang emit them.
 *
 * The line program of each unit is run once, its rows kept in one table
 * sorted by address, and a lookup is a binary search in it. The bytes,
 * the sections and the string sections come from dwarf_read.c.
 *
 * The file is untrusted input (it may be truncated, corrupt, or not what
 * the mapping was made from): every length, offset and count is checked
 * against the bytes that hold it before use, every loop consumes input on
 * each turn, and a malformed file gives -ENOEXEC, never a crash. Time and
 * memory are bounded by the size of the file: a row costs at least one
 * byte of line program, a table entry at least one byte of header, and
 * the bytes of file names built are capped by a budget.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dwarf_read.h"
#include "sy_dwarf.h"

/* ---- building the result --------------------------------------------- */

/* The name of a file of a unit, resolved on the first row that uses it. */
struct ufile {
	const char *name;
	uint64_t dir;
	uint32_t global;	/* index in files[], or UINT32_MAX */
};

/* A unit's header, as far as the line program needs it. */
struct unit {
	unsigned version;
	unsigned offsz;		/* 4 or 8: 32- or 64-bit DWARF */
	unsigned min_inst;
	int line_base;
	unsigned line_range;
	unsigned opcode_base;
	const uint8_t *std_len;	/* [opcode_base - 1] operand counts */
	const char **dirs;
	size_t ndirs, dirs_cap;
	struct ufile *files;
	size_t nfiles, files_cap;
};

struct build {
	struct sy_lines *out;
	size_t rows_cap, files_cap;
	uint32_t *slots;	/* open hash on files[]: index + 1, 0 free */
	size_t nslots;
	uint64_t budget;	/* bytes of file names still allowed */
	uint32_t unknown;	/* index of "?", or UINT32_MAX */
};

/* Make room for need elements of v; NULL (v untouched) when out of memory. */
static void *grow(void *v, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16;

	if (need <= *cap)
		return v;
	while (n < need) {
		if (n > SIZE_MAX / 2 / elem)
			return NULL;
		n *= 2;
	}
	v = realloc(v, n * elem);
	if (v)
		*cap = n;
	return v;
}

static size_t hash_name(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ull;
	return (size_t)h;
}

/*
 * Probes of the hash before giving up. Names made to collide (the file is
 * untrusted) would otherwise make every insertion walk one long run; past
 * this many, a name is just not entered, and so not deduplicated.
 */
#define MAX_PROBES 32

/* The index in files[] of name, which is malloc()ed and now ours: units
 * share headers (stdio.h, ...), each is kept once. */
static int intern(struct build *b, char *name, uint32_t *idx)
{
	struct sy_lines *o = b->out;
	size_t h, mask;
	char **files;
	int i;

	if (o->nfiles >= UINT32_MAX - 1)
		goto fail_exec;
	/* kept at most half full, so runs stay short */
	if ((o->nfiles + 1) * 2 > b->nslots) {
		size_t n = b->nslots ? b->nslots * 2 : 64;
		uint32_t *slots = calloc(n, sizeof(*slots));

		if (!slots)
			goto fail_nomem;
		for (size_t k = 0; k < o->nfiles; k++) {
			h = hash_name(o->files[k]) & (n - 1);
			for (i = 0; i < MAX_PROBES && slots[h]; i++)
				h = (h + 1) & (n - 1);
			if (i < MAX_PROBES)
				slots[h] = (uint32_t)k + 1;
		}
		free(b->slots);
		b->slots = slots;
		b->nslots = n;
	}
	mask = b->nslots - 1;
	h = hash_name(name) & mask;
	for (i = 0; i < MAX_PROBES && b->slots[h]; i++) {
		if (!strcmp(o->files[b->slots[h] - 1], name)) {
			free(name);
			*idx = b->slots[h] - 1;
			return 0;
		}
		h = (h + 1) & mask;
	}
	files = grow(o->files, &b->files_cap, o->nfiles + 1, sizeof(*files));
	if (!files)
		goto fail_nomem;
	o->files = files;
	o->files[o->nfiles] = name;
	if (i < MAX_PROBES)
		b->slots[h] = (uint32_t)o->nfiles + 1;
	*idx = (uint32_t)o->nfiles++;
	return 0;
fail_exec:
	free(name);
	return -ENOEXEC;
fail_nomem:
	free(name);
	return -ENOMEM;
}

/*
 * The files[] index for file f (0-based) of the unit. A relative name is
 * joined to its directory, and in DWARF 5 a relative directory to the
 * compilation directory (directory 0). In DWARF 2-4 the compilation
 * directory is only in .debug_info, so such names stay relative.
 *
 * An index outside the unit's table is given the name "?" rather than
 * failing the whole file: the addresses are still right.
 */
static int file_index(struct build *b, struct unit *u, uint64_t f,
		      uint32_t *idx)
{
	const char *part[3];
	size_t len[3], total = 0;
	int n = 0, err;
	char *name, *w;

	if (f >= u->nfiles) {
		if (b->unknown == UINT32_MAX) {
			name = strdup("?");
			if (!name)
				return -ENOMEM;
			err = intern(b, name, &b->unknown);
			if (err)
				return err;
		}
		*idx = b->unknown;
		return 0;
	}
	if (u->files[f].global != UINT32_MAX) {
		*idx = u->files[f].global;
		return 0;
	}

	const char *file = u->files[f].name;
	uint64_t d = u->files[f].dir;
	const char *dir = d < u->ndirs ? u->dirs[d] : NULL;

	if (file[0] != '/' && dir && dir[0]) {
		if (dir[0] != '/' && u->version >= 5 && d && u->dirs[0][0])
			part[n++] = u->dirs[0];
		part[n++] = dir;
	}
	part[n++] = file;
	/* The budget also bounds the time: strnlen() stops at it. */
	for (int i = 0; i < n; i++) {
		len[i] = strnlen(part[i], (size_t)b->budget + 1);
		total += len[i] + 1;
		if (len[i] > b->budget || total > b->budget)
			return -ENOEXEC;
	}
	b->budget -= total;
	name = malloc(total);
	if (!name)
		return -ENOMEM;
	w = name;
	for (int i = 0; i < n; i++) {
		memcpy(w, part[i], len[i]);
		w += len[i];
		if (i < n - 1 && len[i] && part[i][len[i] - 1] != '/')
			*w++ = '/';
	}
	*w = 0;
	err = intern(b, name, idx);
	if (!err)
		u->files[f].global = *idx;
	return err;
}

static int add_row(struct build *b, uint64_t addr, uint32_t line,
		   uint32_t file)
{
	struct sy_lines *o = b->out;
	struct sy_line_row *rows;

	rows = grow(o->rows, &b->rows_cap, o->n + 1, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	o->rows = rows;
	/* the bias is added once all rows are in: until then addresses are
	 * the file's, and compare as such */
	rows[o->n++] = (struct sy_line_row){ (uintptr_t)addr, line, file };
	return 0;
}

/*
 * End the sequence whose rows start at index start, at address end.
 *
 * A linker that drops a function (--gc-sections, a duplicate COMDAT) still
 * leaves its line program, with its addresses resolved to 0 (GNU ld) or to
 * a tombstone of -1 or -2 (lld): such a sequence would shadow the real
 * code at those addresses, so it goes. Rows at or past the end address
 * cover nothing (the end row sorts first at its address), and go too.
 */
static int end_sequence(struct build *b, size_t start, uint64_t end)
{
	struct sy_lines *o = b->out;
	uint64_t first;

	if (o->n == start)
		return 0;
	first = o->rows[start].addr;
	if (!first || first >= UINT64_MAX - 1) {
		o->n = start;
		return 0;
	}
	while (o->n > start && o->rows[o->n - 1].addr >= end)
		o->n--;
	if (o->n == start)
		return 0;
	return add_row(b, end, 0, o->rows[o->n - 1].file);
}

/* Run the line program [r->p, r->end) of unit u. */
static int run_program(struct build *b, struct unit *u, struct rd *r)
{
	uint64_t addr = 0, file = 1, line = 1;
	size_t start = b->out->n;
	int err = 0;

	while (r->p < r->end && !err) {
		uint8_t op = *r->p++;

		if (op >= u->opcode_base) {
			/* special opcode: advance both, then a row */
			unsigned adj = op - u->opcode_base;

			addr += (uint64_t)(adj / u->line_range) * u->min_inst;
			line += (uint64_t)(int64_t)(u->line_base +
						    (int)(adj % u->line_range));
			goto row;
		}
		switch (op) {
		case 0: {	/* extended: 0, length, sub-opcode, operands */
			uint64_t len = rd_uleb(r);
			struct rd e;

			if (r->bad || len > rd_left(r))
				return -ENOEXEC;
			e = (struct rd){ r->p, r->p + len, false };
			r->p += len;
			if (!len)
				break;
			switch (rd_u8(&e)) {
			case DW_LNE_end_sequence:
				err = end_sequence(b, start, addr);
				start = b->out->n;
				addr = 0;
				file = 1;
				line = 1;
				break;
			case DW_LNE_set_address:
				/* the operand is the rest of the op:
				 * address_size bytes */
				if (!rd_left(&e) || rd_left(&e) > 8)
					return -ENOEXEC;
				addr = rd_uint(&e, (unsigned)rd_left(&e));
				break;
			default:
				/* define_file (2-4), set_discriminator,
				 * vendor ops: nothing an address lookup
				 * needs, and the length skips them */
				break;
			}
			break;
		}
		case DW_LNS_copy:
			goto row;
		case DW_LNS_advance_pc:
			addr += rd_uleb(r) * u->min_inst;
			break;
		case DW_LNS_advance_line:
			line += rd_sleb(r);
			break;
		case DW_LNS_set_file:
			file = rd_uleb(r);
			break;
		case DW_LNS_const_add_pc:
			addr += (uint64_t)((255 - u->opcode_base) /
					   u->line_range) * u->min_inst;
			break;
		case DW_LNS_fixed_advance_pc:
			addr += rd_uint(r, 2);
			break;
		case DW_LNS_negate_stmt:
		case DW_LNS_set_basic_block:
		case DW_LNS_set_prologue_end:
		case DW_LNS_set_epilogue_begin:
			break;
		default:
			/* set_column, set_isa, and opcodes of a later
			 * standard: the header says how many ULEB128
			 * operands they take (at most 255) */
			for (unsigned i = 0; i < u->std_len[op - 1]; i++)
				rd_uleb(r);
			break;
		}
		if (r->bad)
			return -ENOEXEC;
		continue;
row:
		{
			uint32_t g;
			/* files are numbered from 1 before DWARF 5: file 0
			 * wraps around to an index no table has */
			uint64_t f = u->version >= 5 ? file : file - 1;

			err = file_index(b, u, f, &g);
			if (!err)
				err = add_row(b, addr, line > UINT32_MAX ?
					      UINT32_MAX : (uint32_t)line, g);
		}
	}
	/* A sequence the program does not end covers nothing known. */
	if (!err)
		b->out->n = start;
	return err;
}

/* include_directories and file_names of DWARF 2-4: lists of strings,
 * each ended by an empty one. Directories are numbered from 1 (0 is the
 * compilation directory), so dirs[0] is a placeholder. */
static int read_tables_v4(struct rd *h, struct unit *u)
{
	const char *s;

	u->dirs = grow(NULL, &u->dirs_cap, 1, sizeof(*u->dirs));
	if (!u->dirs)
		return -ENOMEM;
	u->dirs[u->ndirs++] = "";
	while ((s = rd_cstr(h)) && *s) {
		const char **dirs = grow(u->dirs, &u->dirs_cap, u->ndirs + 1,
					 sizeof(*dirs));

		if (!dirs)
			return -ENOMEM;
		u->dirs = dirs;
		u->dirs[u->ndirs++] = s;
	}
	while ((s = rd_cstr(h)) && *s) {
		struct ufile *files = grow(u->files, &u->files_cap,
					   u->nfiles + 1, sizeof(*files));

		if (!files)
			return -ENOMEM;
		u->files = files;
		files[u->nfiles].name = s;
		files[u->nfiles].dir = rd_uleb(h);
		files[u->nfiles].global = UINT32_MAX;
		rd_uleb(h);	/* modification time */
		rd_uleb(h);	/* length */
		u->nfiles++;
	}
	return h->bad ? -ENOEXEC : 0;
}

/*
 * A DWARF 5 directory or file name table: a format (up to 255 pairs of
 * content type and form), a count, then the entries in that format. files
 * says which of the two it is.
 */
static int read_table_v5(struct rd *h, struct dwarf *d, struct unit *u,
			 bool files)
{
	uint64_t type[255], form[255], count;
	unsigned nfmt = rd_u8(h);
	bool has_path = false;

	for (unsigned i = 0; i < nfmt; i++) {
		type[i] = rd_uleb(h);
		form[i] = rd_uleb(h);
		has_path |= type[i] == DW_LNCT_path;
	}
	count = rd_uleb(h);
	if (h->bad)
		return -ENOEXEC;
	if (!count)
		return 0;
	/* Every form takes a byte at least, so an honest count is at most
	 * the bytes left: that refuses absurd counts before allocating.
	 * And an entry without a name is of no use. */
	if (!has_path || count > rd_left(h))
		return -ENOEXEC;
	if (files)
		u->files = calloc((size_t)count, sizeof(*u->files));
	else
		u->dirs = calloc((size_t)count, sizeof(*u->dirs));
	if (files ? !u->files : !u->dirs)
		return -ENOMEM;
	for (uint64_t e = 0; e < count; e++) {
		const char *path = NULL;
		uint64_t dir = 0;

		for (unsigned i = 0; i < nfmt; i++) {
			const char *s;
			uint64_t v;
			int err = sy_dw_read_form(h, d, u->offsz, form[i],
						  &s, &v);

			if (err)
				return err;
			if (type[i] == DW_LNCT_path) {
				if (!s)
					return -ENOEXEC;
				path = s;
			} else if (type[i] == DW_LNCT_directory_index) {
				dir = v;
			}
		}
		if (files) {
			u->files[e] = (struct ufile){ path, dir, UINT32_MAX };
			u->nfiles++;
		} else {
			u->dirs[e] = path;
			u->ndirs++;
		}
	}
	return 0;
}

/* One unit of .debug_line at sec->p: its header, then its program. */
static int parse_unit(struct build *b, struct dwarf *d, struct rd *sec)
{
	struct unit u = { .offsz = 4 };
	struct rd r, h;
	uint64_t len;
	int err = -ENOEXEC;

	len = rd_uint(sec, 4);
	if (len == 0xffffffff) {
		u.offsz = 8;
		len = rd_uint(sec, 8);
	} else if (len >= 0xfffffff0) {
		return -ENOEXEC;	/* reserved */
	}
	if (sec->bad || len > rd_left(sec))
		return -ENOEXEC;
	r = (struct rd){ sec->p, sec->p + len, false };
	sec->p += len;

	u.version = (unsigned)rd_uint(&r, 2);
	if (u.version < 2 || u.version > 5)
		return -ENOEXEC;
	if (u.version >= 5) {
		/* address_size: set_address carries its own length;
		 * segment_selector_size: no segments on Linux */
		rd_skip(&r, 2);
	}
	len = rd_uint(&r, u.offsz);		/* header_length */
	if (r.bad || len > rd_left(&r))
		return -ENOEXEC;
	h = (struct rd){ r.p, r.p + len, false };
	r.p += len;				/* the program */

	u.min_inst = rd_u8(&h);
	if (u.version >= 4)
		rd_u8(&h);	/* maximum_operations_per_instruction: taken
				 * as 1, op_index is for VLIW machines */
	rd_u8(&h);		/* default_is_stmt: every row is kept */
	u.line_base = rd_u8(&h);
	if (u.line_base > 127)
		u.line_base -= 256;
	u.line_range = rd_u8(&h);
	u.opcode_base = rd_u8(&h);
	if (h.bad || !u.line_range || !u.opcode_base)
		return -ENOEXEC;
	u.std_len = h.p;
	rd_skip(&h, u.opcode_base - 1);
	if (h.bad)
		return -ENOEXEC;

	if (u.version >= 5) {
		err = read_table_v5(&h, d, &u, false);
		if (!err)
			err = read_table_v5(&h, d, &u, true);
	} else {
		err = read_tables_v4(&h, &u);
	}
	if (!err)
		err = run_program(b, &u, &r);
	free(u.dirs);
	free(u.files);
	return err;
}

/* Stable merge sort of the rows by address, an end row (line 0) first
 * among rows at its address: there it ends one sequence and the next may
 * begin. Rows come in sorted runs (the sequences), merged pairwise until
 * one is left; input already sorted costs one pass. */
static bool row_before(const struct sy_line_row *a,
		       const struct sy_line_row *b)
{
	return a->addr < b->addr ||
	       (a->addr == b->addr && !a->line && b->line);
}

static size_t run_end(const struct sy_line_row *v, size_t i, size_t n)
{
	while (++i < n && !row_before(&v[i], &v[i - 1]))
		;
	return i;
}

static int sort_rows(struct sy_line_row *v, size_t n)
{
	struct sy_line_row *tmp, *src = v, *dst;
	size_t runs;

	if (n < 2 || run_end(v, 0, n) == n)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	dst = tmp;
	do {
		struct sy_line_row *t;

		runs = 0;
		for (size_t lo = 0; lo < n; runs++) {
			size_t mid = run_end(src, lo, n);
			size_t hi = mid < n ? run_end(src, mid, n) : n;
			size_t i = lo, j = mid, k = lo;

			while (i < mid && j < hi)
				dst[k++] = row_before(&src[j], &src[i]) ?
					   src[j++] : src[i++];
			while (i < mid)
				dst[k++] = src[i++];
			while (j < hi)
				dst[k++] = src[j++];
			lo = hi;
		}
		t = src;
		src = dst;
		dst = t;
	} while (runs > 1);
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
	return 0;
}

static int parse(const struct src *s, uintptr_t bias, struct sy_lines *out)
{
	struct dwarf d = { .src = s };
	struct build b = {
		.out = out,
		.unknown = UINT32_MAX,
		/* names cost at most twice the file (they are paths made
		 * of its strings); a real file needs far less */
		.budget = 2 * s->size + (1 << 20),
	};
	const uint8_t *p;
	void *buf = NULL;
	struct rd sec;
	int err;

	memset(out, 0, sizeof(*out));
	err = sy_dw_locate(s, d.sec);
	if (err)
		return err;
	if (!d.sec[SEC_LINE].present)
		return -ENOENT;
	err = sy_dw_src_get(s, d.sec[SEC_LINE].off, d.sec[SEC_LINE].size, &p,
			    &buf);
	if (err)
		return err;
	/* every unit takes 4 bytes at least: the loop ends */
	sec = (struct rd){ p, p + d.sec[SEC_LINE].size, false };
	while (!err && sec.p < sec.end)
		err = parse_unit(&b, &d, &sec);
	for (size_t i = 0; !err && i < out->n; i++)
		out->rows[i].addr += bias;
	if (!err)
		err = sort_rows(out->rows, out->n);
	free(buf);
	free(b.slots);
	for (int k = 0; k < NSEC; k++)
		free(d.str[k].buf);
	if (err)
		sy_lines_free(out);
	return err;
}

int sy_lines_load(const char *path, uintptr_t bias, struct sy_lines *out)
{
	struct stat st;
	struct src s = { .fd = -1 };
	int r;

	memset(out, 0, sizeof(*out));
	s.fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (s.fd < 0)
		return -errno;
	if (fstat(s.fd, &st))
		r = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_size <= 0)
		r = -ENOEXEC;
	else {
		s.size = (uint64_t)st.st_size;
		r = parse(&s, bias, out);
	}
	close(s.fd);
	return r;
}

/* Headers are copied out of the image before use, so unlike the ELF
 * structures themselves it needs no particular alignment. */
int sy_lines_parse(const void *img, size_t size, uintptr_t bias,
		   struct sy_lines *out)
{
	struct src s = { .img = img, .fd = -1, .size = size };

	memset(out, 0, sizeof(*out));
	if (!img)
		return -EINVAL;
	return parse(&s, bias, out);
}

const struct sy_line_row *sy_lines_find(const struct sy_lines *l,
					uintptr_t addr)
{
	size_t lo = 0, hi = l->n;

	/* the last row at or before addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->rows[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || !l->rows[lo - 1].line)
		return NULL;	/* before all, or past a sequence's end */
	return &l->rows[lo - 1];
}

void sy_lines_free(struct sy_lines *l)
{
	for (size_t i = 0; i < l->nfiles; i++)
		free(l->files[i]);
	free(l->files);
	free(l->rows);
	memset(l, 0, sizeof(*l));
}
