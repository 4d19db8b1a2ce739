/* SPDX-License-Identifier: MIT */
/*
 * key_names.c - the names a key answers to in a request (`set`, `call`)
 * and in SWITCHYARD_KEYS, and how a pattern selects them. Pure string
 * work on a listing's snapshot: no lock, no other file but the listing's
 * growth helper.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "key_names.h"

/* Append k with op, named names (sy_key_names(), taken; NULL: k->name);
 * false (and l->failed) when out of memory. */
bool sy_key_list_add(struct key_list *l, const struct switchyard_key_info *k,
			 int op, char *names)
{
	char *name = names;

	if (!sy_grow(&l->keys, &l->capk, l->n, sizeof(*l->keys)) ||
	    !sy_grow(&l->names, &l->capn, l->n, sizeof(*l->names)) ||
	    !sy_grow(&l->ops, &l->capo, l->n, sizeof(*l->ops)) ||
	    (!name && !(name = strdup(k->name)))) {
		free(names);
		l->failed = true;
		return false;
	}
	l->names[l->n] = name;
	l->ops[l->n] = op;
	l->keys[l->n++] = (struct static_key *)k->key;
	return true;
}

void sy_key_list_free(struct key_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	free(l->keys);
	free(l->ops);
}

/*
 * How a request's pattern selects names (set, call, SWITCHYARD_KEYS): a
 * name as listed is itself, whatever it holds: "feat[3]" (an array's
 * element) or "f(int*)::k" read as a glob would match other names, or
 * none. So when some name equals the pattern, the names equal to it are
 * selected, and only they; else the pattern is a glob (fnmatch(), where
 * "feat\[3\]" is the name escaped). Names alike are keys that nothing
 * tells apart (elf.c gives file-local keys of two source files "a.c:k",
 * "b.c:k"; introspect.c qualifies by object): all of them are selected,
 * and the reply says how many.
 */
bool sy_pattern_is(const char *pat, const char *name)
{
	return !strcmp(pat, name);
}

/*
 * A listed name holds qualifiers only while another key needs them: the
 * key k of a program is "k" until a plugin with a key k loads, then
 * "prog:k" (and "libp.so:k"). A request copied from a listing made at
 * another moment must still select it, so a key also answers to each of
 * its qualified names, needed or not: OBJECT:name, and for a file-local
 * key of a file with symbols a.c:name and OBJECT:a.c:name (name: in its
 * object, struct sy_key_aka). A pattern that is one of them selects the
 * keys that have it and only those, as a listed name does. A bare name
 * that only qualified names end with stays refused by set (which k?);
 * SWITCHYARD_KEYS matches the name without the object qualifier too,
 * exactly and as a glob: it is read while objects load, when a listed
 * name depends on which had loaded, and "k=on" sets each object's k as
 * it registers.
 *
 * sy_key_names(): these names, NUL-separated, in the order of enum kn (an
 * empty one where the key has none; the listed name first, so the block
 * prints as the listed name).
 */
enum kn { KN_LISTED, KN_LOCAL, KN_OBJ, KN_SRC, KN_OBJ_SRC, KN_N };

/* name, qualified by q1 and q2 when not NULL ("q1:q2:name"), and its
 * NUL at p; an empty name when name is NULL. The end of what it wrote. */
static char *kn_put(char *p, const char *q1, const char *q2, const char *name)
{
	if (!name) {
		*p = '\0';
		return p + 1;
	}
	if (q1)
		p = stpcpy(stpcpy(p, q1), ":");
	if (q2)
		p = stpcpy(stpcpy(p, q2), ":");
	return stpcpy(p, name) + 1;
}

char *sy_key_names(const struct switchyard_key_info *k,
		       const struct sy_key_aka *a)
{
	/* key@0x...: no name, nothing to qualify */
	bool named = a && a->local && strncmp(k->name, "key@", 4);
	const char *loc = named ? a->local : k->name;
	const char *obj = named ? a->object : NULL;
	const char *src = named && a->plain ? a->src : NULL;
	const char *plain = src ? a->plain : NULL;
	size_t lo = obj ? strlen(obj) : 0, ls = src ? strlen(src) : 0;
	size_t lp = plain ? strlen(plain) : 0, ll = strlen(loc);
	char *v = malloc(strlen(k->name) + 1 + ll + 1 + lo + ll + 2 +
			 ls + lp + 2 + lo + ls + lp + 3), *p;

	if (!v)
		return NULL;
	p = kn_put(v, NULL, NULL, k->name);		/* KN_LISTED */
	p = kn_put(p, NULL, NULL, loc);			/* KN_LOCAL */
	p = kn_put(p, obj, NULL, obj ? loc : NULL);	/* KN_OBJ */
	p = kn_put(p, src, NULL, plain);		/* KN_SRC */
	kn_put(p, obj, src, obj ? plain : NULL);	/* KN_OBJ_SRC */
	return v;
}

/* Is pat one of a key's names (sy_key_names(); local: the name in its
 * object counts, SWITCHYARD_KEYS)? */
bool sy_names_is(const char *v, const char *pat, bool local)
{
	for (int i = 0; i < KN_N; i++, v += strlen(v) + 1)
		if ((i != KN_LOCAL || local) && *v && sy_pattern_is(pat, v))
			return true;
	return false;
}

/* Does the glob pat match the key's listed name (or, local, its name in
 * its object)? Never its qualified names: "t*" is no glob for "t.c:k". */
bool sy_names_glob(const char *v, const char *pat, bool local)
{
	return !fnmatch(pat, v, 0) ||
	       (local && !fnmatch(pat, v + strlen(v) + 1, 0));
}

/* "prog:k" is "prog" + ':' + "k" */
bool sy_qualified_is(const char *pat, const char *q, const char *name)
{
	size_t l = strlen(q);

	return !strncmp(pat, q, l) && pat[l] == ':' &&
	       !strcmp(pat + l + 1, name);
}

/* "ns::k", "a.c:k", "libx.so:k" for k: a name a user may have meant */
bool sy_qualified_form(const char *pat, const char *name)
{
	size_t lp = strlen(pat), ln = strlen(name);

	return ln > lp + 1 && name[ln - lp - 1] == ':' &&
	       !strcmp(name + ln - lp, pat);
}

