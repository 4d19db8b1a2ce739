/* SPDX-License-Identifier: MIT */
/*
 * sc_insn.c - static calls whose site is one call instruction that may be
 * rewritten while other threads execute it (AArch64: SY_SC_INSN in
 * arch/<arch>/sy_arch.h; x86-64's guarded sites are static_call.c's).
 *
 * A site holds one word (include/switchyard/arch/aarch64_static_call.h):
 *
 *   word         the site's target is                 kept while
 *   bl veneer    read from the key by the veneer      as compiled, or the
 *                                                     target has no word
 *   bl target    the target                           within a BL's reach
 *   bl stub      the target, through a stub near      far (sc_stub.c)
 *   nop          none (NULL)
 *   b block      the target's registered native,      room >= its length
 *                run out of line: its words, then
 *                a b back after the site
 *
 * Every change replaces one whole aligned word, and every pair of these
 * forms is on the Arm ARM's list of instructions that one core may modify
 * while another executes them (B2.2.5, "Concurrent modification and
 * execution of instructions": B, BL, BRK, HVC, ISB, NOP, SMC, SVC): the
 * executing core runs the old or the new instruction, nothing else. A pass
 * through a site therefore makes exactly one call, to the old or to the new
 * target (a bl veneer: to what the key holds when the veneer loads it). No
 * guard, no rseq, no signal.
 *
 * The update of a key, the rule behind each step:
 *  0. Stubs for far targets first, each written and synced before any site
 *     can branch to it (SY_SC_STUB_SYNC: a core that sees the new BL
 *     early must find the stub's code visible).
 *  1. Check every site of the key before anything changes: one under a
 *     debugger's breakpoint (BRK over the whole word) whose hidden word
 *     must change fails the update with -EBUSY (the debugger would put the
 *     old call back and step a thread through it), unexpected bytes with
 *     -EFAULT.
 *  2. Store the new target in the key (release; pairs with the veneer's
 *     ldar and with sy__static_call_load()'s acquire): every veneer from
 *     now on calls it.
 *  3. Write every site's word through the poke engine (one batch: the
 *     exact old word or the new one, checked before any write; each word
 *     stored whole, then the cache maintenance of sy_arch_code_written()),
 *     then sync (membarrier(PRIVATE_EXPEDITED_SYNC_CORE): every other
 *     thread takes a context synchronisation event, so none runs the old
 *     word after the update returns; B2.4.4 asks it of each executing PE).
 *     If the batch fails, the engine has put the old words back: the key
 *     gets its old target back and the update returns the error (nothing
 *     changed).
 * One write batch and one sync per update (two with a new stub).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "static_call_impl.h"

/* Whether SWITCHYARD_STATIC_CALL=detour asks that no site be patched (any
 * other value than detour or patch is reported and ignored); for both kinds
 * of sites (static_call.c's too: here, below it). Patch lock. */
bool sy_sc_env_detour(void)
{
	const char *env = secure_getenv("SWITCHYARD_STATIC_CALL");

	if (env && *env && strcmp(env, "detour") && strcmp(env, "patch"))
		sy_log(SWITCHYARD_LOG_ERROR, "SWITCHYARD_STATIC_CALL=\"%.64s\" "
		       "is not detour or patch: ignored (patch)", env);
	return env && !strcmp(env, "detour");
}

#ifdef SY_SC_INSN

/*
 * A site's flags (struct sy_sc_entry): on disk the veneer's offset from the
 * field, as the assembler wrote it (a multiple of 4, within a BL's reach:
 * 28 bits); from registration on, that offset times 16 and in bits 0-5:
 */
#define SCI_DEAD 1u	/* refused at registration: never touched */
#define SCI_VENEER 2u	/* holds (or hides under a BRK) `bl veneer` */
#define SCI_NATIVE 4u	/* holds (or hides) `b block`: its target's native */
#define SCI_BITS 0x3fu

struct sci_table {
	struct sy_sc_entry *start, *stop;
	bool parked;	/* every site stays on its veneer */
	struct sci_table *next;
};

static struct sci_table *tables;	/* patch lock */
static int mode;	/* 0 unknown, 1 patch, -1 park */

/* Inline natives (switchyard_static_call_native()), never removed, and
 * the blocks that run them next to each site (arch/<arch>/sy_arch.h,
 * sy_arch_sc_native_block()): one per site and native, in stub memory,
 * written before any site branches to it and never changed or freed. */
#define NATIVES_MAX 64
static struct {
	void (*func)(void);
	uint8_t len;
	uint8_t code[12];
} natives[NATIVES_MAX];
static unsigned n_natives;
static struct sci_block {
	uintptr_t site, addr;
	unsigned native;
} *blocks;
static size_t n_blocks, cap_blocks;

static uintptr_t code_of(const struct sy_sc_entry *e)
{
	return (uintptr_t)&e->code + (intptr_t)e->code;
}

static uintptr_t veneer_of(const struct sy_sc_entry *e)
{
	return (uintptr_t)&e->flags +
	       ((intptr_t)(int32_t)(e->flags & ~SCI_BITS) >> 4);
}

static struct static_call_key *key_of(const struct sy_sc_entry *e)
{
	return e->meta->key;
}

static bool cs_site(const struct sy_sc_entry *e)
{
	return e->meta->kind & SY_SC_KIND_CALLEE_SAVE;
}

static uint32_t word(uintptr_t a)
{
	uint32_t w;

	memcpy(&w, (const void *)a, 4);
	return w;
}

/* The site's compiled word: BL to its veneer (within reach: checked at
 * registration). */
static uint32_t veneer_word(const struct sy_sc_entry *e)
{
	uint8_t b[4];
	uint32_t w = 0;

	if (sy_arch_sc_call(code_of(e), veneer_of(e), b))
		memcpy(&w, b, 4);
	return w;
}

/* Whether f is a callee-save function: it starts 8 bytes past a 16-byte
 * boundary, after the mark (<switchyard/arch/aarch64_callee_save.h>); the
 * 8 bytes before such an entry lie in its own page. */
static bool callee_save(void (*f)(void))
{
	uintptr_t a = (uintptr_t)f;
	uint64_t mark;

	if ((a & 15) != 8)
		return false;
	memcpy(&mark, (const void *)(a - 8), 8);
	return mark == SY__CS_MARK_VALUE;
}

/* Whether site e must call f through its veneer whatever the distance: an
 * ordinary function at a callee-save site (the veneer saves what it may
 * change). */
static bool needs_veneer(const struct sy_sc_entry *e, void (*f)(void))
{
	return f && cs_site(e) && !callee_save(f);
}

static unsigned room_of(const struct sy_sc_entry *e)
{
	return e->meta->kind & (SY_SC_KIND_CALLEE_SAVE - 1);
}

/* The native site e holds for f, or -1: f has one that fits its room. */
static int native_for(const struct sy_sc_entry *e, void (*f)(void))
{
	for (unsigned i = 0; f && i < n_natives; i++)
		if (natives[i].func == f)
			return natives[i].len <= room_of(e) ? (int)i : -1;
	return -1;
}

/* The block that runs native n for the site at code, or 0. */
static uintptr_t block_of(uintptr_t code, int n)
{
	for (size_t i = 0; i < n_blocks; i++)
		if (blocks[i].site == code && blocks[i].native == (unsigned)n)
			return blocks[i].addr;
	return 0;
}

/* The word site e holds for target f, by a call (no native). */
static uint32_t call_word(const struct sy_sc_entry *e, void (*f)(void))
{
	uintptr_t code = code_of(e), stub;
	uint8_t b[4];
	uint32_t w;

	if (!f) {
		sy_arch_sc_none(b);
	} else if (needs_veneer(e, f) ||
		   (!sy_arch_sc_call(code, (uintptr_t)f, b) &&
		    (!(stub = sy_sc_stub_find(code, (uintptr_t)f)) ||
		     !sy_arch_sc_call(code, stub, b)))) {
		return veneer_word(e);
	}
	memcpy(&w, b, 4);
	return w;
}

/* The B to the block of native n at site e, or 0 when it has none. */
static uint32_t native_word(const struct sy_sc_entry *e, int n)
{
	uintptr_t block = n >= 0 ? block_of(code_of(e), n) : 0;
	uint8_t b[4];
	uint32_t w = 0;

	if (block && sy_arch_sc_branch(code_of(e), block, b))
		memcpy(&w, b, 4);
	return w;
}

/* The word site e holds for target f: its native's B when it has one,
 * else the call. */
static uint32_t word_for(const struct sy_sc_entry *e, void (*f)(void))
{
	uint32_t w = native_word(e, native_for(e, f));

	return w ? w : call_word(e, f);
}

/* What the site holds now, as far as we know (a BRK hides it): its
 * veneer's call, the B to its native's block, or the call of the key's
 * target before this change (a native registered since, or a block made
 * since, does not change what was written). */
static uint32_t held_word(const struct sy_sc_entry *e, void (*old)(void))
{
	uint32_t w;

	if (e->flags & SCI_VENEER)
		return veneer_word(e);
	if (e->flags & SCI_NATIVE && (w = native_word(e, native_for(e, old))))
		return w;
	return call_word(e, old);
}

/* ---- the sites as a poke source ------------------------------------------ */

struct sci_src {
	struct static_call_key *key;	/* NULL: every site of table */
	struct sci_table *table;	/* NULL: every table */
	void (*old)(void), (*target)(void);	/* key set */
	struct sci_table *t;
	struct sy_sc_entry *e;
};

static void sci_rewind(void *ctx)
{
	struct sci_src *s = ctx;

	s->t = s->table ? s->table : tables;
	s->e = s->t ? s->t->start : NULL;
}

/* Site e's change, false if it has none: from the word it holds to the
 * word of the target. A site under a breakpoint is left out (checked
 * before: sci_check()). */
static bool sci_describe(const struct sci_src *s, struct sy_sc_entry *e,
			 struct sy_poke_desc *d)
{
	struct static_call_key *key = key_of(e);
	void (*f)(void) = s->key ? s->target :
		__atomic_load_n(&key->func, __ATOMIC_RELAXED);
	uint32_t from = s->key ? held_word(e, s->old) : veneer_word(e);
	uint32_t to = word_for(e, f);

	if (from == to || sy_arch_is_trap((const uint8_t *)code_of(e)))
		return false;
	memset(d, 0, sizeof(*d));
	d->addr = code_of(e);
	d->len = SY_SC_INSN;
	d->exact = true;	/* the old word or the new one, else refused */
	d->key = (const struct static_key *)(const void *)key;
	memcpy(d->old, &from, 4);
	memcpy(d->new_, &to, 4);
	return true;
}

static bool sci_next(void *ctx, struct sy_poke_desc *d)
{
	struct sci_src *s = ctx;

	while (s->t) {
		while (!s->t->parked && s->e < s->t->stop) {
			struct sy_sc_entry *e = s->e++;

			if (e->flags & SCI_DEAD ||
			    (s->key && key_of(e) != s->key))
				continue;
			if (sci_describe(s, e, d))
				return true;
		}
		s->t = s->table ? NULL : s->t->next;
		s->e = s->t ? s->t->start : NULL;
	}
	return false;
}

/* After a batch was written: which sites hold their veneer's call now. */
static void sci_settle(const struct sci_src *s)
{
	for (struct sci_table *t = s->table ? s->table : tables; t;
	     t = s->table ? NULL : t->next) {
		for (struct sy_sc_entry *e = t->start; e < t->stop; e++) {
			uint32_t w = word(code_of(e));

			if (e->flags & SCI_DEAD ||
			    (s->key && key_of(e) != s->key) ||
			    sy_arch_is_trap((const uint8_t *)code_of(e)))
				continue;
			e->flags &= ~(SCI_VENEER | SCI_NATIVE);
			if (w == veneer_word(e))
				e->flags |= SCI_VENEER;
			else if (sy_arch_sc_is_branch((const uint8_t *)
						      code_of(e)))
				e->flags |= SCI_NATIVE;
		}
	}
}

struct block_ctx {
	unsigned native;
	uintptr_t back;
	bool ok;
};

static void build_block(uintptr_t addr, uint8_t *out, const void *ctx)
{
	struct block_ctx *c = (struct block_ctx *)(uintptr_t)ctx;

	c->ok = sy_arch_sc_native_block(addr, natives[c->native].code,
					natives[c->native].len, c->back, out);
}

/* The block of native n for site e, made if it is not there yet (and
 * synced: sy_sc_stub_code()). 0, or why there is none. */
static int sci_block(const struct sy_sc_entry *e, int n)
{
	struct block_ctx c = { (unsigned)n, code_of(e) + SY_SC_INSN, false };
	uintptr_t addr;
	uint8_t b[4];
	int r;

	if (block_of(code_of(e), n))
		return 0;
	if (n_blocks == cap_blocks) {
		size_t cap = cap_blocks ? 2 * cap_blocks : 16;
		void *p = realloc(blocks, cap * sizeof(*blocks));

		if (!p)
			return -ENOMEM;
		blocks = p;
		cap_blocks = cap;
	}
	r = sy_sc_stub_code(code_of(e), build_block, &c, key_of(e), &addr);
	if (r)
		return r;
	/* (a slot within the stubs' reach: the B back and the site's B to
	 * it always reach; checked all the same) */
	if (!c.ok || !sy_arch_sc_branch(code_of(e), addr, b))
		return -ERANGE;
	blocks[n_blocks].site = code_of(e);
	blocks[n_blocks].addr = addr;
	blocks[n_blocks].native = (unsigned)n;
	n_blocks++;
	return 0;
}

/*
 * Stubs for the sites of key (every key: NULL) in table only (every table:
 * NULL) whose target lies beyond reach, made before the batch (a poke
 * source cannot start another one). A stub that cannot be made leaves its
 * site on the veneer (word_for() finds none), reported.
 */
static void sci_stubs(struct sci_table *only, struct static_call_key *key,
		      void (*f)(void))
{
	for (struct sci_table *t = only ? only : tables; t;
	     t = only ? NULL : t->next) {
		if (t->parked)
			continue;
		for (struct sy_sc_entry *e = t->start; e < t->stop; e++) {
			void (*g)(void) = f;
			uint8_t b[4];
			int r;

			if (e->flags & SCI_DEAD || (key && key_of(e) != key))
				continue;
			if (!key)
				g = __atomic_load_n(&key_of(e)->func,
						    __ATOMIC_RELAXED);
			if (native_for(e, g) >= 0) {
				r = sci_block(e, native_for(e, g));
				if (!r)
					continue;
				sy_report(SWITCHYARD_LOG_WARN, NULL, code_of(e),
					  "static call site " SY_REPORT_SITE
					  ": no room within reach for its "
					  "target's native (%s): it calls the "
					  "function", strerror(-r));
			}
			if (!g || needs_veneer(e, g) ||
			    sy_arch_sc_call(code_of(e), (uintptr_t)g, b) ||
			    sy_sc_stub_find(code_of(e), (uintptr_t)g))
				continue;
			r = sy_sc_stub_make(code_of(e), (uintptr_t)g,
					    key_of(e));
			if (r)
				sy_report(SWITCHYARD_LOG_WARN, NULL, code_of(e),
					  "static call site " SY_REPORT_SITE
					  ": no stub within reach of its far "
					  "target (%s): it calls through its "
					  "veneer", strerror(-r));
		}
	}
}

/*
 * Step 1: before an update of key from old to f, every site must hold
 * what we know it holds. A debugger's BRK hides a whole word: when that
 * word must change, the update is refused (-EBUSY), since the debugger
 * puts the old word back to step a thread over its breakpoint and would
 * have it call the old target after the update returned; unexpected
 * words: -EFAULT. Nothing changed either way (reported).
 */
static int sci_check(struct static_call_key *key, void (*old)(void),
		     void (*f)(void))
{
	for (struct sci_table *t = tables; t; t = t->next) {
		if (t->parked)
			continue;
		for (struct sy_sc_entry *e = t->start; e < t->stop; e++) {
			uintptr_t code = code_of(e);
			uint32_t w, held, to;
			char found[3 * 4 + 1];

			if (e->flags & SCI_DEAD || key_of(e) != key)
				continue;
			w = word(code);
			held = held_word(e, old);
			to = word_for(e, f);
			sy_hex(found, sizeof(found), (const uint8_t *)code, 4);
			if (sy_arch_is_trap((const uint8_t *)code)) {
				/* nothing to write, or a veneer's call,
				 * right whatever the key holds: left as
				 * it is until the breakpoint goes */
				if (held == to || held == veneer_word(e))
					continue;
				sy_report(SWITCHYARD_LOG_ERROR,
					  (const struct static_key *)
					  (const void *)key, code,
					  "static call " SY_REPORT_KEY ": "
					  "cannot update: a debugger "
					  "breakpoint [%s] sits on site "
					  SY_REPORT_SITE ", which must change, "
					  "and the debugger would step threads "
					  "through the old call; delete the "
					  "breakpoint and retry; nothing "
					  "changed", found);
				return -EBUSY;
			}
			if (w == held || w == to)
				continue;
			sy_report(SWITCHYARD_LOG_ERROR,
				  (const struct static_key *)(const void *)key,
				  code, "static call " SY_REPORT_KEY ": site "
				  SY_REPORT_SITE " holds unexpected bytes [%s]:"
				  " not updated; nothing changed", found);
			return -EFAULT;
		}
	}
	return 0;
}

/* Whether sites are patched in this process: SWITCHYARD_STATIC_CALL=detour
 * leaves every site on its veneer (for tests, and for users who want no
 * code written). */
static bool patching(void)
{
	if (mode)
		return mode > 0;
	mode = sy_sc_env_detour() ? -1 : 1;
	if (mode < 0)
		sy_log(SWITCHYARD_LOG_INFO, "static calls go through their "
		       "veneer (an indirect call): SWITCHYARD_STATIC_CALL="
		       "detour");
	return mode > 0;
}

int sy_sc_update_locked(struct static_call_key *key, void (*func)(void))
{
	void (*old)(void) = __atomic_load_n(&key->func, __ATOMIC_RELAXED);
	struct sci_src s = { key, NULL, old, func, NULL, NULL };
	struct sy_poke_src src = { sci_rewind, sci_next, &s };
	int r;

	if (mode > 0 && tables) {
		sci_stubs(NULL, key, func);			/* 0 */
		r = sci_check(key, old, func);			/* 1 */
		if (r)
			return r;
	}
	/* 2. read without a lock by every veneer: see sy_vg_benign_race() */
	sy_vg_benign_race(&key->func, sizeof(key->func));
	__atomic_store_n(&key->func, func, __ATOMIC_RELEASE);
	if (mode <= 0 || !tables)
		return 0;
	r = sy_poke_apply(&src);				/* 3 */
	if (r) {
		/* Undone by the engine: the sites hold their old words, so
		 * the key goes back too (nothing changed). */
		__atomic_store_n(&key->func, old, __ATOMIC_RELEASE);
		return r;
	}
	sci_settle(&s);
	return 0;
}

/*
 * Record func's native code, then bring the sites already calling func to
 * it (the update again, to the same target: sites whose room fits the
 * code change their word, from the call to the B to their block). 0, or
 * -EINVAL (not whole words, or longer than a block holds), -EEXIST (func
 * has other code), -ENOSPC, or the update's error.
 */
int sy_sc_insn_native_locked(void (*func)(void), const void *code, size_t len)
{
	if (len % SY_SC_INSN || len > sizeof(natives[0].code))
		return -EINVAL;
	for (unsigned i = 0; i < n_natives; i++)
		if (natives[i].func == func)
			return natives[i].len == len &&
			       !memcmp(natives[i].code, code, len) ? 0 :
			       -EEXIST;
	if (n_natives == NATIVES_MAX)
		return -ENOSPC;
	natives[n_natives].func = func;
	natives[n_natives].len = (uint8_t)len;
	memcpy(natives[n_natives].code, code, len);
	n_natives++;
	for (struct sci_table *t = tables; t; t = t->next) {
		if (t->parked)
			continue;
		for (struct sy_sc_entry *e = t->start; e < t->stop; e++) {
			struct static_call_key *key;
			int r;

			if (e->flags & SCI_DEAD)
				continue;
			key = key_of(e);
			if (__atomic_load_n(&key->func, __ATOMIC_RELAXED) !=
			    func || native_for(e, func) < 0 ||
			    block_of(code_of(e), native_for(e, func)))
				continue;	/* not func's, or done */
			r = sy_sc_update_locked(key, func);
			if (r)
				return r;
		}
	}
	return 0;
}

/* ---- registration --------------------------------------------------------- */

/* Whether site e holds what the header emitted: a BL to its veneer (or a
 * debugger's BRK, planted before the program ran, over it), and the
 * veneer loads the meta from e's record. */
static bool compiled_form(const struct sy_sc_entry *e)
{
	uintptr_t code = code_of(e), slot;
	uint32_t w = word(code);

	if ((code & 3) || !veneer_word(e) ||
	    (w != veneer_word(e) && !sy_arch_is_trap((const uint8_t *)code)))
		return false;
	slot = sy_arch_sc_veneer_slot(veneer_of(e), cs_site(e));
	return slot == (uintptr_t)&e->meta;
}

int sy_sc_insn_add_locked(struct sy_sc_entry *start, struct sy_sc_entry *stop)
{
	struct sci_src s;
	struct sy_poke_src src = { sci_rewind, sci_next, &s };
	struct sci_table *t;
	size_t n = 0;
	int r;

	for (t = tables; t; t = t->next)
		if (t->start == start)
			return 0;	/* LTO: the same table twice */
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->start = start;
	t->stop = stop;
	t->parked = !patching();
	for (struct sy_sc_entry *e = start; e < stop; e++) {
		uintptr_t code = code_of(e);
		char found[3 * 4 + 1];

		/* the veneer's offset, times 16: bits 0-5 are ours */
		e->flags = (uint32_t)((int32_t)(e->flags & ~3u) * 16);
		if (e->meta && key_of(e) && compiled_form(e)) {
			e->flags |= SCI_VENEER;
			n++;
			continue;
		}
		sy_hex(found, sizeof(found), (const uint8_t *)code, 4);
		sy_report(SWITCHYARD_LOG_ERROR, NULL, code, "static call site "
			  SY_REPORT_SITE " does not hold the code the header "
			  "emits [%s]: left alone (it keeps its compiled "
			  "code)", found);
		e->flags |= SCI_DEAD;
	}
	t->next = tables;
	tables = t;
	if (t->parked || !n)
		return 0;
	/* Every live site goes from its veneer's call to its target's word:
	 * the update's step 3 with the target each key has now. */
	sci_stubs(t, NULL, NULL);
	memset(&s, 0, sizeof(s));
	s.table = t;
	r = sy_poke_apply(&src);
	if (r) {
		t->parked = true;	/* undone: every site on its veneer */
		sy_log(SWITCHYARD_LOG_WARN, "static call sites of an object "
		       "could not be patched (%s): they go through their "
		       "veneer", strerror(-r));
		return 0;
	}
	sci_settle(&s);
	return 0;
}

/* The object of table start is being unloaded: its table forgotten (no
 * code is written; its stubs stay, see sc_stub.c). */
int sy_sc_insn_remove_locked(struct sy_sc_entry *start)
{
	for (struct sci_table **pt = &tables; *pt; pt = &(*pt)->next) {
		struct sci_table *t = *pt;

		if (t->start != start)
			continue;
		*pt = t->next;
		free(t);
		return 0;
	}
	return -ENOENT;
}

/* Every live site's key, table after table. Patch lock held. */
void sy_sc_visit(sy_sc_site_visit fn, void *arg)
{
	for (const struct sci_table *t = tables; t; t = t->next)
		for (const struct sy_sc_entry *e = t->start; e < t->stop; e++)
			if (!(e->flags & SCI_DEAD))
				fn(key_of(e), arg);
}

#endif /* SY_SC_INSN */
