/* SPDX-License-Identifier: MIT */
/*
 * registry.c - the per-object tables of jump label sites.
 *
 * Each executable or shared object that includes the header carries its
 * sites in the section "sy_jump_entries" and hands it to
 * sy__register_jump_table() from a constructor that runs before the object's
 * other constructors. The registry checks that every site holds the jump
 * that the assembler emitted or its TEST form (in a file that `switchyard
 * prepatch` wrote its keys' initial states into), indexes the table by
 * (key, code) beside it (the table itself is not moved), and only then
 * writes the form the key's current state asks for wherever the site does
 * not hold it already (a prepatched file whose keys kept their initial
 * states: nowhere):
 * everything that can fail for want of memory happens before the first
 * write. A state change then finds a key's sites in every table by binary
 * search and patches all of them in one poke batch. The object's destructor
 * takes the table back before the object is unmapped.
 *
 * What each site holds, per table state:
 *
 *   state    sites hold                               next change of a key
 *   normal   the form of their key's state            that key's sites
 *   stale    what the file held (the registration's   that key's sites, and
 *            write failed; the poke engine undid      every site of every
 *            whatever it had written)                 stale table
 *
 * A change brings each site it covers to the form its key's state asks for,
 * whichever of its two forms the site holds (the poke engine skips sites
 * that already have it), so a stale table becomes normal at the first
 * change that succeeds.
 *
 * All state here is protected by the patch lock. Nothing here calls into
 * the dynamic linker with the patch lock held (lock_order.c): the object
 * lookups happen before the lock is taken, the split-key check after it is
 * released.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

/*
 * How a table's entries are found by key:
 *   SORTED   the table is in (key, code) order already: binary search
 *   INDEXED  index[] holds the positions in that order: binary search
 *   SCAN     no memory for an index: every change walks the whole table
 *            (correct, slower: reported at registration)
 */
enum table_order { ORDER_SORTED, ORDER_INDEXED, ORDER_SCAN };

struct jump_table {
	struct jump_table *next;
	struct sy_jump_entry *start;
	uint32_t *index;	/* ORDER_INDEXED: n positions */
	size_t n;
	enum table_order order;
	bool stale;		/* see the state table above */
	/* bit i: site i was under a debugger's breakpoint at registration
	 * and the breakpoint hides a TEST (a prepatched file); NULL: none */
	uint8_t *shadow_test;
	bool pooled;		/* from table_pool, not malloc */
	size_t n_short, n_long, n_refused;
};

static struct jump_table *tables;
static struct switchyard_stats reg;

/*
 * A few table descriptors for when malloc fails at registration: losing
 * the table would leave the object's sites on whatever path the assembler
 * emitted, whatever their keys say. Patch lock held.
 */
#define TABLE_POOL 8
static struct jump_table table_pool[TABLE_POOL];
static bool table_pool_used[TABLE_POOL];

static struct jump_table *table_alloc(void)
{
	struct jump_table *t = calloc(1, sizeof(*t));

	if (t)
		return t;
	for (int i = 0; i < TABLE_POOL; i++)
		if (!table_pool_used[i]) {
			table_pool_used[i] = true;
			t = &table_pool[i];
			memset(t, 0, sizeof(*t));
			t->pooled = true;
			return t;
		}
	return NULL;
}

static void table_free(struct jump_table *t)
{
	free(t->index);
	free(t->shadow_test);
	t->shadow_test = NULL;
	if (t->pooled)
		table_pool_used[t - table_pool] = false;
	else
		free(t);
}

/* ---- sorting ----------------------------------------------------------- */

static int cmp_uintptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

static bool entry_less(const struct sy_jump_entry *a,
		       const struct sy_jump_entry *b)
{
	uintptr_t ka = (uintptr_t)sy_entry_key(a), kb = (uintptr_t)sy_entry_key(b);

	return ka < kb || (ka == kb && sy_entry_code(a) < sy_entry_code(b));
}

/*
 * Open-addressing map from key address to its rank among the table's
 * distinct keys. Programs have few keys and many sites per key, so the
 * sort below is a counting sort on the rank: linear in the number of
 * sites.
 */
struct key_map {
	uintptr_t *slot_key;	/* 0: empty */
	uint32_t *slot_val;
	size_t mask, used;
};

static size_t key_slot(const struct key_map *m, uintptr_t k)
{
	size_t h = (size_t)((k >> 3) * 0x9e3779b97f4a7c15ull) & m->mask;

	while (m->slot_key[h] && m->slot_key[h] != k)
		h = (h + 1) & m->mask;
	return h;
}

/* (Re)size to cap slots, re-inserting the keys held. */
static int key_map_resize(struct key_map *m, size_t cap)
{
	struct key_map n = { calloc(cap, sizeof(uintptr_t)),
			     calloc(cap, sizeof(uint32_t)), cap - 1, m->used };

	if (!n.slot_key || !n.slot_val) {
		free(n.slot_key);
		free(n.slot_val);
		return -ENOMEM;
	}
	for (size_t i = 0; m->slot_key && i <= m->mask; i++)
		if (m->slot_key[i])
			n.slot_key[key_slot(&n, m->slot_key[i])] = m->slot_key[i];
	free(m->slot_key);
	free(m->slot_val);
	*m = n;
	return 0;
}

/* Insert k; returns 1 if new, 0 if present, -ENOMEM. Load stays <= 1/2. */
static int key_map_add(struct key_map *m, uintptr_t k)
{
	size_t h = key_slot(m, k);

	if (m->slot_key[h])
		return 0;
	if (2 * (m->used + 1) > m->mask + 1) {
		if (key_map_resize(m, 2 * (m->mask + 1)))
			return -ENOMEM;
		h = key_slot(m, k);
	}
	m->slot_key[h] = k;
	m->used++;
	return 1;
}

/* Code order of two entries of a table, for qsort_r over indices. */
static int cmp_index_code(const void *a, const void *b, void *table)
{
	const struct sy_jump_entry *e = (const struct sy_jump_entry *)table;
	uintptr_t x = sy_entry_code(&e[*(const uint32_t *)a]);
	uintptr_t y = sy_entry_code(&e[*(const uint32_t *)b]);

	return x < y ? -1 : x > y;
}

/*
 * Index a table by (key, code): *out receives the entries' positions in
 * that order, or NULL when the table already is in that order. A stable
 * counting sort on the key's rank (programs have few keys and many sites
 * per key), then each key's run put in code order (runs arrive nearly
 * sorted: the assembler emits records in code order). The table itself is
 * not moved: it stays as the file has it, and moving 16-byte entries at
 * random costs more than the 4-byte index. Large tables are mostly page
 * faults, so touching little memory is what makes this fast.
 */
static int build_index(const struct sy_jump_entry *e, size_t n, uint32_t **out)
{
	struct key_map m = { NULL, NULL, 0, 0 };
	uint32_t *perm = NULL, *rank_dst = NULL;
	uintptr_t *uniq = NULL;
	size_t *start = NULL, nk = 0, i;
	int r = -ENOMEM;

	*out = NULL;
	for (i = 1; i < n; i++)
		if (entry_less(&e[i], &e[i - 1]))
			break;
	if (i >= n)
		return 0;	/* already sorted */
	if (n > UINT32_MAX)
		return -E2BIG;

	perm = malloc(n * sizeof(*perm));
	rank_dst = malloc(n * sizeof(*rank_dst));	/* scratch */
	if (key_map_resize(&m, 256) || !perm || !rank_dst)
		goto out;
	/* Distinct keys. Key 0 (refused sites) is stored as 1 so that 0 can
	 * mark an empty slot; it still ranks first. */
	for (i = 0; i < n; i++) {
		int added = key_map_add(&m, (uintptr_t)sy_entry_key(&e[i]) | 1);

		if (added < 0)
			goto out;
		nk += (size_t)added;
	}
	uniq = malloc(nk * sizeof(*uniq));
	start = calloc(nk + 1, sizeof(*start));
	if (!uniq || !start)
		goto out;
	for (i = 0, nk = 0; i <= m.mask; i++)
		if (m.slot_key[i])
			uniq[nk++] = m.slot_key[i];
	qsort(uniq, nk, sizeof(*uniq), cmp_uintptr);
	for (i = 0; i < nk; i++)
		m.slot_val[key_slot(&m, uniq[i])] = (uint32_t)i;
	/* rank of each entry, kept in perm until the placement pass */
	for (i = 0; i < n; i++) {
		perm[i] = m.slot_val[key_slot(&m, (uintptr_t)sy_entry_key(&e[i]) | 1)];
		start[perm[i] + 1]++;
	}
	for (i = 0; i < nk; i++)
		start[i + 1] += start[i];
	for (i = 0; i < n; i++)
		rank_dst[i] = (uint32_t)start[perm[i]]++;
	for (i = 0; i < n; i++)
		perm[rank_dst[i]] = (uint32_t)i;
	/* start[k] is now the end of run k; perm[slot] = source index. */
	for (size_t k = 0, lo = 0; k < nk; lo = start[k++]) {
		size_t hi = start[k], j;

		for (j = lo + 1; j < hi && sy_entry_code(&e[perm[j - 1]]) <=
						   sy_entry_code(&e[perm[j]]); j++)
			;
		if (j < hi)
			qsort_r(perm + lo, hi - lo, sizeof(*perm), cmp_index_code,
				(void *)e);
	}
	*out = perm;
	perm = NULL;
	r = 0;
out:
	free(m.slot_key);
	free(m.slot_val);
	free(perm);
	free(rank_dst);
	free(uniq);
	free(start);
	return r;
}

/* The i-th entry of t in (key, code) order (in table order for SCAN). */
static struct sy_jump_entry *nth(const struct jump_table *t, size_t i)
{
	return &t->start[t->order == ORDER_INDEXED ? t->index[i] : i];
}

/* Position in (key, code) order of the first entry of `key`, or t->n.
 * Not for ORDER_SCAN tables. */
static size_t lower_bound(const struct jump_table *t,
			  const struct static_key *key)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if ((uintptr_t)sy_entry_key(nth(t, mid)) < (uintptr_t)key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---- patching ----------------------------------------------------------- */

/* What a breakpoint found over site e at registration hides: the jump the
 * compiler emitted, unless the file said TEST (decode_sites()). */
static bool shadow_jumps(const struct jump_table *t,
			 const struct sy_jump_entry *e)
{
	size_t i = (size_t)(e - t->start);

	return !t->shadow_test || !(t->shadow_test[i / 8] & (1u << (i % 8)));
}

/*
 * Describe the change of one site to its form for `enabled`: JMP when the
 * key's state differs from the branch bit, as in the kernel. The old bytes
 * are the other form: the poke engine skips a site that already has the
 * new one (a stale table's, see the top of this file). Old and new differ in
 * the opcode byte only (sy_arch_jump_encode_pair()), which is what the poke
 * engine's live-safety rule requires. `compiled`: the table (being
 * registered, or stale) whose site may still hold what the file held, so
 * a debugger's breakpoint over it hides that (shadow_jumps()); NULL: it
 * hides the other form, the one of the key's state before this change
 * (the invariant of sy_arch_site_check()). False for a site that is not to be
 * touched (refused at registration, or dead).
 */
static bool describe(const struct sy_jump_entry *e, bool enabled,
		     const struct jump_table *compiled, struct sy_poke_desc *d)
{
	uintptr_t code = sy_entry_code(e), target = sy_entry_target(e);
	bool jump = enabled != sy_entry_branch(e);

	if (!sy_entry_key(e) || (e->key & SY_ENTRY_DEAD))
		return false;
	d->addr = code;
	d->len = sy_entry_len(e);
	d->key = sy_entry_key(e);
	d->hidden_jump = compiled ? shadow_jumps(compiled, e) : !jump;
	d->exact = false;
	sy_arch_jump_encode_pair(code, target, d->len, !jump, jump, d->old,
				 d->new_);
	return true;
}

/* A key's state as its sites must show it. Patch lock held: only the lock
 * holder moves a count across 0 (the -1 of a first enable included), so
 * "zero or not" is stable here. */
static bool key_state(const struct static_key *k)
{
	return __atomic_load_n(&k->enabled, __ATOMIC_RELAXED) != 0;
}

/*
 * A poke source over the sites of one key being changed: its run in each
 * normal table (every entry of a SCAN table, filtered), and every site of
 * every stale table (each to its own key's state). Walks the table list
 * itself, so that a change allocates nothing (it may run in a signal
 * handler: see poke.c).
 */
struct key_iter {
	const struct static_key *key;
	bool enabled;
	const struct jump_table *t;	/* current table */
	size_t i, end;			/* position in it */
};

static void key_iter_enter(struct key_iter *k)
{
	for (; k->t; k->t = k->t->next) {
		const struct jump_table *t = k->t;

		if (t->stale || t->order == ORDER_SCAN) {
			k->i = 0;
			k->end = t->n;
		} else {
			k->i = lower_bound(t, k->key);
			for (k->end = k->i;
			     k->end < t->n && sy_entry_key(nth(t, k->end)) == k->key;
			     k->end++)
				;
		}
		if (k->i < k->end)
			return;
	}
}

static void key_iter_rewind(void *ctx)
{
	struct key_iter *k = ctx;

	k->t = tables;
	key_iter_enter(k);
}

static bool key_iter_next(void *ctx, struct sy_poke_desc *d)
{
	struct key_iter *k = ctx;

	while (k->t) {
		while (k->i < k->end) {
			const struct sy_jump_entry *e = nth(k->t, k->i++);
			const struct static_key *key = sy_entry_key(e);
			bool en;

			if (key == k->key)
				en = k->enabled;
			else if (k->t->stale && key)
				en = key_state(key);
			else
				continue;
			if (describe(e, en, k->t->stale ? k->t : NULL, d))
				return true;
		}
		k->t = k->t->next;
		key_iter_enter(k);
	}
	return false;
}

int sy_jump_label_update(struct static_key *key, bool enabled)
{
	struct key_iter k = { key, enabled, NULL, 0, 0 };
	struct sy_poke_src src = { key_iter_rewind, key_iter_next, &k };
	int r = sy_poke_apply(&src);

	if (!r)
		for (struct jump_table *t = tables; t; t = t->next)
			if (t->stale) {
				t->stale = false;
				reg.stale_objects--;
			}
	return r;
}

/*
 * Several keys in one batch, one core sync: each key's sites to its state,
 * key after key (the same walk as one key's). A stale table would be
 * walked whole once per key, and its sites described several times in one
 * batch: then -EAGAIN, and the caller changes the keys one at a time.
 */
struct multi_iter {
	struct static_key *const *keys;
	const bool *en;
	size_t n, cur;
	struct key_iter k;
};

static void multi_iter_rewind(void *ctx)
{
	struct multi_iter *m = ctx;

	m->cur = 0;
	m->k = (struct key_iter){ m->keys[0], m->en[0], tables, 0, 0 };
	key_iter_enter(&m->k);
}

static bool multi_iter_next(void *ctx, struct sy_poke_desc *d)
{
	struct multi_iter *m = ctx;

	while (m->cur < m->n) {
		if (key_iter_next(&m->k, d))
			return true;
		if (++m->cur == m->n)
			break;
#if defined(SY__KEYS_BATCH_BROKEN) && SY__KEYS_BATCH_BROKEN == 1
		/* negative control of tests/static_key/test_keys_batch.c (a
		 * test-only build): the walk ends after the first key's
		 * sites */
		break;
#endif
		m->k = (struct key_iter){ m->keys[m->cur], m->en[m->cur],
					  tables, 0, 0 };
		key_iter_enter(&m->k);
	}
	return false;
}

int sy_jump_label_update_n(struct static_key *const *keys, const bool *en,
			   size_t n)
{
	struct multi_iter m = { keys, en, n, 0, { NULL, false, NULL, 0, 0 } };
	struct sy_poke_src src = { multi_iter_rewind, multi_iter_next, &m };

	if (!n)
		return 0;
#if defined(SY__KEYS_BATCH_BROKEN) && SY__KEYS_BATCH_BROKEN == 3
	/* negative control of tests/static_key/test_keys_batch.c (a
	 * test-only build): always the one-batch-per-key fallback */
	return -EAGAIN;
#endif
	if (reg.stale_objects)
		return -EAGAIN;
	return sy_poke_apply(&src);
}

/* ---- registration ------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void account(const struct jump_table *t, int sign)
{
	reg.objects += (uint64_t)sign;
	reg.sites += (uint64_t)sign * t->n;
	reg.sites_short += (uint64_t)sign * t->n_short;
	reg.sites_long += (uint64_t)sign * t->n_long;
	reg.sites_refused += (uint64_t)sign * t->n_refused;
	if (t->stale)
		reg.stale_objects += (uint64_t)sign;
}

static struct jump_table *find_table(const struct sy_jump_entry *start)
{
	for (struct jump_table *t = tables; t; t = t->next)
		if (t->start == start)
			return t;
	return NULL;
}

/*
 * Site i holds a debugger's breakpoint (gdb plants them before `run`, so
 * before registration). The breakpoint keeps the byte it replaced and
 * writes it back whenever it steps or is removed: the compiler's jump, or
 * in a prepatched file a TEST. Only the file can tell which; a file that
 * is not the one loaded (rebuilt since) tells nothing, and the compiler's
 * jump is assumed, as for a file nobody prepatched. Rare (a debugger at
 * start-up): the file is read here, under the patch lock, which allows
 * it (no dynamic linker call).
 */
static void note_shadow(struct jump_table *t, const struct sy_jump_entry *e,
			size_t i, unsigned len, const struct sy_obj *o)
{
	uint8_t file[SY_ARCH_MAX_INSN];
	uintptr_t code = sy_entry_code(&e[i]);

	if (sy_obj_file_read(o, code, file, len) ||
	    sy_arch_jump_shadow(file, (const uint8_t *)code, len) != 0)
		return;
	if (!t->shadow_test) {
		t->shadow_test = calloc((t->n + 7) / 8, 1);
		if (!t->shadow_test) {
			/* A state that must not arise, short of malloc failing
			 * at start-up under a debugger: the breakpoint then
			 * restores a TEST where a jump was assumed, which the
			 * next change of the key handles as it does any site
			 * (sy_arch_site_check()). */
			return;
		}
	}
	t->shadow_test[i / 8] |= (uint8_t)(1u << (i % 8));
}

/*
 * Check each site's bytes and record its length; refuse (and neutralise,
 * key 0 sorts first and matches no key) any that does not hold the jump its
 * record describes.
 */
static void decode_sites(struct jump_table *t, struct sy_jump_entry *e,
			 size_t n, const struct sy_obj *o)
{
	for (size_t i = 0; i < n; i++) {
		unsigned len;

		if (!sy_entry_key(&e[i]))
			continue;
		if (sy_arch_jump_decode(sy_entry_code(&e[i]),
					sy_entry_target(&e[i]), &len)) {
			char found[16];
			const uint8_t *p = (const uint8_t *)sy_entry_code(&e[i]);

			sy_hex(found, sizeof(found), p, 5);
			sy_report(SWITCHYARD_LOG_ERROR, sy_entry_key(&e[i]),
				  sy_entry_code(&e[i]),
				  "%s: static key " SY_REPORT_KEY ": site "
				  SY_REPORT_SITE " holds [%s], not the jump "
				  "to %p the compiler emitted%s; the site is "
				  "ignored: it keeps those bytes whatever the "
				  "key's state", sy_obj_name(o), found,
				  (void *)sy_entry_target(&e[i]),
				  sy_arch_is_trap(p) ? " (the int3 is a "
				  "debugger breakpoint, but not over the "
				  "jump's opcode)" : "");
			e[i].key = 0;
			t->n_refused++;
			continue;
		}
		if (sy_arch_is_trap((const uint8_t *)sy_entry_code(&e[i])))
			note_shadow(t, e, i, len, o);
		e[i].key = (e[i].key & ~(uintptr_t)SY_ENTRY_LONG) |
			   (SY_ARCH_JUMP_IS_LONG(len) ? SY_ENTRY_LONG : 0);
		if (len == 5)
			t->n_long++;
		else
			t->n_short++;
	}
}

/* A poke source over a new (or stale) table, in its own order (code
 * order, which makes the fewest write chunks): every site to its key's
 * state. */
struct table_iter {
	const struct sy_jump_entry *e;
	size_t n, i;
	const struct jump_table *t;
};

static void table_iter_rewind(void *ctx)
{
	((struct table_iter *)ctx)->i = 0;
}

static bool table_iter_next(void *ctx, struct sy_poke_desc *d)
{
	struct table_iter *t = ctx;

	while (t->i < t->n) {
		const struct sy_jump_entry *e = &t->e[t->i++];
		struct static_key *key = sy_entry_key(e);

		if (key && describe(e, key_state(key), t->t, d))
			return true;
	}
	return false;
}

/*
 * The distinct keys of a table, for the split check that runs after the
 * lock is released (it needs the dynamic linker). Malloc'ed, *nkeys long;
 * NULL when out of memory (the check is a diagnostic: skipped then).
 */
static const struct static_key **distinct_keys(const struct jump_table *t,
					       size_t *nkeys)
{
	const struct static_key **v = NULL;
	size_t n = 0, cap = 0;

	*nkeys = 0;
	if (t->order == ORDER_SCAN)
		return NULL;
	/* one look per distinct key: skip each key's run by binary search
	 * (walking 100,000 entries through the index would miss the cache) */
	for (size_t i = 0; i < t->n;) {
		const struct static_key *key = sy_entry_key(nth(t, i));

		i = lower_bound(t, (const struct static_key *)((uintptr_t)key + 1));
		if (!key)
			continue;
		if (n == cap) {
			size_t c = cap ? 2 * cap : 16;
			const struct static_key **nv = realloc(v, c * sizeof(*v));

			if (!nv) {
				free(v);
				return NULL;
			}
			v = nv;
			cap = c;
		}
		v[n++] = key;
	}
	*nkeys = n;
	return v;
}

/* Patch lock held. */
static int jump_table_add_locked(struct sy_jump_entry *start, size_t n,
				 const struct sy_obj *o,
			   const struct static_key ***keys, size_t *nkeys)
{
	struct table_iter it = { start, n, 0, NULL };
	struct sy_poke_src src = { table_iter_rewind, table_iter_next, &it };
	struct jump_table *t;
	int r;

	if (find_table(start))
		return 0;	/* the same object's glue, twice (LTO) */
	t = table_alloc();
	if (!t) {
		/* Impossible short of a process with more than TABLE_POOL
		 * objects loaded while malloc fails: nothing written. */
		sy_log(SWITCHYARD_LOG_ERROR,
		       "%s: out of memory registering %zu sites: they keep "
		       "the jumps the compiler emitted and do not follow "
		       "their keys", sy_obj_name(o), n);
		return -ENOMEM;
	}
	t->start = start;
	t->n = n;
	it.t = t;
	/* Decode first: a refused site gets key 0, which the index then
	 * moves out of every key's run. Index before writing: a failure
	 * after the first write would leave sites nobody can find. */
	decode_sites(t, start, n, o);
	r = build_index(start, n, &t->index);
	if (!r) {
		t->order = t->index ? ORDER_INDEXED : ORDER_SORTED;
	} else {
		t->order = ORDER_SCAN;
		sy_log(SWITCHYARD_LOG_WARN,
		       "%s: no memory to index %zu sites: every change of "
		       "their keys will scan the whole table", sy_obj_name(o), n);
	}
	r = sy_poke_apply(&src);
	if (r) {
		t->stale = true;
		sy_log(SWITCHYARD_LOG_ERROR,
		       "%s: could not bring its %zu sites to their keys' "
		       "state (%s): they hold the jumps the compiler emitted "
		       "until a change of any key succeeds", sy_obj_name(o), n,
		       strerror(-r));
	}
	t->next = tables;
	tables = t;
	account(t, 1);
	*keys = distinct_keys(t, nkeys);
	return r;
}

int sy_jump_table_add(struct sy_jump_entry *start, size_t n,
		      const struct sy_obj *o,
		      const struct static_key ***keys, size_t *nkeys)
{
	uint64_t t0 = now_ns();
	int r = jump_table_add_locked(start, n, o, keys, nkeys);

	reg.register_ns += now_ns() - t0;
	return r;
}

/*
 * An object is going away (its destructors run before it is unmapped). A
 * site in another object that still names a key inside it would make later
 * changes read and write freed memory, or, once the address is reused,
 * patch it as a site of an unrelated key. The dynamic linker normally
 * prevents this (a symbol binding to the key makes the user depend on its
 * definer, so the definer is unloaded last), but a table can also hold a key
 * reached some other way. Such sites are reported and marked dead: they keep
 * their current form and are never written again.
 */
static void kill_orphans(const struct sy_obj *o)
{
	/* The main program is never unmapped before the process ends: its
	 * keys (copy-relocated ones included) outlive every table. */
	if (!o->found || !o->name[0])
		return;
	for (struct jump_table *u = tables; u; u = u->next) {
		size_t dead = 0;

		for (int r = 0; r < o->nseg; r++) {
			/* keys in [lo, hi): one run in (key, code) order */
			size_t i = u->order == ORDER_SCAN ? 0 :
				   lower_bound(u, (const struct static_key *)o->lo[r]);

			for (; i < u->n; i++) {
				struct sy_jump_entry *e = nth(u, i);
				uintptr_t k = (uintptr_t)sy_entry_key(e);

				if (k >= o->hi[r] && u->order != ORDER_SCAN)
					break;
				if (k < o->lo[r] || k >= o->hi[r] ||
				    (e->key & SY_ENTRY_DEAD))
					continue;
				e->key |= SY_ENTRY_DEAD;
				dead++;
			}
		}
		if (dead)
			sy_log(SWITCHYARD_LOG_ERROR,
			       "%s is being unloaded, but %zu sites in the table "
			       "at %p still use its keys: they keep their current "
			       "form and are never patched again",
			       o->name, dead, (void *)u->start);
	}
}

void sy_jump_table_del(const struct sy_jump_entry *start,
		       const struct sy_obj *o)
{
	struct jump_table **pp, *t;

	for (pp = &tables; (t = *pp); pp = &t->next) {
		if (t->start == start) {
			*pp = t->next;
			account(t, -1);
			table_free(t);
			break;
		}
	}
	kill_orphans(o);
}

void sy_registry_visit(sy_site_visit fn, void *arg)
{
	for (struct jump_table *t = tables; t; t = t->next)
		for (size_t i = 0; i < t->n; i++) {
			const struct sy_jump_entry *e = nth(t, i);

			if (sy_entry_key(e) && !(e->key & SY_ENTRY_DEAD))
				fn(e, arg);
		}
}

static int get_stats(struct switchyard_stats *st)
{
	*st = reg;
	sy_poke_stats(st);
	return 0;
}

int switchyard_get_stats(struct switchyard_stats *st)
{
	if (!st)
		return -EINVAL;
	return SY_GUARDED(SY_LOCKED(get_stats(st)));
}
