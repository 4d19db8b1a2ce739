/* SPDX-License-Identifier: MIT */
/*
 * sc_update.c - the update of a static call (static_call.c: the sites), and
 * the steps of every protocol over the sites, registration's included, as
 * sources for the poke engine.
 *
 * An update (sy_sc_update_locked()), the rule behind each step:
 *  0. Store the new target in the key (release). Every detour from now on
 *     calls it.
 *  1. Flip every guard of the key's sites that is TEST to JMP: one-byte
 *     stores, what the keys rest on (a thread fetches the old or the new
 *     opcode, and rel32 is the same in both). Sync: membarrier
 *     SYNC_CORE, so that no core runs the old TEST afterwards (SDM vol. 3
 *     8.1.3); it comes before step 2 because the RSEQ barrier is documented
 *     to restart critical sections, not to serialise.
 *  2. membarrier(PRIVATE_EXPEDITED_RSEQ): every thread that is inside a
 *     site's section, running or preempted, restarts at the detour; a
 *     thread outside it will see the JMP. From here on no thread can
 *     execute a payload of the key's sites until step 4.
 *  3. Write the payloads (any bytes: nobody executes them) and sync again
 *     with SYNC_CORE: every core drops what it may have prefetched of the
 *     old payloads before any guard lets it in again (SDM 8.1.3 asks the
 *     executing cores to serialise after a cross-modification).
 *  4. Flip the guards back to TEST. No sync: a core that still sees JMP
 *     takes the detour, which calls the new target.
 * Three syncs, in that order; a site whose payload cannot be used (a
 * process without rseq, no stub within reach, an ordinary function at a
 * callee-save site) keeps its guard on JMP and is served by its detour.
 * Before step 0, an update that a debugger's breakpoint forbids is refused
 * (sc_guard_trapped()). A breakpoint's int3 is never written: the guard
 * under one stays what it hides, a payload is written around one when it
 * hides the byte the new payload has there, else the site keeps its
 * detour (doc/DESIGN.md, "Breakpoints on static call sites").
 *
 * Everything here runs with the patch lock held.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "static_call_impl.h"

#ifdef SY_SC_GUARD	/* the arch has patched sites (sy_arch.h) */

static int membarrier(int cmd)
{
	return syscall(__NR_membarrier, cmd, 0, 0) ? -errno : 0;
}

/* ---- the steps, as poke sources (struct sc_src) ------------------------ */

static void sc_rewind(void *ctx)
{
	struct sc_src *s = ctx;

	s->t = s->table ? s->table : sy_sc_tables;
	s->e = s->t ? s->t->start : NULL;
	s->part = 0;
	s->count = 0;
}

/* Describe site e's change for this step; false if it has none. */
static bool sc_describe(struct sc_src *s, struct sy_sc_entry *e,
			unsigned part, struct sy_poke_desc *d)
{
	uintptr_t code = entry_code(e);
	const uint8_t *mem = (const uint8_t *)code;
	void (*f)(void) = s->key ? s->target :
		__atomic_load_n(&entry_key(e)->func, __ATOMIC_RELAXED);
	unsigned room = entry_room(e);
	uint8_t pl[SY_SC_ROOM_MAX];
	bool has = sy_sc_payload_for(e, f, pl);

	memset(d, 0, sizeof(*d));
	d->exact = true;
	d->key = (const struct static_key *)(const void *)entry_key(e);
	switch (s->step) {
	case STEP_GUARD_JMP:
		/* (a guard under a breakpoint that hides TEST was refused
		 * before: sc_guard_trapped()) */
		if (mem[SY_SC_GUARD] != SY_SC_GUARD_PASS)
			return false;
		d->addr = code + SY_SC_GUARD;
		d->len = 1;
		d->old[0] = SY_SC_GUARD_PASS;
		d->new_[0] = SY_SC_GUARD_DETOUR;
		return true;
	case STEP_PAYLOAD: {
		uint16_t bps;

		if (!has)
			return false;
		d->addr = code + SY_SC_PAYLOAD;
		d->len = room;
		/* what we wrote last (checked: one of our payloads, with the
		 * bytes a debugger's breakpoints hide), or else the verify
		 * pass refuses the site */
		if (sy_sc_payload_shadow(e, mem + SY_SC_PAYLOAD, d->old,
					 &bps)) {
			if (!memcmp(d->old, pl, room))
				return false;
			/* a breakpoint over a byte the new payload changes:
			 * not written, the guard stays JMP (step 4) */
			if (bps &&
			    !sy_sc_payload_fits_bps(pl, d->old, room, bps))
				return false;
			d->bp_mask = bps;
		} else if (memchr(mem + SY_SC_PAYLOAD, SY_X86_INT3, room)) {
			return false;	/* breakpoints over bytes nobody can
					   tell: left alone, on the detour */
		} else {	/* unexpected bytes: make the verify pass refuse */
			memcpy(d->old, pl, room), d->old[0] ^= 0xff;
		}
		memcpy(d->new_, pl, room);
		return true;
	}
	case STEP_GUARD_TEST: {
		uint8_t now[SY_SC_ROOM_MAX];
		uint16_t bps;

		if (!has)
			return false;
		/* A guard under a breakpoint is the debugger's: it stays
		 * what the breakpoint hides, JMP here (a TEST one is refused
		 * before step 1), and the site on its detour until it goes.
		 * A payload that is not the target's (step 3 could not write
		 * it under a breakpoint) keeps the guard on JMP too. */
		if (mem[SY_SC_GUARD] == SY_X86_INT3 ||
		    !sy_sc_payload_shadow(e, mem + SY_SC_PAYLOAD, now, &bps) ||
		    memcmp(now, pl, room))
			return false;
		/* before the TEST can be in memory (where a breakpoint may
		 * hide it at once): see SC_PASS */
		e->flags |= SC_PASS;
		d->addr = code + SY_SC_GUARD;
		d->len = 1;
		d->old[0] = SY_SC_GUARD_DETOUR;
		d->new_[0] = SY_SC_GUARD_PASS;
		return true;
	}
	case STEP_SETUP: {
		uint32_t v = part ? sy_sc_arm_disp : (uint32_t)sc_desc_of(e);

		d->addr = code + (part ? SY_SC_DISP : SY_SC_IMM);
		d->len = 4;
		memset(d->old, 0, 4);
		memcpy(d->new_, &v, 4);
		return true;
	}
	case STEP_ARM:
		d->addr = code + SY_SC_ARM_OP;
		d->len = 1;
		d->old[0] = SY_SC_ARM_OFF;
		d->new_[0] = SY_SC_ARM_ON;
		return true;
	}
	return false;
}

static bool sc_next(void *ctx, struct sy_poke_desc *d)
{
	struct sc_src *s = ctx;

	while (s->t) {
		/* a parked table's guards stay JMP: not part of any step */
		while (!(s->table == NULL && s->t->parked) &&
		       s->e < s->t->stop) {
			struct sy_sc_entry *e = s->e;
			unsigned part = s->part;

			if (s->step == STEP_SETUP && !part) {
				s->part = 1;	/* same site again: disp32 */
			} else {
				s->part = 0;
				s->e++;
			}
			if (e->flags & SC_DEAD || !(e->flags & SC_OWN) ||
			    (s->key && entry_key(e) != s->key))
				continue;
			if (sc_describe(s, e, part, d)) {
				s->count++;
				return true;
			}
		}
		s->t = s->table ? NULL : s->t->next;
		s->e = s->t ? s->t->start : NULL;
	}
	return false;
}

/* After a guard step (done or undone): SC_PASS from the guards that
 * memory shows; one under a breakpoint keeps what it had. */
static void refresh_pass(const struct sc_src *s)
{
	for (struct sc_site_table *t = s->table ? s->table : sy_sc_tables; t;
	     t = s->table ? NULL : t->next) {
		for (struct sy_sc_entry *e = t->start; e < t->stop; e++) {
			uint8_t g;

			if (!(e->flags & SC_OWN) ||
			    (s->key && entry_key(e) != s->key))
				continue;
			g = ((const uint8_t *)entry_code(e))[SY_SC_GUARD];
			if (g == SY_SC_GUARD_DETOUR)
				e->flags &= ~SC_PASS;
			else if (g == SY_SC_GUARD_PASS)
				e->flags |= SC_PASS;
		}
	}
}

/*
 * Before an update of key to f: a site whose guard is under a debugger's
 * breakpoint that hides TEST (planted over a patched site) and whose
 * payload the update must rewrite (or take out of use) blocks it. The
 * guard cannot be closed (the debugger puts TEST back whenever it steps
 * over or removes the breakpoint), so a thread it steps over would run
 * the payload while it is rewritten. -EBUSY, reported, nothing changed.
 */
static int sc_guard_trapped(struct static_call_key *key, void (*f)(void))
{
	for (struct sc_site_table *t = sy_sc_tables; t; t = t->next) {
		if (t->parked)
			continue;
		for (struct sy_sc_entry *e = t->start; e < t->stop; e++) {
			const uint8_t *mem = (const uint8_t *)entry_code(e);
			uint8_t pl[SY_SC_ROOM_MAX], now[SY_SC_ROOM_MAX];
			char found[3 * 5 + 1];
			uint16_t bps;

			if (!(e->flags & SC_OWN) || entry_key(e) != key ||
			    mem[SY_SC_GUARD] != SY_X86_INT3 ||
			    !(e->flags & SC_PASS))
				continue;
			if (sy_sc_payload_for(e, f, pl) &&
			    sy_sc_payload_shadow(e, mem + SY_SC_PAYLOAD, now,
						 &bps) &&
			    !memcmp(now, pl, entry_room(e)))
				continue;	/* nothing to rewrite there */
			sy_hex(found, sizeof(found), mem + SY_SC_GUARD, 5);
			sy_report(SWITCHYARD_LOG_ERROR,
				  (const struct static_key *)(const void *)key,
				  entry_code(e) + SY_SC_GUARD,
				  "static call " SY_REPORT_KEY ": cannot update: "
				  "a debugger breakpoint sits on the guard of "
				  "site " SY_REPORT_SITE " [%s] and the debugger "
				  "will put back the TEST that lets threads into "
				  "the payload the update must rewrite; delete "
				  "the breakpoint (or set it on the call) and "
				  "retry; nothing changed", found);
			return -EBUSY;
		}
	}
	return 0;
}

int sy_sc_apply(struct sc_src *s, enum sc_step step, bool sync,
		size_t *count)
{
	struct sy_poke_src src = { sc_rewind, sc_next, s };
	int r;

	s->step = step;
	r = sync ? sy_poke_apply(&src) : sy_poke_apply_nosync(&src);
	if (count)
		*count = s->count;
	if (step == STEP_GUARD_JMP || step == STEP_GUARD_TEST)
		refresh_pass(s);
	return r;
}

/* ---- update ------------------------------------------------------------- */

/*
 * Step 2's barrier. A process with one thread needs none: the only thread
 * is this one, outside every site's critical section (had a signal
 * interrupted it inside one, the kernel moved it to the abort handler
 * before the handler ran), and a thread created later starts after the
 * guards are JMP (see sy_arch_single_threaded()). Otherwise the command,
 * registered at its first use: an unregistered process (this one until
 * then, a child after fork()) gets EPERM from the command, and then
 * registration decides; a filter's EPERM fails registration too.
 */
static int rseq_barrier(void)
{
	static int reported;
	int r;

	if (sy_arch_single_threaded())
		return 0;
	r = membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ);
	if (r == -EPERM) {
		r = membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ);
		if (!r)
			r = membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ);
	}
	if (r && !reported) {
		reported = 1;
		sy_log(SWITCHYARD_LOG_INFO, "membarrier(PRIVATE_EXPEDITED_RSEQ)"
		       ": %s; updated static calls go through their detour "
		       "(an indirect call)", sy_membarrier_why(r));
	}
	return r;
}

/* A failed RSEQ barrier may leave threads inside sections whose guards are
 * JMP: the next update must run one before it writes a payload, even if it
 * flips no guard itself. Patch lock. */
static bool barrier_owed;

int sy_sc_update_locked(struct static_call_key *key, void (*func)(void))
{
	void (*old)(void) = __atomic_load_n(&key->func, __ATOMIC_RELAXED);
	struct sc_src s;
	size_t flipped = 0;
	int r;

	/* Stubs first (sy_sc_payload_for() looks for them), then whether a
	 * debugger's breakpoint forbids the update (nothing changed yet). */
	if (sy_sc_mode > 0 && sy_sc_tables) {
		sy_sc_make_stubs(NULL, key, func);
		r = sc_guard_trapped(key, func);
		if (r)
			return r;
	}
	/*
	 * Step 0. Release: pairs with the acquire load of the detour (x86
	 * loads are acquire) and of sy__static_call_load(): a thread that
	 * calls the new target sees what the updater wrote before. A thread
	 * may still call the old target after this returns if it was already
	 * on its way: as with the kernel's static_call_update(), a caller
	 * that frees what the old target uses waits for such calls itself.
	 */
	/* read without a lock by every detour: see sy_vg_benign_race() */
	sy_vg_benign_race(&key->func, sizeof(key->func));
	if (!BROKEN(7))
		__atomic_store_n(&key->func, func, __ATOMIC_RELEASE);
	if (sy_sc_mode <= 0 || !sy_sc_tables)
		return 0;
	memset(&s, 0, sizeof(s));
	s.key = key;
	s.target = func;
	if (BROKEN(4))
		rseq_barrier();
	if (BROKEN(6))
		sy_sc_apply(&s, STEP_PAYLOAD, true, NULL);
	r = sy_sc_apply(&s, STEP_GUARD_JMP, !BROKEN(1), &flipped);	/* 1 */
	if (r) {
		/* Undone by the engine: the sites still call the old target
		 * directly, so the key goes back too (nothing changed). */
		__atomic_store_n(&key->func, old, __ATOMIC_RELEASE);
		return r;
	}
	if ((flipped || (barrier_owed && !BROKEN(9))) && !BROKEN(2) &&
	    !BROKEN(4)) {
		r = rseq_barrier();				/* 2 */
		barrier_owed = r != 0;
		if (r)
			goto parked;
	}
	r = sy_sc_apply(&s, STEP_PAYLOAD, !BROKEN(3) && !BROKEN(13),
			NULL);					/* 3 */
	if (r)
		goto parked;
	r = sy_sc_apply(&s, STEP_GUARD_TEST, BROKEN(13), NULL);	/* 4 */
	if (BROKEN(5))
		sy_poke_sync();
	if (BROKEN(7))
		__atomic_store_n(&key->func, func, __ATOMIC_RELEASE);
	if (r)
		goto parked;
	return 0;
parked:
	/* Steps 2-4: every guard of the key is JMP (a failed batch is
	 * undone by the engine), so every call goes through a detour, which
	 * calls the new target: the update itself took effect. A refused
	 * barrier was reported once, by rseq_barrier(). */
	if (!barrier_owed)
		sy_log(SWITCHYARD_LOG_WARN, "static call update: sites could "
		       "not be patched (%s); they call the new target through "
		       "their detour", strerror(-r));
	return 0;
}

/* ---- natives ------------------------------------------------------------ */

/* Record func's native (sc_payload.c), then give it to the sites that
 * already call func: the update's protocol again, per key (the same
 * target: only payloads change). */
static int native_locked(void (*func)(void), const void *code, size_t len)
{
	int r = sy_sc_native_add(func, code, len);

	if (r)
		return r > 0 ? 0 : r;
	for (struct sc_site_table *t = sy_sc_tables; t; t = t->next) {
		if (t->parked)
			continue;
		for (struct sy_sc_entry *e = t->start; e < t->stop; e++) {
			struct static_call_key *key;
			uint8_t pl[SY_SC_ROOM_MAX];

			if (!(e->flags & SC_OWN))
				continue;
			key = entry_key(e);
			if (__atomic_load_n(&key->func, __ATOMIC_RELAXED) != func ||
			    !sy_sc_payload_for(e, func, pl) ||
			    !memcmp((const void *)(entry_code(e) + SY_SC_PAYLOAD),
				    pl, entry_room(e)))
				continue;	/* not func's, or done already */
			r = sy_sc_update_locked(key, func);
			if (r)
				return r;
		}
	}
	return 0;
}

#elif defined(SY_SC_INSN)	/* one-instruction sites: sc_insn.c */
#define SY_SC_ROOM_MAX 15	/* the API's limit (switchyard_static_call_native) */

/* A site is one instruction: its native runs out of line (sc_insn.c). */
static int native_locked(void (*func)(void), const void *code, size_t len)
{
	return sy_sc_insn_native_locked(func, code, len);
}

#else /* no patched sites: a static call is a load + call */

int sy_sc_update_locked(struct static_call_key *key, void (*func)(void))
{
	/* release: pairs with sy__static_call_load()'s acquire */
	__atomic_store_n(&key->func, func, __ATOMIC_RELEASE);
	return 0;
}
#define SY_SC_ROOM_MAX 15	/* the API's limit (switchyard_static_call_native) */

/* no site to paste a native into: accepted, nothing to do */
static int native_locked(void (*func)(void), const void *code, size_t len)
{
	(void)func;
	(void)code;
	(void)len;
	return 0;
}
#endif /* SY_SC_GUARD */

/* ---- entry points ------------------------------------------------------- */

/* A native refused is said, naming its function: for
 * SWITCHYARD_STATIC_CALL_NATIVE()'s constructor, which has no one to
 * return the error to. */
static int native_said_locked(void (*func)(void), const void *code,
			      size_t len)
{
	int r = !code || !len || len > SY_SC_ROOM_MAX ? -EINVAL :
		native_locked(func, code, len);

	if (r < 0)
		sy_report(SWITCHYARD_LOG_WARN, NULL, (uintptr_t)func,
			  "inline native of " SY_REPORT_SITE " (%zu bytes) "
			  "not registered: %s; its sites call the function",
			  len, strerror(-r));
	return r;
}

int __static_call_update(struct static_call_key *key, void (*func)(void))
{
	if (!key)
		return -EINVAL;
	return SY_GUARDED(SY_LOCKED(sy_sc_update_locked(key, func)));
}

int switchyard_static_call_native(void (*func)(void), const void *code,
				  size_t len)
{
	if (!func)
		return -EINVAL;
	return SY_GUARDED(SY_LOCKED(native_said_locked(func, code, len)));
}
