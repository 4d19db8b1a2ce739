/* SPDX-License-Identifier: MIT */
/*
 * alternative.c - CPU-feature alternatives (<switchyard/alternative.h>).
 *
 * An object's records come here from its constructor (the header's glue),
 * before any of its code runs; the library's own from ours. For each site
 * (the consecutive records with the same site address):
 *  1. what it must hold: the copy of its old instructions and pad, with
 *     its relative operands re-aimed from the copy to the site;
 *  2. what it will hold: the last replacement whose feature test passes,
 *     re-aimed from where it was assembled to the site, or the old
 *     instructions; the rest of the site (the asm's padding: trailing
 *     0x90s on x86-64, NOP words on AArch64) as the fewest NOPs
 *     (src/arch/<arch>/insn.c);
 *  3. through the poke engine, as exact changes of at most
 *     SY_ARCH_MAX_INSN bytes each: all verified before any is written
 *     (bytes other than 1 or 2 are refused, named, and nothing written),
 *     then written and synced.
 * Step 3 rewrites several instructions at once, which is safe only because
 * no thread runs them yet (so this is not cross-modifying code, and the
 * SDM vol. 3 8.1.3 protocol reduces to the engine's sync after the write,
 * for whichever core first runs the object): the object's constructors
 * have not run, and for a library being opened, dlopen() has not returned
 * its handle (the same premise as static call registration; doc/DESIGN.md
 * "Known limits"). On AArch64 the same premise puts the writes outside the
 * Arm ARM's rule for instructions changed under a running core (B2.2.5:
 * only B, BL, NOP and a few others may be), and the engine's cache
 * maintenance and core sync (B2.4.4) make them visible to the core that
 * first runs them. A site already holding its new bytes is left alone (the
 * same table twice: LTO, or a library opened again).
 *
 * A site holding neither (a debugger's breakpoint at start-up) is refused
 * before the batch, reported once by name, and left out of it, so that it
 * does not keep the others on their old instructions. A site that keeps
 * its old instructions is still correct: they are the baseline
 * (static_cpu_has()'s asks at run time).
 *
 * Everything here runs with the patch lock held.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static struct sy_rec_table *tables;	/* patch lock */

static uintptr_t rel_addr(const int32_t *field)
{
	return (uintptr_t)field + (intptr_t)*field;
}

#ifndef SY_ARCH_INSN_ALIGN
/* Where an instruction (and a debugger's trap) may start: any byte. */
#define SY_ARCH_INSN_ALIGN 1

/* The length of old without the padding the asm put after it (x86-64:
 * 0x90s, src/arch/<arch>/sy_arch.h may say otherwise). */
static size_t sy_arch_alt_unpadded(const uint8_t *old, size_t len)
{
	while (len && old[len - 1] == 0x90)
		len--;
	return len;
}
#endif

/* Does record e apply on this CPU? */
static bool applies(const struct sy_alt_entry *e)
{
	bool has = boot_cpu_has(e->feature & 0x3fffu);

	return e->feature & 0x8000u ? !has : has;
}

/* One site's change, up to 255 bytes. */
struct alt_site {
	uintptr_t addr;
	size_t len;
	uint8_t old[256], new_[256];
	const struct sy_alt_entry *chosen;	/* NULL: the old ones */
};

/*
 * Steps 1 and 2 for the site whose records are [e, end). Returns 0, or
 * -EINVAL (malformed records or code the decoder refuses: reported).
 */
static int alt_compute(const struct sy_alt_entry *e,
		       const struct sy_alt_entry *end, struct alt_site *s)
{
	const uint8_t *copy = (const uint8_t *)rel_addr(&e->copy);
	size_t keep;
	int r;

	s->addr = rel_addr(&e->site);
	s->len = e->len;
	s->chosen = NULL;
	r = sy_arch_code_move(s->old, copy, s->len, s->addr);
	if (r)
		goto bad;
	for (const struct sy_alt_entry *a = e; a < end; a++) {
		if (a->len != e->len || a->repl_len > e->len) {
			r = -EINVAL;
			goto bad;
		}
		if (applies(a))
			s->chosen = a;
	}
	if (s->chosen) {
		r = sy_arch_code_move(s->new_,
				      (const uint8_t *)rel_addr(&s->chosen->repl),
				      s->chosen->repl_len, s->addr);
		if (r)
			goto bad;
		keep = s->chosen->repl_len;
	} else {
		/* the old instructions, their trailing padding merged (a NOP
		 * of the instructions' own among them is a NOP either way) */
		memcpy(s->new_, s->old, s->len);
		keep = sy_arch_alt_unpadded(s->old, s->len);
	}
	sy_arch_nop_fill(s->new_ + keep, s->len - keep);
	return 0;
bad:
	sy_report(SWITCHYARD_LOG_ERROR, NULL, s->addr,
		  "alternative at " SY_REPORT_SITE ": %s; the site keeps its "
		  "old instructions",
		  r == -ERANGE ? "a relative operand of the replacement "
				 "cannot reach its destination from the site" :
		  r == -EINVAL ? "an instruction the decoder does not know, "
				 "or malformed records" :
				 "alternatives are not supported here");
	return -EINVAL;
}

struct alt_src {
	struct sy_alt_entry *start, *stop;	/* the sites to change */
	struct sy_alt_entry *e;			/* the next site */
	struct alt_site site;
	size_t off;				/* in the current site */
	bool have;
	char what[96];
};

/*
 * Bit 14 of a site's first record: refused (reported once; the site keeps
 * its old instructions). The records are writable for this.
 */
#define ALT_REFUSED 0x4000u

/* Does the site hold what it was compiled with, or its new bytes already? */
static bool alt_site_ok(const struct alt_site *s)
{
	const uint8_t *p = (const uint8_t *)s->addr;

	return !memcmp(p, s->old, s->len) || !memcmp(p, s->new_, s->len);
}

/*
 * Refused before the engine sees it: the other sites still go through
 * (and this one is reported once, with its bytes and name).
 */
__attribute__((cold, noinline)) static void
alt_refuse(struct sy_alt_entry *e, const struct alt_site *s, const char *what)
{
	char want[3 * 32 + 4], found[3 * 32 + 4];
	size_t n = s->len < 32 ? s->len : 32;
	bool trap = false;

	e->feature |= ALT_REFUSED;
	sy_hex(want, sizeof(want), s->old, n);
	sy_hex(found, sizeof(found), (const uint8_t *)s->addr, n);
	for (size_t i = 0; i < s->len; i += SY_ARCH_INSN_ALIGN)
		trap |= sy_arch_is_trap((const uint8_t *)s->addr + i);
	sy_report(SWITCHYARD_LOG_ERROR, NULL, s->addr,
		  "%s: refusing to patch site " SY_REPORT_SITE ": expected "
		  "[%s%s] as compiled, found [%s%s]%s; the site keeps its old "
		  "instructions", what, want, n < s->len ? " ..." : "", found,
		  n < s->len ? " ..." : "",
		  trap ? " (a trap byte may be a debugger breakpoint)" : "");
}

/* The records of the site starting at e. */
static struct sy_alt_entry *site_end(struct sy_alt_entry *e,
				     struct sy_alt_entry *stop)
{
	uintptr_t addr = rel_addr(&e->site);
	struct sy_alt_entry *n = e + 1;

	while (n < stop && rel_addr(&n->site) == addr)
		n++;
	return n;
}

static void alt_rewind(void *ctx)
{
	struct alt_src *s = ctx;

	s->e = s->start;
	s->have = false;
}

static bool alt_next(void *ctx, struct sy_poke_desc *d)
{
	struct alt_src *s = ctx;

	for (;;) {
		if (s->have && s->off < s->site.len) {
			size_t n = s->site.len - s->off;

			if (n > SY_ARCH_MAX_INSN)
				n = SY_ARCH_MAX_INSN;
			memset(d, 0, sizeof(*d));
			d->addr = s->site.addr + s->off;
			d->len = (unsigned)n;
			memcpy(d->old, s->site.old + s->off, n);
			memcpy(d->new_, s->site.new_ + s->off, n);
			d->exact = true;
			d->what = s->what;
			s->off += n;
			return true;
		}
		s->have = false;
		while (s->e < s->stop) {
			struct sy_alt_entry *e = s->e, *end = site_end(e, s->stop);
			const char *name;
			unsigned f;

			s->e = end;
			if (e->feature & ALT_REFUSED)
				continue;	/* reported at the first pass */
			if (alt_compute(e, end, &s->site)) {
				e->feature |= ALT_REFUSED;	/* reported */
				continue;
			}
			if (!memcmp(s->site.old, s->site.new_, s->site.len))
				continue;	/* nothing to do */
			f = (s->site.chosen ? s->site.chosen : e)->feature;
			name = switchyard_cpu_feature_name(f & 0x3fffu);
			snprintf(s->what, sizeof(s->what),
				 "alternative for feature %s%s",
				 f & 0x8000u ? "!" : "", name ? name : "?");
			if (!alt_site_ok(&s->site)) {
				alt_refuse(e, &s->site, s->what);
				continue;
			}
			s->off = 0;
			s->have = true;
			break;
		}
		if (!s->have)
			return false;
	}
}

/* Sites [start, stop) of one table, in one batch (refused sites left out). */
static int alt_apply(struct sy_alt_entry *start, struct sy_alt_entry *stop)
{
	static struct alt_src s;	/* patch lock held; 600 bytes */
	struct sy_poke_src src = { alt_rewind, alt_next, &s };

	s.start = start;
	s.stop = stop;
	return sy_poke_apply(&src);
}

static int alt_table_add_locked(struct sy_alt_entry *start,
				struct sy_alt_entry *stop)
{
	bool fresh;

	if (!sy_rec_table_add(&tables, start, stop, &fresh))
		return -ENOMEM;
	return fresh ? alt_apply(start, stop) : 0;
}

static int alt_table_remove_locked(struct sy_alt_entry *start)
{
	return sy_rec_table_del(&tables, start);
}

int sy__register_alternatives(struct sy_alt_entry *start,
			      struct sy_alt_entry *stop)
{
	if (!start || stop < start)
		return -EINVAL;
	if (start == stop)
		return 0;
	return SY_GUARDED(SY_LOCKED(alt_table_add_locked(start, stop)));
}

int sy__unregister_alternatives(struct sy_alt_entry *start,
				struct sy_alt_entry *stop)
{
	if (start == stop)
		return 0;
	return SY_GUARDED(SY_LOCKED(alt_table_remove_locked(start)));
}

/*
 * The library's own alternatives (it is built without the header's glue):
 * before the library's other constructors (priority 101 runs before the
 * default ones), after the relocations every constructor may rely on.
 */
/* At the library's unload: see runtime_const.c's rc_fini(). */
static int free_all_locked(void)
{
	sy_rec_tables_free(&tables);
	return 0;
}

__attribute__((destructor)) static void alt_fini(void)
{
	(void)SY_GUARDED(SY_LOCKED(free_all_locked()));
}

#ifdef SY_ARCH_HAVE_ALTERNATIVES
__asm__(".pushsection sy_altinstr, \"aw\"\n\t.popsection");
extern struct sy_alt_entry __start_sy_altinstr[] SY_HIDDEN;
extern struct sy_alt_entry __stop_sy_altinstr[] SY_HIDDEN;

__attribute__((constructor(101))) static void alt_self(void)
{
	sy__register_alternatives(__start_sy_altinstr, __stop_sy_altinstr);
}
#endif
