/* SPDX-License-Identifier: MIT */
/*
 * dwarf_read.c - what the DWARF line reader (dwarf_line.c) reads its
 * table with: an ELF64 little-endian file's sections found by name, its
 * DWARF string sections, and the forms of DWARF 5's directory and file
 * entries (dwarf_read.h).
 *
 * The file is untrusted input, as dwarf_line.c says: every offset and
 * length is checked against the file before use, and a malformed file
 * gives -ENOEXEC, never a crash.
 *
 * From a path the sections are read with pread() rather than mapped: a
 * mapped file that another process truncates (a rebuild) would raise
 * SIGBUS in the caller, a read just comes back short.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dwarf_read.h"

/* ---- the ELF file: sections ------------------------------------------ */

int sy_dw_src_get(const struct src *s, uint64_t off, uint64_t len,
		  const uint8_t **p, void **buf)
{
	uint8_t *m;

	*buf = NULL;
	if (off > s->size || len > s->size - off)
		return -ENOEXEC;
	if (s->img) {
		*p = s->img + off;
		return 0;
	}
	if (len > SIZE_MAX - 1)
		return -ENOMEM;
	m = malloc(len ? (size_t)len : 1);
	if (!m)
		return -ENOMEM;
	for (uint64_t got = 0; got < len;) {
		ssize_t r = pread(s->fd, m + got, (size_t)(len - got),
				  (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			/* 0: the file shrank since fstat() */
			int err = r < 0 ? -errno : -ENOEXEC;

			free(m);
			return err;
		}
		got += (uint64_t)r;
	}
	*p = m;
	*buf = m;
	return 0;
}

static const char *const sec_name[NSEC] = {
	[SEC_LINE] = ".debug_line",
	[SEC_LINE_STR] = ".debug_line_str",
	[SEC_STR] = ".debug_str",
};


/* Find our sections by name through the section headers. */
int sy_dw_locate(const struct src *s, struct sec sec[NSEC])
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh, sh0;
	const uint8_t *p, *tab, *names = NULL;
	void *tab_buf = NULL, *names_buf = NULL, *buf;
	uint64_t nsh, strndx, nsize;
	int err;

	memset(sec, 0, NSEC * sizeof(*sec));
	/* Headers are copied out: nothing here needs the image aligned. */
	err = sy_dw_src_get(s, 0, sizeof(eh), &p, &buf);
	if (err)
		return err;
	memcpy(&eh, p, sizeof(eh));
	free(buf);
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return -ENOEXEC;
	if (!eh.e_shoff)
		return -ENOENT;		/* no section headers, no sections */
	if (eh.e_shentsize != sizeof(Elf64_Shdr))
		return -ENOEXEC;
	err = sy_dw_src_get(s, eh.e_shoff, sizeof(sh0), &p, &buf);
	if (err)
		return err;
	memcpy(&sh0, p, sizeof(sh0));
	free(buf);
	/* Over 0xff00 sections, the count and the index of the section
	 * names are in the first (null) section header. */
	nsh = eh.e_shnum ? eh.e_shnum : sh0.sh_size;
	strndx = eh.e_shstrndx == SHN_XINDEX ? sh0.sh_link : eh.e_shstrndx;
	if (!nsh)
		return -ENOENT;
	if (nsh > s->size / sizeof(Elf64_Shdr) || strndx >= nsh)
		return -ENOEXEC;
	err = sy_dw_src_get(s, eh.e_shoff, nsh * sizeof(Elf64_Shdr), &tab,
			    &tab_buf);
	if (err)
		return err;
	memcpy(&sh, tab + strndx * sizeof(sh), sizeof(sh));
	err = sh.sh_type == SHT_NOBITS ? -ENOEXEC :
	      sy_dw_src_get(s, sh.sh_offset, sh.sh_size, &names, &names_buf);
	if (err)
		goto out;
	nsize = sh.sh_size;
	for (uint64_t i = 1; i < nsh; i++) {
		memcpy(&sh, tab + i * sizeof(sh), sizeof(sh));
		if (sh.sh_name >= nsize)
			continue;
		for (int k = 0; k < NSEC; k++) {
			size_t len = strlen(sec_name[k]) + 1;

			if (sec[k].present || nsize - sh.sh_name < len ||
			    memcmp(names + sh.sh_name, sec_name[k], len))
				continue;
			/* A section without file bytes is absent. So is a
			 * compressed one (SHF_COMPRESSED, gcc -gz): reading
			 * it needs zlib or zstd, which the library does not
			 * link, so it counts as no line table at all. */
			if (sh.sh_type == SHT_NOBITS ||
			    (sh.sh_flags & SHF_COMPRESSED))
				break;
			if (sh.sh_offset > s->size ||
			    sh.sh_size > s->size - sh.sh_offset) {
				err = -ENOEXEC;
				goto out;
			}
			sec[k].off = sh.sh_offset;
			sec[k].size = sh.sh_size;
			sec[k].present = true;
		}
	}
out:
	free(tab_buf);
	free(names_buf);
	return err;
}

/* ---- string sections and forms --------------------------------------- */

int sy_dw_strtab_at(struct dwarf *d, int k, uint64_t off, const char **s)
{
	struct strtab *t = &d->str[k];

	if (!t->loaded) {
		const uint8_t *p = (const uint8_t *)"";
		uint64_t n = 0;

		if (d->sec[k].present) {
			int err = sy_dw_src_get(d->src, d->sec[k].off,
						 d->sec[k].size, &p, &t->buf);

			if (err)
				return err;
			n = d->sec[k].size;
		}
		/* past the last NUL nothing is terminated */
		while (n && p[n - 1])
			n--;
		t->p = (const char *)p;
		t->lim = n;
		t->loaded = true;
	}
	if (off >= t->lim)
		return -ENOEXEC;
	*s = t->p + off;
	return 0;
}

int sy_dw_read_form(struct rd *r, struct dwarf *d, unsigned offsz,
		    uint64_t form, const char **s, uint64_t *v)
{
	uint64_t off;
	int err = 0;

	*s = NULL;
	*v = 0;
	switch (form) {
	case DW_FORM_string:
		*s = rd_cstr(r);
		break;
	case DW_FORM_line_strp:
	case DW_FORM_strp:
		off = rd_uint(r, offsz);
		if (!r->bad)
			err = sy_dw_strtab_at(d, form == DW_FORM_strp ?
					      SEC_STR : SEC_LINE_STR, off, s);
		break;
	case DW_FORM_udata:
		*v = rd_uleb(r);
		break;
	case DW_FORM_data1:
		*v = rd_uint(r, 1);
		break;
	case DW_FORM_data2:
		*v = rd_uint(r, 2);
		break;
	case DW_FORM_data4:
		*v = rd_uint(r, 4);
		break;
	case DW_FORM_data8:
		*v = rd_uint(r, 8);
		break;
	case DW_FORM_data16:	/* an MD5 (clang) */
		rd_skip(r, 16);
		break;
	case DW_FORM_block:
		off = rd_uleb(r);
		rd_skip(r, off);
		break;
	default:
		/* strx* needs .debug_str_offsets and the unit's base from
		 * .debug_info; no producer uses it here */
		return -ENOEXEC;
	}
	if (err)
		return err;
	return r->bad ? -ENOEXEC : 0;
}
