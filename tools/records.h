/* SPDX-License-Identifier: MIT */
/*
 * records.h - the records of an ELF file on disk (records.c), for
 * `switchyard list FILE` and `prepatch`, and the library a copied key
 * comes from (needed.c). Not library API.
 *
 * The file is untrusted input: every offset, size and count is checked
 * against the file; a malformed file gives -ENOEXEC (with a reason), never
 * a crash (fuzz/fuzz_records.c).
 */
#ifndef SY_TOOLS_RECORDS_H
#define SY_TOOLS_RECORDS_H

#include <stddef.h>
#include <stdint.h>

struct sy_rec_site {
	uint64_t addr;		/* the site (link-time address) */
	uint64_t target;	/* its jump's destination */
	unsigned likely;	/* 1: static_branch_likely() */
	unsigned len;		/* x86-64: 2 or 5, the jump to target as
				   assembled, or its TEST form (prepatched);
				   AArch64: 4, the B to target as assembled,
				   or a NOP (prepatched); 0: neither */
	uint8_t bytes[8];	/* the bytes at addr, as in the file */
	unsigned nbytes;
	uint64_t off;		/* file offset of bytes[0] (nbytes > 0) */
};

struct sy_rec_key {
	uint64_t addr;		/* 0: defined in another object; or see
				   copied */
	const char *name;	/* symbol name, or "key@0x..." (in names) */
	int initial;		/* 1 / 0: the initial state in the file
				   (STATIC_KEY_INIT_TRUE / _FALSE); -1:
				   unknown (another object) */
	const char *copied;	/* the symbol of the copy relocation
				   (R_*_COPY) whose copy the key is:
				   it is defined by a library the file
				   needs, its initial state is that one's
				   (initial -1); NULL: not a copy */
	struct sy_rec_site *sites;
	size_t nsites;
	const char *description;	/* SWITCHYARD_KEY_DESCRIPTION(), or
					   NULL */
};

/* A static call site (section sy_static_call_sites). */
struct sy_rec_call {
	uint64_t addr;		/* the site's arm */
	const char *name;	/* the static call (its key's symbol without
				   __SCK__), or "call@0x..." */
	const char *target;	/* the initial target's symbol, "(none)", or
				   NULL: unknown (a key of another object) */
	unsigned callee_save;	/* 1: static_call_cs() site */
	const uint8_t *insn;	/* AArch64: the site's instruction (4
				   bytes, in the image read), or NULL */
	uint64_t veneer;	/* AArch64: the veneer the site's BL was
				   assembled to (the record's flags field
				   in the file); 0 for none */
};

/* A CPU-feature alternative (section sy_altinstr). */
struct sy_rec_alt {
	uint64_t addr;
	uint64_t repl;		/* the replacement's address */
	unsigned len;		/* the site's bytes, padding included */
	unsigned repl_len;	/* the replacement's */
	unsigned feature;	/* the machine's feature number
				   (X86_FEATURE_* on x86-64) */
	unsigned absent;	/* 1: applies when the feature is absent */
	const uint8_t *bytes;	/* the site's len bytes in the image read,
				   or NULL (not in the file) */
	const uint8_t *repl_bytes;	/* the replacement's, or NULL */
};

/* A run-time constant site (section sy_runtime_const). */
struct sy_rec_rc {
	uint64_t addr;		/* its guard */
	const char *name;	/* the variable's symbol, or "var@0x..." */
	unsigned size;		/* of the immediate: 8, 4 or 1 */
	unsigned end;		/* the instruction with the immediate ends
				   end bytes past addr */
	const uint8_t *bytes;	/* addr's end bytes in the image read, or
				   NULL (not in the file) */
};

struct sy_records {
	struct sy_rec_key *keys;	/* sorted by address, then name */
	size_t nkeys;
	struct sy_rec_site *sites;	/* all, grouped by key */
	size_t nsites;
	struct sy_rec_call *calls;	/* by name, then address */
	size_t ncalls;
	struct sy_rec_alt *alts;	/* by address */
	size_t nalts;
	struct sy_rec_rc *rcs;		/* by name, then address */
	size_t nrcs;
	char *names;			/* the pool the names live in */
	const char *why;		/* on -ENOEXEC: what is wrong */
	unsigned machine;		/* the file's: EM_X86_64, EM_AARCH64 */
};

/* Read the records of the ELF image img[0, size) (64-bit little-endian
 * ELF of x86-64 or AArch64, executable or shared object). Returns 0 (no
 * records: 0 keys), -ENOEXEC (malformed: out->why says why), -ENOMEM.
 * The records' byte pointers point into img: they are valid while it
 * is. */
int sy_records_read(const uint8_t *img, size_t size, struct sy_records *out);
void sy_records_free(struct sy_records *r);

/* The path of the library, among those the ELF file at path (its image
 * img[0, size)) needs (DT_NEEDED), that defines sym, as found on this
 * machine now (tools/needed.c); NULL if none is found. To free. */
char *sy_needed_definer(const char *path, const void *img, size_t size,
			const char *sym);

#endif /* SY_TOOLS_RECORDS_H */
