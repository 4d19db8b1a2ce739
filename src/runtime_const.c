/* SPDX-License-Identifier: MIT */
/*
 * runtime_const.c - run-time constants (<switchyard/runtime_const.h>).
 *
 * A site (arch/x86_64_runtime_const.h, arch/aarch64_runtime_const.h) is
 * a guard, a jump to out-of-line code that reads the variable, followed by
 * the instructions holding a placeholder immediate. runtime_const_init(sym),
 * for every site of sym:
 *  1. writes the value into the immediate. No thread executes it: the
 *     guard has jumped over it since the site was compiled, and nothing
 *     but this init turns the guard. Verified first: the placeholder, or
 *     already the value (nothing to do), else refused.
 *  2. sync (membarrier SYNC_CORE; x86-64: SDM vol. 3 8.1.3; AArch64: the
 *     engine's cache maintenance after the write, and a context
 *     synchronisation event on every core, Arm ARM B2.4.4): no core keeps
 *     stale bytes of the immediate once the guard lets it in.
 *  3. turns the guard into its no-op: x86-64 JMP32 -> TEST32, one byte,
 *     the keys' rule (a thread decodes the old or the new opcode; rel32 is
 *     the same bytes in both); AArch64 B -> NOP, one word, both on the Arm
 *     ARM's list of instructions that may change under a running core
 *     (B2.2.5). Synced by the engine, so that every thread reads the
 *     immediate by the time init returns (either path gives the same
 *     value).
 * What the arch gives (sy_arch.h): sy_arch_rc_valid(), sy_arch_rc_imm()
 * (step 1's change) and sy_arch_rc_guard() (step 3's), with
 * SY_ARCH_HAVE_RC_HOOKS; or, with SY_RC_GUARD_JMP, a one-byte guard
 * (SY_RC_GUARD_JMP -> SY_RC_GUARD_TEST, SY_RC_GUARD_LEN bytes long) before
 * one instruction whose immediate ends it (the forms below).
 * A second init with another value would have to rewrite an immediate
 * that threads may be executing: refused (-EBUSY), the kernel's rule
 * (init once) made explicit. The value of every initialised variable is
 * kept, so that the sites of an object loaded later get it at
 * registration, before its code runs.
 *
 * Everything here runs with the patch lock held.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct rc_value {
	const void *sym;
	uint64_t value;		/* as read at init, in sym's size */
	size_t size;
	bool pending;		/* being initialised (init_locked) */
	struct rc_value *next;
};

static struct rc_value *values;	/* patch lock; freed at unload */

static const struct rc_value *value_of(const void *sym)
{
	for (const struct rc_value *v = values; v; v = v->next)
		if (v->sym == sym)
			return v;
	return NULL;
}

#if defined(SY_RC_GUARD_JMP) && !defined(SY_ARCH_HAVE_RC_HOOKS)
/* A one-byte guard before an instruction that ends with the immediate. */
#define SY_ARCH_HAVE_RC_HOOKS 1

/* The immediate's bytes (little-endian, its own size). */
static void rc_bytes(unsigned size, uint64_t v, uint8_t *out)
{
	if (size == 1)
		v &= 31;	/* a shift count */
	memcpy(out, &v, size);
}

static const uint8_t *rc_placeholder(unsigned size)
{
	static const uint8_t ph8[8] = { 0xef, 0xcd, 0xab, 0x89,
					0x67, 0x45, 0x23, 0x01 };
	static const uint8_t ph4[4] = { 0x78, 0x56, 0x34, 0x12 };
	static const uint8_t ph1[1] = { 12 };

	return size == 8 ? ph8 : size == 4 ? ph4 : ph1;
}

static bool sy_arch_rc_valid(unsigned end, unsigned size)
{
	return (size == 8 || size == 4 || size == 1) &&
	       end >= SY_RC_GUARD_LEN + size && end <= 16;
}

static void sy_arch_rc_imm(uintptr_t code, unsigned end, unsigned size,
			   uint64_t v, unsigned *off, unsigned *len,
			   uint8_t *old, uint8_t *new_)
{
	(void)code;
	*off = end - size;
	*len = size;
	memcpy(old, rc_placeholder(size), size);
	rc_bytes(size, v, new_);
}

static void sy_arch_rc_guard(uintptr_t code, uint8_t *old, uint8_t *new_,
			     unsigned *len)
{
	(void)code;
	old[0] = SY_RC_GUARD_JMP;
	new_[0] = SY_RC_GUARD_TEST;
	*len = 1;
}
#endif

#ifdef SY_ARCH_HAVE_RC_HOOKS

static struct sy_rec_table *tables;		/* patch lock */

static uintptr_t rc_code(const struct sy_rc_entry *e)
{
	return (uintptr_t)&e->code + (intptr_t)e->code;
}

static bool rc_valid(const struct sy_rc_entry *e)
{
	return sy_arch_rc_valid(e->end, e->size);
}

struct rc_src {
	struct sy_rec_table *table;		/* NULL: every table */
	bool pending;			/* only the values being initialised,
					   else every initialised one */
	bool guard;			/* step 3, else step 1 */
	struct sy_rec_table *t;
	struct sy_rc_entry *e;
};

static void rc_rewind(void *ctx)
{
	struct rc_src *s = ctx;

	s->t = s->table ? s->table : tables;
	s->e = s->t ? s->t->start : NULL;
}

static bool rc_next(void *ctx, struct sy_poke_desc *d)
{
	struct rc_src *s = ctx;

	while (s->t) {
		while (s->e < (struct sy_rc_entry *)s->t->stop) {
			struct sy_rc_entry *e = s->e++;
			const struct rc_value *v = value_of(e->sym);
			uintptr_t code = rc_code(e);

			if (!e->sym || !v || (s->pending && !v->pending) ||
			    !rc_valid(e))
				continue;
			memset(d, 0, sizeof(*d));
			d->exact = true;
			d->what = "run-time constant";
			d->key = (const struct static_key *)e->sym;
			if (s->guard) {
				d->addr = code;
				sy_arch_rc_guard(code, d->old, d->new_,
						 &d->len);
			} else {
				unsigned off;

				sy_arch_rc_imm(code, e->end, e->size, v->value,
					       &off, &d->len, d->old, d->new_);
				d->addr = code + off;
			}
			return true;
		}
		s->t = s->table ? NULL : s->t->next;
		s->e = s->t ? s->t->start : NULL;
	}
	return false;
}

/* Steps 1 to 3 for the sites of the pending values (or of every value) in
 * table (or all): two batches, two syncs, however many variables. */
static int rc_apply(struct sy_rec_table *table, bool pending)
{
	struct rc_src s = { table, pending, false, NULL, NULL };
	struct sy_poke_src src = { rc_rewind, rc_next, &s };
	int r = sy_poke_apply(&src);		/* 1 and 2 */

	if (r)
		return r;
	s.guard = true;
	return sy_poke_apply(&src);		/* 3 */
}

static int apply_pending(void)
{
	return tables ? rc_apply(NULL, true) : 0;
}

static int rc_table_add_locked(struct sy_rc_entry *start,
			       struct sy_rc_entry *stop)
{
	bool fresh;
	struct sy_rec_table *t = sy_rec_table_add(&tables, start, stop, &fresh);

	if (!t)
		return -ENOMEM;
	/* the values set so far, before the object's code runs: an error
	 * leaves its sites on the variable (correct) and is reported */
	return fresh && values ? rc_apply(t, false) : 0;
}

static void free_tables_locked(void)
{
	sy_rec_tables_free(&tables);
}

static int rc_table_remove_locked(struct sy_rc_entry *start)
{
	return sy_rec_table_del(&tables, start);
}

#else /* no patched sites: the header reads the variable */

static int apply_pending(void)
{
	return 0;
}

static int rc_table_add_locked(struct sy_rc_entry *start,
			       struct sy_rc_entry *stop)
{
	(void)start;
	(void)stop;
	return 0;
}

static int rc_table_remove_locked(struct sy_rc_entry *start)
{
	(void)start;
	return 0;
}

static void free_tables_locked(void)
{
}
#endif

/* init once: the same value again is fine, another one is refused (in
 * every build, so that the API behaves the same everywhere). Several
 * variables at once share the two batches (and their syncs): all or
 * nothing. */
static uint64_t value_now(const void *sym, size_t size)
{
	uint64_t now = 0;

	memcpy(&now, sym, size);
	return now;
}

static int init_locked(const void *const *syms, const size_t *sizes,
		       size_t n)
{
	struct rc_value *v, **pv;
	int r;

	for (size_t i = 0; i < n; i++) {
		v = (struct rc_value *)value_of(syms[i]);
		if (v && (v->value != value_now(syms[i], sizes[i]) ||
			  v->size != sizes[i])) {
			sy_report(SWITCHYARD_LOG_ERROR, NULL, (uintptr_t)syms[i],
				  "runtime_const_init() of the variable at "
				  SY_REPORT_SITE " with another value (%#llx, "
				  "%#llx at the first init): refused, its "
				  "sites keep the first value; nothing "
				  "written", (unsigned long long)
				  value_now(syms[i], sizes[i]),
				  (unsigned long long)v->value);
			return -EBUSY;
		}
	}
	r = 0;
	for (size_t i = 0; i < n && !r; i++) {
		if (value_of(syms[i]))
			continue;	/* set already, or twice in syms */
		v = calloc(1, sizeof(*v));
		if (!v) {
			r = -ENOMEM;
			break;
		}
		v->sym = syms[i];
		v->value = value_now(syms[i], sizes[i]);
		v->size = sizes[i];
		v->pending = true;
		v->next = values;
		values = v;
	}
	if (!r)
		r = apply_pending();
	/* done, or failed (the engine undid its batch): forget the new
	 * values then */
	for (pv = &values; (v = *pv) != NULL;) {
		if (v->pending && r) {
			*pv = v->next;
			free(v);
			continue;
		}
		v->pending = false;
		pv = &v->next;
	}
	return r;
}

int sy_runtime_const_init_n(const void *const *syms, const size_t *sizes,
			    size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!syms[i] || (sizes[i] != 8 && sizes[i] != 4))
			return -EINVAL;
	return SY_GUARDED(SY_LOCKED(init_locked(syms, sizes, n)));
}

int switchyard_runtime_const_init(const void *sym, size_t size)
{
	return sy_runtime_const_init_n(&sym, &size, 1);
}

int sy__register_runtime_consts(struct sy_rc_entry *start,
				struct sy_rc_entry *stop)
{
	if (!start || stop < start)
		return -EINVAL;
	if (start == stop)
		return 0;
	return SY_GUARDED(SY_LOCKED(rc_table_add_locked(start, stop)));
}

int sy__unregister_runtime_consts(struct sy_rc_entry *start,
				  struct sy_rc_entry *stop)
{
	if (start == stop)
		return 0;
	return SY_GUARDED(SY_LOCKED(rc_table_remove_locked(start)));
}

/*
 * When the library itself is unloaded (dlclose of the last object that
 * needed it), its bookkeeping goes with it: every object that registered
 * tables is gone or going (it depends on the library, so its destructors
 * ran first; in a static link the program's glue, whose destructor runs
 * after this one, finds no table and gets -ENOENT).
 */
static int free_all_locked(void)
{
	free_tables_locked();
	while (values) {
		struct rc_value *v = values;

		values = v->next;
		free(v);
	}
	return 0;
}

__attribute__((destructor)) static void rc_fini(void)
{
	(void)SY_GUARDED(SY_LOCKED(free_all_locked()));
}
