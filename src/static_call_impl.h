/* SPDX-License-Identifier: MIT */
/*
 * static_call_impl.h - what the three files of static calls share, and
 * nothing else includes:
 *  - static_call.c: the sites, their rseq descriptors, registration;
 *  - sc_payload.c: what a payload holds for a target (a call, a stub's
 *    call, NOPs, RET0, a native), and what it holds now under a debugger's
 *    breakpoints;
 *  - sc_update.c: the protocols' steps as poke sources, and the update;
 *  - sc_insn.c: sites of one call instruction (AArch64), whole.
 * Everything declared here is for the patch lock's holder.
 */
#ifndef SY_STATIC_CALL_IMPL_H
#define SY_STATIC_CALL_IMPL_H

#include "internal.h"

/*
 * Negative controls of tests/static_call/test_sc_protocol.c: a test-only
 * build with SY__SC_BROKEN=N drops, moves or adds one step of the
 * protocols of static_call.c (registration, unload) and sc_update.c (the
 * update): the test's table says which; 0 in the library. Such a build
 * compiles both files again (tests/static_call/CMakeLists.txt).
 */
#ifdef SY__SC_BROKEN
#define BROKEN(n) (SY__SC_BROKEN == (n))
#else
#define BROKEN(n) 0
#endif

/* Whether SWITCHYARD_STATIC_CALL=detour asks that no site be patched
 * (sc_insn.c, for both kinds of sites). Patch lock held. */
SY_HIDDEN bool sy_sc_env_detour(void);

/* Set key's target to func and bring its sites to it (sc_update.c). Patch
 * lock held. */
SY_HIDDEN int sy_sc_update_locked(struct static_call_key *key,
				  void (*func)(void));

#ifdef SY_SC_INSN	/* sites of one instruction (sc_insn.c) */
/* Register an object's table of sites [start, stop), or forget it. Patch
 * lock held. */
SY_HIDDEN int sy_sc_insn_add_locked(struct sy_sc_entry *start,
				    struct sy_sc_entry *stop);
SY_HIDDEN int sy_sc_insn_remove_locked(struct sy_sc_entry *start);
/* Record func's inline native and bring the sites calling func to it. */
SY_HIDDEN int sy_sc_insn_native_locked(void (*func)(void), const void *code,
				       size_t len);
#endif

#ifdef SY_SC_GUARD	/* the arch has patched sites (sy_arch.h) */

/* A site's flags (struct sy_sc_entry), ours from its registration on. */
#define SC_DEAD 1u	/* refused at registration: never touched */
#define SC_OWN 2u	/* has a descriptor (the table is not parked) */
#define SC_DESC 0x0ffffffcu	/* the descriptor's address / 32, << 2 */
/* The guard's opcode, or the one a debugger's breakpoint over it hides,
 * may be TEST (the site lets threads into its payload). Set before a TEST
 * is written, cleared once memory shows JMP: memory cannot tell what a
 * breakpoint hides, and when in doubt the site must count as open (see
 * sc_guard_trapped(), sc_update.c). */
#define SC_PASS 0x80000000u

/* The static call sites of one registered object: its table of records. */
struct sc_site_table {
	struct sy_sc_entry *start, *stop;
	bool parked;	/* nothing written: every site runs its detour */
	struct sc_site_table *next;
};

/* static_call.c: the registered tables; whether sites are patched in this
 * process (0 unknown until the first registration, 1 patch, -1 park);
 * the disp32 of every site's arm (__rseq_offset + 8: &rseq->rseq_cs).
 * Patch lock. */
/* Record func's native code (sc_payload.c): 0 when new, 1 when the same
 * was recorded before, -EEXIST (other code), -ENOSPC. Patch lock held. */
SY_HIDDEN int sy_sc_native_add(void (*func)(void), const void *code,
			       size_t len);
SY_HIDDEN extern struct sc_site_table *sy_sc_tables;
SY_HIDDEN extern int sy_sc_mode;
SY_HIDDEN extern uint32_t sy_sc_arm_disp;

static inline uintptr_t entry_code(const struct sy_sc_entry *e)
{
	return (uintptr_t)&e->code + (intptr_t)e->code;
}

static inline struct static_call_key *entry_key(const struct sy_sc_entry *e)
{
	return e->meta->key;
}

/* A site's descriptor rides in its entry's flags, bits 2..31: its address
 * / 32 (it lies below 2 GiB, 32-byte aligned). */
static inline uintptr_t sc_desc_of(const struct sy_sc_entry *e)
{
	return (uintptr_t)((e->flags & SC_DESC) >> 2) << 5;
}

static inline unsigned entry_room(const struct sy_sc_entry *e)
{
	return e->meta->kind & (SY_SC_KIND_CALLEE_SAVE - 1);
}

static inline bool entry_cs(const struct sy_sc_entry *e)
{
	return e->meta->kind & SY_SC_KIND_CALLEE_SAVE;
}

/* ---- payloads (sc_payload.c); patch lock held --------------------------- */

/* The payload for target f at site e, into out: false when there is none
 * (f beyond rel32 reach with no stub, or an ordinary function at a
 * callee-save site: the site stays on its detour). */
SY_HIDDEN bool sy_sc_payload_for(const struct sy_sc_entry *e, void (*f)(void),
				 uint8_t *out);
/* Stubs for the sites of key (every key: NULL, each its own target) in
 * table only (every table: NULL) whose target f lies beyond reach. */
SY_HIDDEN void sy_sc_make_stubs(struct sc_site_table *only,
				struct static_call_key *key, void (*f)(void));
/* What the payload at mem (site e's) holds, each debugger breakpoint over
 * it replaced by the byte it hides, into out, and the breakpoints'
 * positions into *bps: false when that cannot be told (unexpected bytes). */
SY_HIDDEN bool sy_sc_payload_shadow(const struct sy_sc_entry *e,
				    const uint8_t *mem, uint8_t *out,
				    uint16_t *bps);
/* Whether payload pl can be written over old with breakpoints at bps. */
SY_HIDDEN bool sy_sc_payload_fits_bps(const uint8_t *pl, const uint8_t *old,
				      unsigned room, uint16_t bps);

/* ---- the protocols' steps (sc_update.c); patch lock held ---------------- */

/*
 * A poke source over the live sites of one key (or of one table), for one
 * step of the protocol.
 */
enum sc_step {
	STEP_GUARD_JMP,		/* TEST -> JMP (guards now TEST only) */
	STEP_PAYLOAD,		/* current payload -> payload of target */
	STEP_GUARD_TEST,	/* JMP -> TEST where target has a payload */
	STEP_SETUP,		/* registration: imm32, disp32 */
	STEP_ARM,		/* registration: test -> store */
};

struct sc_src {
	struct static_call_key *key;	/* NULL: every site of table */
	struct sc_site_table *table;	/* NULL: every table */
	void (*target)(void);		/* the key's new target (key set) */
	enum sc_step step;
	struct sc_site_table *t;
	struct sy_sc_entry *e;
	unsigned part;			/* STEP_SETUP: imm32, then disp32 */
	size_t count;
};

/* One step over the sites s names, through the poke engine (with its sync
 * or without); *count (if not NULL): the changes it described. The
 * engine's result. */
SY_HIDDEN int sy_sc_apply(struct sc_src *s, enum sc_step step, bool sync,
			  size_t *count);

#endif /* SY_SC_GUARD */

#endif /* SY_STATIC_CALL_IMPL_H */
