/* SPDX-License-Identifier: MIT */
/*
 * introspect_call.c - switchyard_for_each_static_call(): the static calls
 * of the process, for listings and for live re-targeting (control_cmd.c).
 *
 * The same three steps as introspect.c's: under the patch lock, every
 * registered site's key and each such key's current target; without it,
 * the SWITCHYARD_STATIC_CALL_TARGET() records of every loaded object
 * (sy_records_walk()) and the names; then the caller's function, on the
 * snapshot only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define TARGET_NAME_MAX 256

struct tgt {
	const struct static_call_key *key;
	void (*func)(void);
	void (*cur)(void);	/* the key's target when the record was read */
	char *name;
	size_t seq;		/* walk order, kept among a key's records */
};

struct call_row {
	const struct static_call_key *key;
	size_t sites;
	void (*func)(void);	/* the current target */
	char *name, *object, *target;
	size_t t0, nt;		/* its records: tgts.v[t0, t0 + nt) */
	const char **tnames;
	void (**tfuncs)(void);
};

struct call_snap {
	struct call_row *v;
	size_t n, cap;
	int err;
	struct {
		struct tgt *v;
		size_t n, cap;
	} tgts;
};

static struct call_row *add_row(struct call_snap *s,
				const struct static_call_key *key)
{
	if (!sy_grow(&s->v, &s->cap, s->n, sizeof(*s->v))) {
		s->err = -ENOMEM;
		return NULL;
	}
	memset(&s->v[s->n], 0, sizeof(s->v[s->n]));
	s->v[s->n].key = key;
	return &s->v[s->n++];
}

/* Step 1, patch lock held: one row per site (merged below). */
static void add_site(struct static_call_key *key, void *arg)
{
	struct call_snap *s = arg;
	struct call_row *r;

	/* a table's sites of one key tend to come together */
	if (s->n && s->v[s->n - 1].key == key) {
		s->v[s->n - 1].sites++;
		return;
	}
	r = add_row(s, key);
	if (r) {
		r->sites = 1;
		/* acquire: pairs with the update's release store */
		r->func = __atomic_load_n(&key->func, __ATOMIC_ACQUIRE);
	}
}

static int snapshot(struct call_snap *s)
{
	sy_sc_visit(add_site, s);
	return s->err;
}

static int cmp_row(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct call_row *)a)->key;
	uintptr_t y = (uintptr_t)((const struct call_row *)b)->key;

	return x < y ? -1 : x > y;
}

/* by key, then by name (the order of a key's records in a section is the
 * compiler's); the same name twice: walk order */
static int cmp_tgt(const void *a, const void *b)
{
	const struct tgt *x = a, *y = b;
	int c;

	if (x->key != y->key)
		return (uintptr_t)x->key < (uintptr_t)y->key ? -1 : 1;
	c = strcmp(x->name, y->name);
	return c ? c : x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Step 2: a SWITCHYARD_STATIC_CALL_TARGET() record (dl lock held: its
 * object is mapped, and so is the key it names: the object links against
 * it, so the key's definer cannot go first; the key pointer is trusted as
 * the registry trusts a site table's). */
static void tgt_rec(const struct sy_rec_obj *o, const void *rec, void *arg)
{
	const struct sy__sc_target *r = rec;
	struct call_snap *s = arg;
	char *name;

	if (!r->key || !(name = sy_rec_strdup(o, r->name, TARGET_NAME_MAX)))
		return;
	if (!sy_grow(&s->tgts.v, &s->tgts.cap, s->tgts.n, sizeof(*s->tgts.v))) {
		free(name);
		s->err = -ENOMEM;
		return;
	}
	/* acquire: pairs with the update's release store */
	s->tgts.v[s->tgts.n] = (struct tgt){
		r->key, r->func, __atomic_load_n(&r->key->func, __ATOMIC_ACQUIRE),
		name, s->tgts.n };
	s->tgts.n++;
}

/* The name of a call from its key's symbol: __SCK__name, or
 * ns::__SCK__name in C++. */
static char *call_name(const struct static_call_key *key,
		       const struct sy_namerecs *recs)
{
	char *n = sy_symbol_name((uintptr_t)key, false, recs), *p;

	if (!n) {
		if (asprintf(&n, "call@%p", (const void *)key) < 0)
			return NULL;
		return n;
	}
	p = strstr(n, "__SCK__");
	if (p)
		memmove(p, p + 7, strlen(p + 7) + 1);
	return n;
}

static char *target_name(const struct call_row *r,
			 const struct tgt *t)
{
	char *n;

	if (!r->func)
		return strdup("(none)");
	for (size_t i = 0; i < r->nt; i++)
		if (t[r->t0 + i].func == r->func)
			return strdup(t[r->t0 + i].name);
	n = sy_symbol_name((uintptr_t)r->func, true, NULL);
	if (!n && asprintf(&n, "func@%p", (void *)r->func) < 0)
		n = NULL;
	return n;
}

static int merge_and_name(struct call_snap *s)
{
	size_t w = 0, i = 0;

	if (s->n)	/* qsort(NULL, 0): undefined (UBSan) */
		qsort(s->v, s->n, sizeof(*s->v), cmp_row);
	for (size_t j = 0; j < s->n; j++) {
		if (w && s->v[w - 1].key == s->v[j].key)
			s->v[w - 1].sites += s->v[j].sites;
		else
			s->v[w++] = s->v[j];
	}
	s->n = w;
	/* each key's records; a key with records and no site gets a row */
	if (s->tgts.n)
		qsort(s->tgts.v, s->tgts.n, sizeof(*s->tgts.v), cmp_tgt);
	while (i < s->tgts.n) {
		const struct static_call_key *key = s->tgts.v[i].key;
		struct call_row q = { .key = key }, *r;
		size_t j = i;

		while (j < s->tgts.n && s->tgts.v[j].key == key)
			j++;
		r = s->n ? bsearch(&q, s->v, s->n, sizeof(*s->v), cmp_row)
			 : NULL;
		if (!r) {
			r = add_row(s, key);
			if (!r)
				return -ENOMEM;
			r->func = s->tgts.v[i].cur;	/* read in the walk */
			qsort(s->v, s->n, sizeof(*s->v), cmp_row);
			r = bsearch(&q, s->v, s->n, sizeof(*s->v), cmp_row);
		}
		r->t0 = i;
		r->nt = j - i;
		i = j;
	}
	struct sy_namerecs *recs = sy_namerecs_load();

	for (size_t k = 0; k < s->n; k++) {
		struct call_row *r = &s->v[k];
		uintptr_t bias;

		r->name = call_name(r->key, recs);
		r->target = target_name(r, s->tgts.v);
		sy_object_of((uintptr_t)r->key, &r->object, &bias);
		r->tnames = malloc((r->nt ? r->nt : 1) * sizeof(*r->tnames));
		r->tfuncs = malloc((r->nt ? r->nt : 1) * sizeof(*r->tfuncs));
		if (!r->name || !r->target || !r->tnames || !r->tfuncs) {
			sy_namerecs_free(recs);
			return -ENOMEM;
		}
		for (size_t t = 0; t < r->nt; t++) {
			r->tnames[t] = s->tgts.v[r->t0 + t].name;
			r->tfuncs[t] = s->tgts.v[r->t0 + t].func;
		}
	}
	sy_namerecs_free(recs);
	return 0;
}

static void snap_free(struct call_snap *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].name);
		free(s->v[i].object);
		free(s->v[i].target);
		free(s->v[i].tnames);
		free(s->v[i].tfuncs);
	}
	free(s->v);
	for (size_t i = 0; i < s->tgts.n; i++)
		free(s->tgts.v[i].name);
	free(s->tgts.v);
}

int switchyard_for_each_static_call(switchyard_call_fn fn, void *arg)
{
	struct call_snap s;
	int r = sy_enter();

	if (r)
		return r;
	memset(&s, 0, sizeof(s));
	r = SY_LOCKED(snapshot(&s));
	if (!r)
		sy_records_walk(SY_SEC_TARGETS, SY_REC_TARGETS_SIZE,
				tgt_rec, &s);
	if (!r)
		r = s.err;
	if (!r)
		r = merge_and_name(&s);
	sy_leave();	/* fn may call back into switchyard */
	for (size_t i = 0; !r && i < s.n; i++) {
		struct switchyard_call_info info = {
			s.v[i].key, s.v[i].name,
			s.v[i].object ? s.v[i].object : "?", s.v[i].target,
			s.v[i].sites, s.v[i].nt, s.v[i].tnames,
			(void (*const *)(void))s.v[i].tfuncs,
		};

		r = fn(&info, arg);
	}
	snap_free(&s);
	return r;
}
