/* SPDX-License-Identifier: MIT */
/*
 * static_call.c - static calls (<switchyard/static_call.h>): the patched
 * call sites of every registered object, their rseq descriptors, and
 * their registration. What a payload holds is sc_payload.c's; the update
 * of a key's target, and the steps of every protocol as poke sources, are
 * sc_update.c's (static_call_impl.h: what the three share).
 *
 * A site (see src/arch/x86_64/sy_arch.h for the bytes) arms the thread's
 * rseq area with its own descriptor (one store of an imm32), passes a
 * one-byte guard (TEST32, or JMP32 to its detour) and runs its payload:
 * NOPs and a direct `call target` (or a call to a stub near the site for
 * a target out of reach, sc_stub.c), NOPs for a NULL target, `xor
 * %eax,%eax` for RET0, or a registered inline native. The rseq critical
 * section runs from the arm to the end of the payload, and its abort
 * handler is the detour, which calls the key's current target through the
 * key and jumps back after the payload. Whatever happens, a pass through a
 * site does the operation once: the payload's, or the detour's (a thread
 * interrupted inside the section restarts at the detour before the
 * payload's last instruction, the call or the native's commit, ran; once
 * it ran the thread is outside the section).
 *
 * Descriptors (struct rseq_cs) live in pages mapped below 2 GiB (the site
 * stores their address as an imm32) and are never freed: a thread's
 * rseq_cs may point to one long after the site ran, and the kernel reads
 * it at the thread's next preemption. When a library is unloaded its
 * descriptors are emptied (length 0, abort_ip moved to a signature that
 * stays mapped: sc_table_remove_locked()) rather than unmapped.
 *
 * Everything here runs with the patch lock held.
 */
#include <errno.h>
#include <linux/rseq.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "static_call_impl.h"

long __static_call_return0(void)
{
	return 0;
}

#ifdef SY_SC_GUARD	/* the arch has patched sites (sy_arch.h) */

/* glibc >= 2.35 (weak: older ones lack them, then nothing is patched) */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

struct sc_site_table *sy_sc_tables;	/* patch lock */
int sy_sc_mode;			/* 0 unknown, 1 patch, -1 park */
uint32_t sy_sc_arm_disp;	/* __rseq_offset + 8: &rseq->rseq_cs */

static struct rseq_cs *pool;	/* the current page run of descriptors */
static size_t pool_used, pool_cap;
static uintptr_t tomb_abort;	/* after a signature, in the first run */

/*
 * Whether sites can be patched in this process, decided once: rseq must be
 * registered by libc (not under GLIBC_TUNABLES=glibc.pthread.rseq=0, nor
 * under valgrind, whose __rseq_size is 0) and its area must sit where a
 * torn disp32 is harmless (see sc_table_arm()). SWITCHYARD_STATIC_CALL=
 * detour parks every site (the fallback, for tests and for users who want
 * no code written).
 *
 * The RSEQ membarrier is not registered here: this runs while objects load,
 * and a sandbox may kill a process on membarrier. It is registered at the
 * first update that needs the barrier (rseq_barrier(), sc_update.c); where
 * the kernel lacks it or a filter refuses it, that update and every later
 * one leave the key's guards on JMP, so its calls go through the detours
 * (correct, an indirect call slower).
 */
static bool patching(void)
{
	const char *why = NULL;

	if (sy_sc_mode)
		return sy_sc_mode > 0;
	if (sy_sc_env_detour())
		why = "SWITCHYARD_STATIC_CALL=detour";
	else if (!&__rseq_size || !&__rseq_offset || __rseq_size < 20)
		why = "rseq is not registered by libc (glibc < 2.35, "
		      "GLIBC_TUNABLES=glibc.pthread.rseq=0, valgrind, or a "
		      "sandbox whose filter refuses rseq)";
	else if (__rseq_offset < 0 || __rseq_offset + 8 >= 0x10000)
		why = "the rseq area is not where this build expects it";
	sy_sc_mode = why ? -1 : 1;
	sy_sc_arm_disp = why ? 0 : (uint32_t)(__rseq_offset + 8);
	if (why)
		sy_log(SWITCHYARD_LOG_INFO, "static calls go through their "
		       "detour (an indirect call): %s", why);
	return sy_sc_mode > 0;
}

static struct rseq_cs *desc_alloc(void)
{
	if (pool_used == pool_cap) {
		size_t len = 64 * 1024;
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);

		if (p == MAP_FAILED || (uintptr_t)p + len > 0x80000000u)
			return NULL;
		pool = p;	/* the old run stays: never unmapped */
		pool_used = 0;
		pool_cap = len / sizeof(*pool);
		if (!tomb_abort) {
			/* slot 0 of the first run: the signature, for the
			 * descriptors of unloaded objects (unregister) */
			uint32_t sig = SY_SC_RSEQ_SIG;

			memcpy((char *)p + 4, &sig, 4);
			tomb_abort = (uintptr_t)p + 8;
			pool_used = 1;
		}
	}
	return &pool[pool_used++];
}

/* ---- registration ------------------------------------------------------- */

/* Whether site e holds what the header's asm emitted. */
static bool compiled_form(const struct sy_sc_entry *e)
{
	uintptr_t code = entry_code(e);
	const uint8_t *p = (const uint8_t *)code;
	uint8_t pl[SY_SC_ROOM_MAX];
	uint16_t bps;
	uint32_t sig;
	uintptr_t detour;

	/* A debugger's breakpoint may sit on the arm, the guard or an
	 * instruction of the payload (gdb plants those set before `run`
	 * before any constructor runs): the byte under it is the compiled
	 * one. The arm's first byte is never written; the guard's stays the
	 * debugger's (the site keeps its detour until the breakpoint goes);
	 * the payload is written around it (sc_describe()). */
	if ((p[0] != sy_sc_compiled_head[0] && p[0] != SY_X86_INT3) ||
	    memcmp(p + 1, sy_sc_compiled_head + 1, SY_SC_GUARD - 1) ||
	    (p[SY_SC_GUARD] != SY_SC_GUARD_DETOUR &&
	     p[SY_SC_GUARD] != SY_X86_INT3) ||
	    !sy_sc_payload_shadow(e, p + SY_SC_PAYLOAD, pl, &bps) ||
	    !sy_arch_sc_is_compiled_payload(pl, entry_room(e)))
		return false;
	detour = sy_arch_sc_detour(code);
	memcpy(&sig, (const void *)(detour - 4), 4);
	return sig == SY_SC_RSEQ_SIG;
}

/*
 * Check every site of table t against what the header emits: a site that
 * differs is reported and marked SC_DEAD (never touched); a live one gets
 * its descriptor, unless the table is parked (or becomes so, without
 * memory below 2 GiB). Returns the number of live sites.
 */
static size_t sc_table_validate(struct sc_site_table *t)
{
	size_t n = 0;

	for (struct sy_sc_entry *e = t->start; e < t->stop; e++) {
		uintptr_t code = entry_code(e);
		struct rseq_cs *cs;

		e->flags = 0;
		if (!e->meta || !entry_key(e) || entry_room(e) < 5 ||
		    !compiled_form(e)) {
			char found[3 * (SY_SC_PAYLOAD + 5) + 1];

			sy_hex(found, sizeof(found), (const uint8_t *)code,
			       SY_SC_PAYLOAD + 5);
			sy_report(SWITCHYARD_LOG_ERROR, NULL, code,
				  "static call site " SY_REPORT_SITE " does not "
				  "hold the code the header emits [%s]: left "
				  "alone (its detour, or the compiled code, "
				  "runs)", found);
			e->flags = SC_DEAD;
			continue;
		}
		n++;
		if (t->parked)
			continue;
		cs = desc_alloc();
		if (!cs) {
			t->parked = true;
			sy_log(SWITCHYARD_LOG_WARN, "no memory below 2 GiB for "
			       "rseq descriptors: static call sites of this "
			       "object go through their detour");
			continue;
		}
		cs->version = 0;
		cs->flags = 0;
		cs->start_ip = code + SY_SC_ARM;
		cs->post_commit_offset = SY_SC_PAYLOAD + entry_room(e) -
					 SY_SC_ARM - BROKEN(8);
		cs->abort_ip = sy_arch_sc_detour(code);
		e->flags = SC_OWN | (uint32_t)((uintptr_t)cs >> 5 << 2);
	}
	return n;
}

/*
 * Patch the live sites of table t, which has just been validated: from the
 * compiled form (arm a test, guard JMP, compiled payload) to armed sites
 * whose guards let threads into their payloads.
 *
 * imm32 and disp32 first, while the arm is still a test (a read): a thread
 * running the site meanwhile (an object whose code runs before its
 * constructors did) may read through a torn disp32, which lies between 0
 * and the final value, inside the thread's descriptor (struct pthread):
 * harmless. The payloads too: the guards are JMP, nobody runs them. Then
 * the sync, so that no core runs the store with a stale imm32; then the
 * stores (one byte each), a sync, so that every thread that passes a TEST
 * guard has armed; then the guards.
 */
static void sc_table_arm(struct sc_site_table *t)
{
	struct sc_src s;
	int r;

	memset(&s, 0, sizeof(s));
	s.table = t;
	sy_sc_make_stubs(t, NULL, NULL);
	r = sy_sc_apply(&s, STEP_SETUP, false, NULL);
	if (!r)
		r = sy_sc_apply(&s, STEP_PAYLOAD, !BROKEN(10), NULL);
	if (!r && BROKEN(11))
		r = sy_sc_apply(&s, STEP_GUARD_TEST, true, NULL);
	if (!r)
		r = sy_sc_apply(&s, STEP_ARM, true, NULL);
	if (!r && !BROKEN(11))
		r = sy_sc_apply(&s, STEP_GUARD_TEST, true, NULL);
	if (r) {
		/* The engine undid the failed batch; what earlier batches
		 * wrote is harmless with the guards on JMP, and parking the
		 * table keeps later updates from turning a guard to TEST in
		 * front of an arm that may still be a test. Descriptors stay
		 * owned, to be emptied at unload. */
		t->parked = true;
		sy_log(SWITCHYARD_LOG_WARN, "static call sites of an object "
		       "could not be patched (%s): they go through their "
		       "detour", strerror(-r));
	}
}

/* Register an object's table of sites [start, stop): validated, then (when
 * this process patches sites and any is live) armed. */
static int sc_table_add_locked(struct sy_sc_entry *start,
			       struct sy_sc_entry *stop)
{
	struct sc_site_table *t;
	size_t n;

	for (t = sy_sc_tables; t; t = t->next)
		if (t->start == start)
			return 0;	/* LTO: the same table twice */
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->start = start;
	t->stop = stop;
	t->parked = !patching();
	n = sc_table_validate(t);
	t->next = sy_sc_tables;
	sy_sc_tables = t;
	if (t->parked || !n) {
		for (struct sy_sc_entry *e = start; e < stop; e++)
			e->flags &= SC_DEAD;
		return 0;
	}
	sc_table_arm(t);
	return 0;
}

/* The object of table start is being unloaded: its descriptors emptied,
 * its table forgotten. */
static int sc_table_remove_locked(struct sy_sc_entry *start)
{
	for (struct sc_site_table **pt = &sy_sc_tables; *pt;
	     pt = &(*pt)->next) {
		struct sc_site_table *t = *pt;

		if (t->start != start)
			continue;
		/*
		 * Empty the descriptors, never unmapped: length 0 first, then
		 * the abort address moved out of the object. The kernel reads
		 * the signature before abort_ip before it looks at the IP
		 * (kernel/rseq.c, rseq_get_rseq_cs()): an abort_ip left in
		 * the unmapped object would fault, and kill a thread whose
		 * rseq_cs still names the descriptor at its next preemption.
		 * tomb_abort follows a signature that is never unmapped. The
		 * object is still mapped while we store: any mix of old and
		 * new fields the kernel may read meanwhile is harmless.
		 */
		for (struct sy_sc_entry *e = t->start; e < t->stop; e++) {
			struct rseq_cs *cs;

			if (!(e->flags & SC_OWN))
				continue;
			cs = (struct rseq_cs *)sc_desc_of(e);
			__atomic_store_n(&cs->post_commit_offset, 0,
					 __ATOMIC_RELAXED);
			if (!BROKEN(12))
				__atomic_store_n(&cs->abort_ip, tomb_abort,
						 __ATOMIC_RELAXED);
		}
		*pt = t->next;
		free(t);
		return 0;
	}
	return -ENOENT;
}

/* Every live site's key, table after table. Patch lock held. */
void sy_sc_visit(sy_sc_site_visit fn, void *arg)
{
	for (const struct sc_site_table *t = sy_sc_tables; t; t = t->next)
		for (const struct sy_sc_entry *e = t->start; e < t->stop; e++)
			if (!(e->flags & SC_DEAD))
				fn(entry_key(e), arg);
}

#elif defined(SY_SC_INSN)	/* one-instruction sites: sc_insn.c */

static int sc_table_add_locked(struct sy_sc_entry *start,
			       struct sy_sc_entry *stop)
{
	return sy_sc_insn_add_locked(start, stop);
}

static int sc_table_remove_locked(struct sy_sc_entry *start)
{
	return sy_sc_insn_remove_locked(start);
}

#else /* no patched sites: a static call is a load + call */

void sy_sc_visit(sy_sc_site_visit fn, void *arg)
{
	(void)fn;
	(void)arg;
}

static int sc_table_add_locked(struct sy_sc_entry *start,
			       struct sy_sc_entry *stop)
{
	(void)start;
	(void)stop;
	return 0;
}

static int sc_table_remove_locked(struct sy_sc_entry *start)
{
	(void)start;
	return 0;
}
#endif /* SY_SC_GUARD */

/* ---- entry points ------------------------------------------------------- */

int sy__register_static_call_sites(struct sy_sc_entry *start,
				   struct sy_sc_entry *stop)
{
	const struct static_call_key **keys = NULL;
	size_t n = 0, cap = 0;
	int r;

	if (!start || stop < start)
		return -EINVAL;
	if (start == stop)	/* the header's glue in an object with no site */
		return 0;
	r = SY_GUARDED(SY_LOCKED(sc_table_add_locked(start, stop)));
	/* After the lock: the split check needs the dynamic linker. Once per
	 * distinct key (an object's static calls are few; out of memory, the
	 * diagnostic is skipped). */
	for (struct sy_sc_entry *e = start; !r && e < stop; e++) {
		size_t i = 0;

		if (!e->meta)
			continue;
		while (i < n && keys[i] != e->meta->key)
			i++;
		if (i < n)
			continue;
		if (n == cap) {
			size_t c = cap ? 2 * cap : 8;
			void *p = realloc(keys, c * sizeof(*keys));

			if (!p)
				break;
			keys = p;
			cap = c;
		}
		keys[n++] = e->meta->key;
		sy_check_split_key(e->meta->key, true);
	}
	free(keys);
	return r;
}

int sy__unregister_static_call_sites(struct sy_sc_entry *start,
				     struct sy_sc_entry *stop)
{
	if (start == stop)
		return 0;
	return SY_GUARDED(SY_LOCKED(sc_table_remove_locked(start)));
}
