/* SPDX-License-Identifier: MIT */
/*
 * key_names.h - which keys a request's name or glob selects: shared by the
 * control socket's requests (control_cmd.c) and SWITCHYARD_KEYS
 * (keys_env.c). key_names.c says how names are matched.
 */
#ifndef SY_KEY_NAMES_H
#define SY_KEY_NAMES_H

#include "internal.h"

/*
 * Keys collected from a snapshot (by `set` and by SWITCHYARD_KEYS), to be
 * changed together with sy_keys_change(): one batch, one core sync. The
 * names are copies (the snapshot's strings die with its callback).
 */
struct key_list {
	struct static_key **keys;
	char **names;
	int *ops;
	size_t n, capk, capn, capo;
	bool failed;
};

/* Append k with op, named names (sy_key_names(), taken; NULL: k->name);
 * false (and l->failed) when out of memory. */
SY_HIDDEN bool sy_key_list_add(struct key_list *l,
			       const struct switchyard_key_info *k, int op,
			       char *names);
SY_HIDDEN void sy_key_list_free(struct key_list *l);
/* Does pat select name? (the name itself when equal, else no glob here) */
SY_HIDDEN bool sy_pattern_is(const char *pat, const char *name);
/* A key's names, NUL-separated (key_names.c); malloc'ed, NULL without
 * memory. */
SY_HIDDEN char *sy_key_names(const struct switchyard_key_info *k,
			     const struct sy_key_aka *a);
/* Is pat one of a key's names (local: the name in its object counts)? */
SY_HIDDEN bool sy_names_is(const char *v, const char *pat, bool local);
/* Does the glob pat match the key's listed name (or, local, its name in
 * its object)? */
SY_HIDDEN bool sy_names_glob(const char *v, const char *pat, bool local);
/* "prog:k" is "prog" + ':' + "k" */
SY_HIDDEN bool sy_qualified_is(const char *pat, const char *q,
			       const char *name);
/* "ns::k", "a.c:k", "libx.so:k" for k: a name a user may have meant */
SY_HIDDEN bool sy_qualified_form(const char *pat, const char *name);

#endif /* SY_KEY_NAMES_H */
