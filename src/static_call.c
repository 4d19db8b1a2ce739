/* SPDX-License-Identifier: MIT */
/*
 * static_call.c - static calls (<switchyard/static_call.h>): the key's
 * target, and the patched call sites of every registered object.
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
 * An update (update_locked()), the rule behind each step:
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
 * Descriptors (struct rseq_cs) live in pages mapped below 2 GiB (the site
 * stores their address as an imm32) and are never freed: a thread's
 * rseq_cs may point to one long after the site ran, and the kernel reads
 * it at the thread's next preemption. When a library is unloaded its
 * descriptors are emptied (length 0, abort_ip moved to a signature that
 * stays mapped: unregister_locked()) rather than unmapped.
 *
 * Everything here runs with the patch lock held.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <linux/rseq.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

long __static_call_return0(void)
{
	return 0;
}

#ifdef SY_SC_GUARD	/* the arch has patched sites (sy_arch.h) */

/* glibc >= 2.35 (weak: older ones lack them, then nothing is patched) */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

#define SC_DEAD 1u	/* refused at registration: never touched */
#define SC_OWN 2u	/* has a descriptor (the table is not parked) */
#define SC_DESC 0x0ffffffcu	/* the descriptor's address / 32, << 2 */
/* The guard's opcode, or the one a debugger's breakpoint over it hides,
 * may be TEST (the site lets threads into its payload). Set before a TEST
 * is written, cleared once memory shows JMP: memory cannot tell what a
 * breakpoint hides, and when in doubt the site must count as open (see
 * sc_guard_trapped()). */
#define SC_PASS 0x80000000u

struct sc_table {
	struct sy_sc_entry *start, *stop;
	bool parked;	/* nothing written: every site runs its detour */
	struct sc_table *next;
};

static struct sc_table *tables;	/* patch lock */
static int mode;		/* 0 unknown, 1 patch, -1 park */
static uint32_t arm_disp;	/* __rseq_offset + 8: &rseq->rseq_cs */

/*
 * Negative controls of tests/static_call/test_sc_protocol.c: a test-only
 * build with SY__SC_BROKEN=N drops, moves or adds one step of the
 * protocols below (the test's table says which); 0 in the library.
 */
#ifdef SY__SC_BROKEN
#define BROKEN(n) (SY__SC_BROKEN == (n))
#else
#define BROKEN(n) 0
#endif

static struct rseq_cs *pool;	/* the current page run of descriptors */
static size_t pool_used, pool_cap;
static uintptr_t tomb_abort;	/* after a signature, in the first run */

static uintptr_t entry_code(const struct sy_sc_entry *e)
{
	return (uintptr_t)&e->code + (intptr_t)e->code;
}

static struct static_call_key *entry_key(const struct sy_sc_entry *e)
{
	return e->meta->key;
}

/* A site's descriptor rides in its entry's flags, bits 2..31: its address
 * / 32 (it lies below 2 GiB, 32-byte aligned). */
static uintptr_t sc_desc_of(const struct sy_sc_entry *e)
{
	return (uintptr_t)((e->flags & SC_DESC) >> 2) << 5;
}

static int membarrier(int cmd)
{
	return syscall(__NR_membarrier, cmd, 0, 0) ? -errno : 0;
}

/*
 * Whether sites can be patched in this process, decided once: rseq must be
 * registered by libc (not under GLIBC_TUNABLES=glibc.pthread.rseq=0, nor
 * under valgrind, whose __rseq_size is 0) and its area must sit where a
 * torn disp32 is harmless (see register_locked()). SWITCHYARD_STATIC_CALL=
 * detour parks every site (the fallback, for tests and for users who want
 * no code written).
 *
 * The RSEQ membarrier is not registered here: this runs while objects load,
 * and a sandbox may kill a process on membarrier. It is registered at the
 * first update that needs the barrier (rseq_barrier()); where the kernel
 * lacks it or a filter refuses it, that update and every later one leave
 * the key's guards on JMP, so its calls go through the detours (correct,
 * an indirect call slower).
 */
static bool patching(void)
{
	const char *why = NULL, *env;

	if (mode)
		return mode > 0;
	env = secure_getenv("SWITCHYARD_STATIC_CALL");
	if (env && *env && strcmp(env, "detour") && strcmp(env, "patch"))
		sy_log(SWITCHYARD_LOG_ERROR, "SWITCHYARD_STATIC_CALL=\"%.64s\" "
		       "is not detour or patch: ignored (patch)", env);
	if (env && !strcmp(env, "detour"))
		why = "SWITCHYARD_STATIC_CALL=detour";
	else if (!&__rseq_size || !&__rseq_offset || __rseq_size < 20)
		why = "rseq is not registered by libc (glibc < 2.35, "
		      "GLIBC_TUNABLES=glibc.pthread.rseq=0, valgrind, or a "
		      "sandbox whose filter refuses rseq)";
	else if (__rseq_offset < 0 || __rseq_offset + 8 >= 0x10000)
		why = "the rseq area is not where this build expects it";
	mode = why ? -1 : 1;
	arm_disp = why ? 0 : (uint32_t)(__rseq_offset + 8);
	if (why)
		sy_log(SWITCHYARD_LOG_INFO, "static calls go through their "
		       "detour (an indirect call): %s", why);
	return mode > 0;
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

/* ---- natives and callee-save targets ----------------------------------- */

#define SC_NATIVES_MAX 64

static struct {
	void (*func)(void);
	uint8_t len;
	uint8_t code[SY_SC_ROOM_MAX];
} natives[SC_NATIVES_MAX];	/* patch lock; entries never removed */
static unsigned n_natives;

static int native_of(void (*f)(void))
{
	for (unsigned i = 0; i < n_natives; i++)
		if (natives[i].func == f)
			return (int)i;
	return -1;
}

/* Whether f is a callee-save function: it starts 8 bytes past a 16-byte
 * boundary, after the mark (<switchyard/arch/x86_64_callee_save.h>); the
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

static unsigned entry_room(const struct sy_sc_entry *e)
{
	return e->meta->kind & (SY_SC_KIND_CALLEE_SAVE - 1);
}

static bool entry_cs(const struct sy_sc_entry *e)
{
	return e->meta->kind & SY_SC_KIND_CALLEE_SAVE;
}

/* The payload for target f at site e: false when there is none (f beyond
 * rel32 reach, or an ordinary function at a callee-save site: the site
 * stays on its detour, which saves what f may change). */
static bool payload_for(const struct sy_sc_entry *e, void (*f)(void),
			uint8_t *out)
{
	uintptr_t code = entry_code(e);
	unsigned room = entry_room(e);
	int n = native_of(f);
	uintptr_t stub;

	if (!f) {
		sy_arch_nops(out, room);
		return true;
	}
	if (f == (void (*)(void))__static_call_return0) {
		sy_arch_sc_inline(sy_sc_ret0, sizeof(sy_sc_ret0), room, out);
		return true;
	}
	if (n >= 0 && natives[n].len <= room) {
		sy_arch_sc_inline(natives[n].code, natives[n].len, room, out);
		return true;
	}
	if (entry_cs(e) && !callee_save(f))
		return false;
	if (sy_arch_sc_call(code, room, (uintptr_t)f, out))
		return true;
	stub = sy_sc_stub_find(code, (uintptr_t)f);	/* beyond reach */
	return stub && sy_arch_sc_call(code, room, stub, out);
}

/* Whether site e would call f through a stub that does not exist yet. */
static bool wants_stub(const struct sy_sc_entry *e, void (*f)(void))
{
	uint8_t pl[SY_SC_ROOM_MAX];

	return f && !payload_for(e, f, pl) && !(entry_cs(e) && !callee_save(f));
}

/*
 * Stubs for the sites of key (every key: NULL) in table t (every table:
 * NULL) whose target f lies beyond reach. Made before the steps of the
 * protocol (a poke source cannot start another batch). A stub that cannot
 * be made leaves its site on the detour (payload_for() finds none).
 */
static void make_stubs(struct sc_table *only, struct static_call_key *key,
		       void (*f)(void))
{
	for (struct sc_table *t = only ? only : tables; t;
	     t = only ? NULL : t->next) {
		if (t->parked)
			continue;
		for (struct sy_sc_entry *e = t->start; e < t->stop; e++) {
			void (*g)(void) = f;
			int r;

			if (!(e->flags & SC_OWN) || (key && entry_key(e) != key))
				continue;
			if (!key)
				g = __atomic_load_n(&entry_key(e)->func,
						    __ATOMIC_RELAXED);
			if (!wants_stub(e, g))
				continue;
			r = sy_sc_stub_make(entry_code(e), (uintptr_t)g,
					    entry_key(e));
			if (r)
				sy_report(SWITCHYARD_LOG_WARN, NULL,
					  entry_code(e), "static call site "
					  SY_REPORT_SITE ": no stub within "
					  "reach of its far target (%s): it "
					  "calls through its detour",
					  strerror(-r));
		}
	}
}

/* Whether p holds a payload we may have written at site e (or the compiled
 * one): anything else is refused, not overwritten. */
static bool known_payload(const struct sy_sc_entry *e, const uint8_t *p)
{
	unsigned room = entry_room(e);
	uint8_t pl[SY_SC_ROOM_MAX];

	if (sy_arch_sc_is_compiled_payload(p, room) ||
	    sy_arch_sc_is_call(p, room))
		return true;
	payload_for(e, NULL, pl);
	if (!memcmp(p, pl, room))
		return true;
	payload_for(e, (void (*)(void))__static_call_return0, pl);
	if (!memcmp(p, pl, room))
		return true;
	for (unsigned i = 0; i < n_natives; i++) {
		if (natives[i].len > room)
			continue;
		sy_arch_sc_inline(natives[i].code, natives[i].len, room, pl);
		if (!memcmp(p, pl, room))
			return true;
	}
	return false;
}

/*
 * Whether a debugger traces the process (TracerPid in /proc/self/status is
 * not 0): only then is an int3 in a payload taken for its breakpoint.
 * Without one it is unexpected bytes (a debugger that detaches takes its
 * breakpoints out), which must never end up behind a TEST guard. Read on
 * demand, only when a payload holds an int3; open/read, no stdio (the
 * change path). An unreadable file counts as not traced: the int3 is then
 * refused as unexpected bytes (the update leaves the key's sites on their
 * detour), which is safe whoever put it there; taking a stray int3 for a
 * breakpoint could put a TEST guard in front of it.
 */
static bool traced(void)
{
	char buf[1024];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n;
	const char *p;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	p = strstr(buf, "TracerPid:");
	if (!p)
		return false;
	for (p += 10; *p == ' ' || *p == '\t'; p++)
		;
	return *p != '0';
}

/* The instruction starts in payload p of room bytes: bit i, byte i. */
static uint16_t insn_starts(const uint8_t *p, unsigned room)
{
	uint16_t m = 0;

	for (unsigned i = 0; i < room;) {
		struct sy_x86_insn in;

		if (sy_x86_insn_decode(p + i, room - i, &in))
			break;
		m |= (uint16_t)(1u << i);
		i += in.len;
	}
	return m;
}

/* Candidate k of what a payload may hold (the compiled one, a call with
 * the rel32 in memory, NULL's and RET0's, the natives'): false past the
 * last. */
static bool payload_candidate(const struct sy_sc_entry *e, const uint8_t *mem,
			      unsigned k, uint8_t *out)
{
	unsigned room = entry_room(e);

	switch (k) {
	case 0:
		out[0] = SY_X86_CALL32;
		memset(out + 1, 0, 4);
		memset(out + 5, 0x90, room - 5);
		return true;
	case 1:
		sy_arch_nops(out, room - 5);
		out[room - 5] = SY_X86_CALL32;
		memcpy(out + room - 4, mem + room - 4, 4);
		return true;
	case 2:
		payload_for(e, NULL, out);
		return true;
	case 3:
		payload_for(e, (void (*)(void))__static_call_return0, out);
		return true;
	}
	for (k -= 4; k < n_natives; k++) {
		if (natives[k].len > room)
			continue;
		sy_arch_sc_inline(natives[k].code, natives[k].len, room, out);
		return true;
	}
	return false;
}

/*
 * What the payload at mem (site e's) holds, with each debugger breakpoint
 * over it replaced by the byte it hides (gdb's int3 goes on the first byte
 * of an instruction it disassembled there): into out, and the positions
 * of the breakpoints into *bps. We know what a payload may hold (what we
 * write, or the compiler's), so a candidate that equals memory but for
 * int3 at some of its instruction starts tells the hidden bytes (a call
 * under a breakpoint on its opcode: any rel32, as known_payload() accepts
 * for a call). False when no candidate matches (unexpected bytes), two
 * that differ under a breakpoint do (nobody can tell what the debugger
 * will restore), or no debugger traces the process (traced()).
 */
static bool sc_payload_shadow(const struct sy_sc_entry *e, const uint8_t *mem,
			      uint8_t *out, uint16_t *bps)
{
	unsigned room = entry_room(e);
	uint8_t c[SY_SC_ROOM_MAX];
	bool found = false;

	*bps = 0;
	/* The usual case, first: one of our payloads as it is. A 0xcc byte
	 * inside an operand (a call's rel32 is cc at one site in 64) is
	 * data, not a breakpoint: only an int3 at an instruction start can
	 * be one, which no payload of ours holds. */
	if (known_payload(e, mem)) {
		memcpy(out, mem, room);
		return true;
	}
	if (!memchr(mem, SY_X86_INT3, room) || !traced())
		return false;
	for (unsigned k = 0; payload_candidate(e, mem, k, c); k++) {
		uint16_t starts = insn_starts(c, room), wild = 0;
		unsigned i;

		for (i = 0; i < room; i++) {
			if (mem[i] == c[i])
				continue;
			if (mem[i] != SY_X86_INT3 || !(starts >> i & 1))
				break;
			wild |= (uint16_t)(1u << i);
		}
		if (i < room)
			continue;
		if (found && memcmp(out, c, room))
			return false;	/* ambiguous */
		memcpy(out, c, room);
		*bps = wild;
		found = true;
	}
	return found;
}

/*
 * Whether payload pl can be written over old while breakpoints sit at
 * positions bps: only if each hides the byte pl has there (the debugger
 * restores it) and starts an instruction of pl (the processor reaches
 * the int3 as an instruction, never as part of one). Otherwise the site
 * stays on its detour until the breakpoint goes.
 */
static bool payload_fits_bps(const uint8_t *pl, const uint8_t *old,
			     unsigned room, uint16_t bps)
{
	uint16_t starts = insn_starts(pl, room);

	for (unsigned i = 0; i < room; i++)
		if ((bps >> i & 1) && (pl[i] != old[i] || !(starts >> i & 1)))
			return false;
	return true;
}

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
	struct sc_table *table;		/* NULL: every table */
	void (*target)(void);		/* the key's new target (key set) */
	enum sc_step step;
	struct sc_table *t;
	struct sy_sc_entry *e;
	unsigned part;			/* STEP_SETUP: imm32, then disp32 */
	size_t count;
};

static void sc_rewind(void *ctx)
{
	struct sc_src *s = ctx;

	s->t = s->table ? s->table : tables;
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
	bool has = payload_for(e, f, pl);

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
		if (sc_payload_shadow(e, mem + SY_SC_PAYLOAD, d->old, &bps)) {
			if (!memcmp(d->old, pl, room))
				return false;
			/* a breakpoint over a byte the new payload changes:
			 * not written, the guard stays JMP (step 4) */
			if (bps && !payload_fits_bps(pl, d->old, room, bps))
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
		    !sc_payload_shadow(e, mem + SY_SC_PAYLOAD, now, &bps) ||
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
		uint32_t v = part ? arm_disp : (uint32_t)sc_desc_of(e);

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
	for (struct sc_table *t = s->table ? s->table : tables; t;
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
	for (struct sc_table *t = tables; t; t = t->next) {
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
			if (payload_for(e, f, pl) &&
			    sc_payload_shadow(e, mem + SY_SC_PAYLOAD, now, &bps) &&
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

static int sc_apply(struct sc_src *s, enum sc_step step, bool sync,
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
	    !sc_payload_shadow(e, p + SY_SC_PAYLOAD, pl, &bps) ||
	    !sy_arch_sc_is_compiled_payload(pl, entry_room(e)))
		return false;
	detour = sy_arch_sc_detour(code);
	memcpy(&sig, (const void *)(detour - 4), 4);
	return sig == SY_SC_RSEQ_SIG;
}

static int register_locked(struct sy_sc_entry *start, struct sy_sc_entry *stop)
{
	struct sc_table *t;
	struct sc_src s;
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
	t->next = tables;
	tables = t;
	if (t->parked || !n) {
		for (struct sy_sc_entry *e = start; e < stop; e++)
			e->flags &= SC_DEAD;
		return 0;
	}
	memset(&s, 0, sizeof(s));
	s.table = t;
	/*
	 * imm32 and disp32 first, while the arm is still a test (a read): a
	 * thread running the site meanwhile (an object whose code runs before
	 * its constructors did) may read through a torn disp32, which lies
	 * between 0 and
	 * the final value, inside the thread's descriptor (struct pthread):
	 * harmless. The payloads too: the guards are JMP, nobody runs them.
	 * Then the sync, so that no core runs the store with a stale imm32;
	 * then the stores (one byte each), a sync, so that every thread that
	 * passes a TEST guard has armed; then the guards.
	 */
	make_stubs(t, NULL, NULL);
	r = sc_apply(&s, STEP_SETUP, false, NULL);
	if (!r)
		r = sc_apply(&s, STEP_PAYLOAD, !BROKEN(10), NULL);
	if (!r && BROKEN(11))
		r = sc_apply(&s, STEP_GUARD_TEST, true, NULL);
	if (!r)
		r = sc_apply(&s, STEP_ARM, true, NULL);
	if (!r && !BROKEN(11))
		r = sc_apply(&s, STEP_GUARD_TEST, true, NULL);
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
	return 0;
}

static int unregister_locked(struct sy_sc_entry *start)
{
	for (struct sc_table **pt = &tables; *pt; pt = &(*pt)->next) {
		struct sc_table *t = *pt;

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

static int update_locked(struct static_call_key *key, void (*func)(void))
{
	void (*old)(void) = __atomic_load_n(&key->func, __ATOMIC_RELAXED);
	struct sc_src s;
	size_t flipped = 0;
	int r;

	/* Stubs first (payload_for() looks for them), then whether a
	 * debugger's breakpoint forbids the update (nothing changed yet). */
	if (mode > 0 && tables) {
		make_stubs(NULL, key, func);
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
	if (mode <= 0 || !tables)
		return 0;
	memset(&s, 0, sizeof(s));
	s.key = key;
	s.target = func;
	if (BROKEN(4))
		rseq_barrier();
	if (BROKEN(6))
		sc_apply(&s, STEP_PAYLOAD, true, NULL);
	r = sc_apply(&s, STEP_GUARD_JMP, !BROKEN(1), &flipped);	/* 1 */
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
	r = sc_apply(&s, STEP_PAYLOAD, !BROKEN(3) && !BROKEN(13),
		     NULL);					/* 3 */
	if (r)
		goto parked;
	r = sc_apply(&s, STEP_GUARD_TEST, BROKEN(13), NULL);	/* 4 */
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

static int native_locked(void (*func)(void), const void *code, size_t len)
{
	int n = native_of(func);

	if (n >= 0) {
		if (natives[n].len == len && !memcmp(natives[n].code, code, len))
			return 0;	/* the same again (a dlopen'ed copy) */
		return -EEXIST;
	}
	if (n_natives == SC_NATIVES_MAX)
		return -ENOSPC;
	natives[n_natives].func = func;
	natives[n_natives].len = (uint8_t)len;
	memcpy(natives[n_natives].code, code, len);
	n_natives++;
	/* The sites already calling func take the native: the update's
	 * protocol again, per key (the same target: only payloads change). */
	for (struct sc_table *t = tables; t; t = t->next) {
		if (t->parked)
			continue;
		for (struct sy_sc_entry *e = t->start; e < t->stop; e++) {
			struct static_call_key *key;
			uint8_t pl[SY_SC_ROOM_MAX];
			int r;

			if (!(e->flags & SC_OWN))
				continue;
			key = entry_key(e);
			if (__atomic_load_n(&key->func, __ATOMIC_RELAXED) != func ||
			    !payload_for(e, func, pl) ||
			    !memcmp((const void *)(entry_code(e) + SY_SC_PAYLOAD),
				    pl, entry_room(e)))
				continue;	/* not func's, or done already */
			r = update_locked(key, func);
			if (r)
				return r;
		}
	}
	return 0;
}

/* Every live site's key, table after table. Patch lock held. */
void sy_sc_visit(sy_sc_site_visit fn, void *arg)
{
	for (const struct sc_table *t = tables; t; t = t->next)
		for (const struct sy_sc_entry *e = t->start; e < t->stop; e++)
			if (!(e->flags & SC_DEAD))
				fn(entry_key(e), arg);
}

#else /* !SY_SC_GUARD: no patched sites, a static call is a load + call */

void sy_sc_visit(sy_sc_site_visit fn, void *arg)
{
	(void)fn;
	(void)arg;
}

#define SY_SC_ROOM_MAX 15	/* the API's limit (switchyard_static_call_native) */

static int register_locked(struct sy_sc_entry *start, struct sy_sc_entry *stop)
{
	(void)start;
	(void)stop;
	return 0;
}

static int unregister_locked(struct sy_sc_entry *start)
{
	(void)start;
	return 0;
}

static int update_locked(struct static_call_key *key, void (*func)(void))
{
	/* release: pairs with sy__static_call_load()'s acquire */
	__atomic_store_n(&key->func, func, __ATOMIC_RELEASE);
	return 0;
}

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
	r = SY_GUARDED(SY_LOCKED(register_locked(start, stop)));
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
	return SY_GUARDED(SY_LOCKED(unregister_locked(start)));
}

int __static_call_update(struct static_call_key *key, void (*func)(void))
{
	if (!key)
		return -EINVAL;
	return SY_GUARDED(SY_LOCKED(update_locked(key, func)));
}

int switchyard_static_call_native(void (*func)(void), const void *code,
				  size_t len)
{
	if (!func || !code || !len || len > SY_SC_ROOM_MAX)
		return -EINVAL;
	return SY_GUARDED(SY_LOCKED(native_locked(func, code, len)));
}
