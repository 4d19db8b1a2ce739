/* SPDX-License-Identifier: MIT */
/*
 * naming.h - naming.c's interface to the listing (introspect.c,
 * introspect_call.c): an object's symbols and lines, read once per call.
 * The names for messages (sy_name_key(), sy_name_site()) are in
 * internal.h, for report.c.
 */
#ifndef SY_NAMING_H
#define SY_NAMING_H

#include "internal.h"
#include "sy_dwarf.h"
#include "sy_elf.h"
#include "sy_names.h"

/*
 * One object at a time: calls visit sites and keys grouped by object, so a
 * cache of one is enough. Symbols and lines are read on first use.
 */
struct sy_obj_cache {
	char *path;
	uintptr_t bias;
	uintptr_t anchor;	/* an address in the object: finds its file */
	struct sy_syms syms;
	struct sy_lines lines;
	int syms_err, lines_err;	/* 1: not read yet */
};

/* The symbols or the lines of the object at anchor, mapped at bias from
 * path, from the file it was mapped from; NULL when they cannot be read.
 * Valid until the cache moves to another object or is freed. */
SY_HIDDEN const struct sy_syms *sy_syms_for(struct sy_obj_cache *c, const char *path,
				  uintptr_t bias, uintptr_t anchor);
SY_HIDDEN const struct sy_lines *sy_lines_for(struct sy_obj_cache *c,
				    const char *path, uintptr_t bias,
				    uintptr_t anchor);
SY_HIDDEN void sy_obj_cache_free(struct sy_obj_cache *c);

/* The load bias of the main program (0 when it is not PIE). */
SY_HIDDEN uintptr_t sy_exe_bias(void);
/* The readable name of a symbol, malloc'ed: demangled, and "a.c:k" when
 * another object of its file has its name. */
SY_HIDDEN char *sy_readable_sym(const struct sy_sym *y);
/* The file of object o, malloc'ed ("/proc/self/exe" resolved for the
 * main program), or NULL. */
SY_HIDDEN char *sy_obj_path(const struct sy_obj *o);
/* The part of path after its last '/'. */
SY_HIDDEN const char *sy_base_name(const char *path);
/* key's name from path's symbols (mapped at bias), else its name record:
 * "name", "name[3]", "name+0x20" or "key@0x..."; malloc'ed. With src, a
 * file-local key's source file in *src (malloc'ed) and in *plain where
 * the name starts without it. */
SY_HIDDEN char *sy_key_name(struct sy_obj_cache *c, const struct static_key *key,
		  const char *path, uintptr_t bias,
		  const struct sy_namerecs *recs, char **src, size_t *plain);

#endif /* SY_NAMING_H */
