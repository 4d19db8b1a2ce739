/* SPDX-License-Identifier: MIT */
/*
 * registry.c - the per-object tables of jump label sites.
 *
 * Each executable or shared object that includes the header carries its
 * sites in the section "sy_jump_entries" and hands it to
 * sy__register_jump_table() from a constructor that runs before the object's
 * other constructors. The registry checks that every site holds the jump
 * that the assembler emitted, writes the no-op (TEST) form wherever the
 * key's current state asks for the straight-line path, and indexes the
 * table by (key, code) beside it (the table itself is not moved). A state
 * change then finds a key's sites in every table by binary search and
 * patches all of them in one poke batch. The object's destructor takes the
 * table back before the object is unmapped.
 *
 * All state here is protected by the patch lock.
 */
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "internal.h"

struct sy_table {
	struct sy_table *next;
	struct sy_jump_entry *start;
	uint32_t *index;	/* entries in (key, code) order; NULL: identity */
	char *path;		/* the object's file, for names; may be NULL */
	uintptr_t bias;		/* its load bias */
	bool located;		/* path and bias looked up (on first use) */
	size_t n;
	size_t n_short, n_long, n_refused;
};

static struct sy_table *tables;
static struct switchyard_stats reg;

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
	uint32_t *perm = NULL, *rank_dst;
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

	perm = malloc(2 * n * sizeof(*perm));
	if (key_map_resize(&m, 256) || !perm)
		goto out;
	rank_dst = perm + n;
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
	*out = perm;	/* the first n of the 2n allocated */
	perm = NULL;
	r = 0;
out:
	free(m.slot_key);
	free(m.slot_val);
	free(perm);
	free(uniq);
	free(start);
	return r;
}

/* The i-th entry of t in (key, code) order. */
static const struct sy_jump_entry *nth(const struct sy_table *t, size_t i)
{
	return &t->start[t->index ? t->index[i] : i];
}

/* Position in (key, code) order of the first entry of `key`, or t->n. */
static size_t lower_bound(const struct sy_table *t, const struct static_key *key)
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

/*
 * Describe the change of one site to its form for `enabled`: JMP when the
 * key's state differs from the branch bit, as in the kernel. `from_jump`:
 * the site still holds the jump the assembler emitted (registration).
 * False when the site already has that form. Old and new differ in the
 * opcode byte only (sy_arch_jump_encode_pair()), which is what the poke
 * engine's live-safety rule requires; at registration no thread runs the
 * object's code yet, but the same rule applies anyway.
 */
static bool describe(const struct sy_jump_entry *e, bool enabled,
		     bool from_jump, struct sy_poke_desc *d)
{
	uintptr_t code = sy_entry_code(e), target = sy_entry_target(e);
	bool jump = enabled != sy_entry_branch(e);

	if (!sy_entry_key(e) || (e->key & SY_ENTRY_DEAD) || (from_jump && jump))
		return false;
	d->addr = code;
	d->len = sy_entry_len(e);
	sy_arch_jump_encode_pair(code, target, d->len, from_jump || !jump, jump,
				 d->old, d->new_);
	return true;
}

/* The sites of one key: its run in each table. */
struct key_run {
	const struct sy_table *t;
	size_t lo, n;
};

/*
 * Room for one run per table, grown at registration, so that a state change
 * allocates nothing (it may run in a signal handler: see poke.c).
 */
static struct key_run *run_buf;
static size_t run_cap, ntables;

/* A poke source over a key's runs. */
struct key_iter {
	const struct key_run *run;
	size_t nruns, r, j;
	bool enabled;
};

static void key_iter_rewind(void *ctx)
{
	struct key_iter *k = ctx;

	k->r = k->j = 0;
}

static bool key_iter_next(void *ctx, struct sy_poke_desc *d)
{
	struct key_iter *k = ctx;

	while (k->r < k->nruns) {
		const struct key_run *run = &k->run[k->r];

		if (k->j == run->n) {
			k->r++;
			k->j = 0;
			continue;
		}
		if (describe(nth(run->t, run->lo + k->j++), k->enabled, false, d))
			return true;
	}
	return false;
}

int sy_jump_label_update(struct static_key *key, bool enabled)
{
	struct key_iter k = { run_buf, 0, 0, 0, enabled };
	struct sy_poke_src src = { key_iter_rewind, key_iter_next, &k };
	size_t total = 0;

	for (struct sy_table *t = tables; t; t = t->next) {
		size_t lo = lower_bound(t, key), hi = lo;

		while (hi < t->n && sy_entry_key(nth(t, hi)) == key)
			hi++;
		if (hi == lo)
			continue;
		run_buf[k.nruns].t = t;
		run_buf[k.nruns].lo = lo;
		run_buf[k.nruns++].n = hi - lo;
		total += hi - lo;
	}
	return total ? sy_poke_apply(&src) : 0;
}

/* ---- registration ------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void account(const struct sy_table *t, int sign)
{
	ntables += (size_t)sign;
	reg.objects += (uint64_t)sign;
	reg.sites += (uint64_t)sign * t->n;
	reg.sites_short += (uint64_t)sign * t->n_short;
	reg.sites_long += (uint64_t)sign * t->n_long;
	reg.sites_refused += (uint64_t)sign * t->n_refused;
}

static struct sy_table *find_table(const struct sy_jump_entry *start)
{
	for (struct sy_table *t = tables; t; t = t->next)
		if (t->start == start)
			return t;
	return NULL;
}

/*
 * Check each site's bytes and record its length; refuse (and neutralise,
 * key 0 sorts first and matches no key) any that does not hold the jump its
 * record describes.
 */
static void decode_sites(struct sy_table *t, struct sy_jump_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned len;

		if (!sy_entry_key(&e[i]))
			continue;
		if (sy_arch_jump_decode(sy_entry_code(&e[i]),
					sy_entry_target(&e[i]), &len)) {
			char found[16];

			sy_hex(found, sizeof(found),
			       (const uint8_t *)sy_entry_code(&e[i]), 5);
			sy_log(SWITCHYARD_LOG_ERROR,
			       "site %p of key %p: expected a jump to %p, found "
			       "[%s]; site ignored",
			       (void *)sy_entry_code(&e[i]),
			       (void *)sy_entry_key(&e[i]),
			       (void *)sy_entry_target(&e[i]), found);
			e[i].key = 0;
			t->n_refused++;
			continue;
		}
		e[i].key = (e[i].key & ~(uintptr_t)SY_ENTRY_LONG) |
			   (len == 5 ? SY_ENTRY_LONG : 0);
		if (len == 5)
			t->n_long++;
		else
			t->n_short++;
	}
}

struct exe_lookup {
	const char *name;
	uintptr_t addr;		/* result, 0: not defined by the executable */
};

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

/*
 * Look name up in the dynamic symbol table of one loaded object, through
 * its DT_GNU_HASH. Returns the run-time address of its definition, or 0.
 * Not dlsym(): dlsym(RTLD_DEFAULT) makes the calling object depend on
 * wherever the symbol is found, which would keep every dlopen'ed library
 * that exports a key loaded forever.
 */
static uintptr_t gnu_lookup(const struct dl_phdr_info *info, const char *name)
{
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const uint32_t *gh = NULL;

	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr +
						  info->dlpi_phdr[i].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		/* glibc relocates these in place on x86-64; allow for both */
		uintptr_t p = dyn->d_un.d_ptr;

		if (p < info->dlpi_addr)
			p += info->dlpi_addr;
		if (dyn->d_tag == DT_SYMTAB)
			symtab = (const ElfW(Sym) *)p;
		else if (dyn->d_tag == DT_STRTAB)
			strtab = (const char *)p;
		else if (dyn->d_tag == DT_GNU_HASH)
			gh = (const uint32_t *)p;
	}
	if (!symtab || !strtab || !gh || !gh[0])
		return 0;

	uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2];
	const uint32_t *buckets =
		(const uint32_t *)((const ElfW(Addr) *)(gh + 4) + bloom_size);
	const uint32_t *chain = buckets + nbuckets;
	uint32_t h = gnu_hash(name);

	for (uint32_t i = buckets[h % nbuckets]; i && i >= symoffset; i++) {
		uint32_t h2 = chain[i - symoffset];
		const ElfW(Sym) *sym = &symtab[i];

		if ((h | 1) == (h2 | 1) && !strcmp(name, strtab + sym->st_name))
			return sym->st_shndx == SHN_UNDEF ? 0 :
			       info->dlpi_addr + sym->st_value;
		if (h2 & 1)
			break;
	}
	return 0;
}

/* dl_iterate_phdr callback: the main program is the first object. */
static int exe_lookup_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct exe_lookup *q = arg;

	(void)size;
	q->addr = gnu_lookup(info, q->name);
	return 1;
}

/* dl_iterate_phdr callback: the first shared object (not the main
 * program) that defines q->name. */
struct lib_lookup {
	const char *name;
	const char *path;
	int seen;
};

static int lib_lookup_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct lib_lookup *q = arg;

	(void)size;
	if (q->seen++ == 0)
		return 0;	/* the main program */
	if (!gnu_lookup(info, q->name))
		return 0;
	q->path = info->dlpi_name;
	return 1;
}

char *sy_definer_of(const char *name)
{
	struct lib_lookup q = { name, NULL, 0 };

	dl_iterate_phdr(lib_lookup_cb, &q);
	return q.path && q.path[0] ? strdup(q.path) : NULL;
}

/* dl_iterate_phdr callback: the object that maps q->addr. */
struct obj_query {
	uintptr_t addr;
	const char *name;	/* dlpi_name: "" for the main program */
	uintptr_t bias;
	bool found;
	int nseg;		/* its PT_LOAD segments (the first 16) */
	uintptr_t lo[16], hi[16];
};

static int obj_query_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct obj_query *q = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && q->addr >= lo &&
		    q->addr < lo + ph->p_memsz)
			q->found = true;
	}
	if (!q->found)
		return 0;
	q->name = info->dlpi_name;
	q->bias = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum && q->nseg < 16; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		q->lo[q->nseg] = info->dlpi_addr + ph->p_vaddr;
		q->hi[q->nseg] = q->lo[q->nseg] + ph->p_memsz;
		q->nseg++;
	}
	return 1;
}

/*
 * The file and load bias of the object that maps addr. *path is malloc'ed
 * ("/proc/self/exe" resolved for the main program), or NULL.
 */
int sy_object_of(uintptr_t addr, char **path, uintptr_t *bias)
{
	struct obj_query q = { .addr = addr };

	*path = NULL;
	*bias = 0;
	dl_iterate_phdr(obj_query_cb, &q);
	if (!q.found)
		return -ENOENT;
	*bias = q.bias;
	if (q.name && q.name[0]) {
		*path = strdup(q.name);
	} else {
		char buf[4096];
		ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

		if (n > 0) {
			buf[n] = 0;
			*path = strdup(buf);
		}
	}
	return *path ? 0 : -ENOMEM;
}

void sy_registry_visit(sy_site_visit fn, void *arg)
{
	for (struct sy_table *t = tables; t; t = t->next) {
		/* Only introspection needs the file: not looked up at load. */
		if (!t->located) {
			sy_object_of((uintptr_t)t->start, &t->path, &t->bias);
			t->located = true;
		}
		for (size_t i = 0; i < t->n; i++) {
			const struct sy_jump_entry *e = nth(t, i);

			if (sy_entry_key(e) && !(e->key & SY_ENTRY_DEAD))
				fn(e, t->path, t->bias, arg);
		}
	}
}

/*
 * A key exported by a shared object can exist twice: the executable holds
 * a copy (a copy relocation: what gcc and clang emit for an extern variable
 * in PIE and non-PIE code alike), which is the program's instance, while a
 * library linked with -Bsymbolic, or whose key is protected, keeps using its
 * own. Flipping one then does not reach the sites that use the other: the
 * same split any exported variable suffers there. It cannot be repaired
 * from here, so it is reported at registration, with the fix: have the
 * executable reach such keys through the GOT.
 */
static void check_split_keys(const struct sy_table *t)
{
	/* one look per distinct key: skip each key's run by binary search
	 * (walking 100,000 entries through the index would miss the cache) */
	for (size_t i = 0; i < t->n;) {
		const struct static_key *key = sy_entry_key(nth(t, i));
		struct exe_lookup q;
		Dl_info info;

		i = lower_bound(t, (const struct static_key *)((uintptr_t)key + 1));
		if (!key)
			continue;
		if (!dladdr(key, &info) || !info.dli_sname ||
		    info.dli_saddr != (void *)key)
			continue;
		q.name = info.dli_sname;
		q.addr = 0;
		dl_iterate_phdr(exe_lookup_cb, &q);
		if (!q.addr || q.addr == (uintptr_t)key)
			continue;
		sy_log(SWITCHYARD_LOG_ERROR,
		       "static key '%s': the sites of %s use the instance at %p, "
		       "the program's is at %p (a copy in the executable, and "
		       "a -Bsymbolic or protected definition in %s): changing "
		       "one does not reach the sites of the other. Build the "
		       "executable with -mno-direct-extern-access (gcc) or "
		       "-fno-direct-access-external-data (clang), or define the "
		       "key in the executable",
		       info.dli_sname, info.dli_fname, (void *)key,
		       (void *)q.addr, info.dli_fname);
	}
}

/* A poke source over a new table, in its own order (code order): every
 * site still holds the jump the assembler emitted. */
struct table_iter {
	const struct sy_jump_entry *e;
	size_t n, i;
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

		if (key && describe(e, static_key_count(key) > 0, true, d))
			return true;
	}
	return false;
}

/* Patch lock held. */
static int register_locked(struct sy_jump_entry *start, size_t n)
{
	struct table_iter it = { start, n, 0 };
	struct sy_poke_src src = { table_iter_rewind, table_iter_next, &it };
	struct sy_table *t;
	int r;

	if (find_table(start))
		return 0;	/* the same object's glue, twice (LTO) */
	if (ntables + 1 > run_cap) {
		size_t cap = 2 * (ntables + 1);
		struct key_run *rb = realloc(run_buf, cap * sizeof(*rb));

		if (!rb)
			return -ENOMEM;
		run_buf = rb;
		run_cap = cap;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	/* Decode first: a refused site gets key 0, which the index then
	 * moves out of every key's run. Patch before indexing: the table is
	 * in the order the assembler emitted, code order, which makes the
	 * fewest write chunks. */
	decode_sites(t, start, n);
	r = sy_poke_apply(&src);
	if (r)
		sy_log(SWITCHYARD_LOG_ERROR,
		       "could not bring the %zu sites at %p to their keys' "
		       "state: %s; their branches follow the emitted jumps",
		       n, (void *)start, strerror(-r));
	if (build_index(start, n, &t->index)) {
		/* Without the index, binary search would miss sites. */
		sy_log(SWITCHYARD_LOG_ERROR, "out of memory indexing %zu sites",
		       n);
		free(t);
		return -ENOMEM;
	}
	t->start = start;
	t->n = n;
	t->next = tables;
	tables = t;
	account(t, 1);
	check_split_keys(t);
	return r;
}

static int register_timed(struct sy_jump_entry *start, size_t n)
{
	uint64_t t0 = now_ns();
	int r = register_locked(start, n);

	reg.register_ns += now_ns() - t0;
	return r;
}

int sy__register_jump_table(struct sy_jump_entry *start,
			    struct sy_jump_entry *stop)
{
	if (!start || stop <= start)
		return 0;
	if ((uintptr_t)start % _Alignof(struct sy_jump_entry) ||
	    ((uintptr_t)stop - (uintptr_t)start) % sizeof(*start)) {
		sy_log(SWITCHYARD_LOG_ERROR, "malformed site table %p..%p",
		       (void *)start, (void *)stop);
		return -EINVAL;
	}
	/* A library may be loaded by a thread that holds the patch lock
	 * (dlopen between switchyard_patch_lock/unlock): SY_LOCKED then does
	 * not take it again. */
	return SY_LOCKED(register_timed(start, (size_t)(stop - start)));
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
static void kill_orphans(const struct sy_table *gone)
{
	struct obj_query o = { .addr = (uintptr_t)gone->start };

	dl_iterate_phdr(obj_query_cb, &o);
	/* The main program is never unmapped before the process ends: its
	 * keys (copy-relocated ones included) outlive every table. */
	if (!o.found || !o.name || !o.name[0])
		return;
	for (struct sy_table *u = tables; u; u = u->next) {
		size_t dead = 0;

		for (int r = 0; r < o.nseg; r++) {
			for (size_t i = lower_bound(u, (const struct static_key *)o.lo[r]);
			     i < u->n && (uintptr_t)sy_entry_key(nth(u, i)) < o.hi[r];
			     i++) {
				struct sy_jump_entry *e = &u->start[u->index ? u->index[i] : i];

				if (!(e->key & SY_ENTRY_DEAD)) {
					e->key |= SY_ENTRY_DEAD;
					dead++;
				}
			}
		}
		if (dead)
			sy_log(SWITCHYARD_LOG_ERROR,
			       "%s is being unloaded, but %zu sites in the table "
			       "at %p still use its keys: they keep their current "
			       "form and are never patched again",
			       o.name, dead,
			       (void *)u->start);
	}
}

static int unregister_locked(const struct sy_jump_entry *start)
{
	struct sy_table **pp, *t;

	for (pp = &tables; (t = *pp); pp = &t->next) {
		if (t->start == start) {
			*pp = t->next;
			kill_orphans(t);
			account(t, -1);
			free(t->index);
			free(t->path);
			free(t);
			break;
		}
	}
	return 0;
}

int sy__unregister_jump_table(struct sy_jump_entry *start,
			      struct sy_jump_entry *stop)
{
	(void)stop;
	return SY_LOCKED(unregister_locked(start));
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
