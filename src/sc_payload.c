/* SPDX-License-Identifier: MIT */
/*
 * sc_payload.c - the payloads of static call sites (static_call.c): what a
 * site's payload holds for a target, and what it holds now.
 *
 * For a target: NOPs and a direct `call target` within rel32 reach, else
 * a call to a stub near the site (sc_stub.c); NOPs for NULL; `xor
 * %eax,%eax` for RET0; the code of a registered inline native (the natives
 * are kept here); none for an ordinary function at a callee-save site,
 * which stays on its detour (the detour saves what the function may
 * change).
 *
 * What a payload holds now is one of those, or the compiled one, or that
 * with a debugger's breakpoints (int3) over the starts of some of its
 * instructions: the bytes they hide are told by the payloads it may hold
 * (sy_sc_payload_shadow()). Anything else is unexpected bytes, which the
 * update refuses rather than overwrites.
 *
 * Everything here runs with the patch lock held.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "static_call_impl.h"

#ifdef SY_SC_GUARD	/* the arch has patched sites (sy_arch.h) */

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

/* The payload for target f at site e: false when there is none (f beyond
 * rel32 reach, or an ordinary function at a callee-save site: the site
 * stays on its detour, which saves what f may change). */
bool sy_sc_payload_for(const struct sy_sc_entry *e, void (*f)(void),
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

	return f && !sy_sc_payload_for(e, f, pl) &&
	       !(entry_cs(e) && !callee_save(f));
}

/*
 * Stubs for the sites of key (every key: NULL) in table t (every table:
 * NULL) whose target f lies beyond reach. Made before the steps of the
 * protocol (a poke source cannot start another batch). A stub that cannot
 * be made leaves its site on the detour (sy_sc_payload_for() finds none).
 */
void sy_sc_make_stubs(struct sc_site_table *only, struct static_call_key *key,
		      void (*f)(void))
{
	for (struct sc_site_table *t = only ? only : sy_sc_tables; t;
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
	sy_sc_payload_for(e, NULL, pl);
	if (!memcmp(p, pl, room))
		return true;
	sy_sc_payload_for(e, (void (*)(void))__static_call_return0, pl);
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
		sy_sc_payload_for(e, NULL, out);
		return true;
	case 3:
		sy_sc_payload_for(e, (void (*)(void))__static_call_return0,
				  out);
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
bool sy_sc_payload_shadow(const struct sy_sc_entry *e, const uint8_t *mem,
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
bool sy_sc_payload_fits_bps(const uint8_t *pl, const uint8_t *old,
			    unsigned room, uint16_t bps)
{
	uint16_t starts = insn_starts(pl, room);

	for (unsigned i = 0; i < room; i++)
		if ((bps >> i & 1) && (pl[i] != old[i] || !(starts >> i & 1)))
			return false;
	return true;
}

/* ---- natives ------------------------------------------------------------ */

int sy_sc_native_add(void (*func)(void), const void *code, size_t len)
{
	int n = native_of(func);

	if (n >= 0) {
		if (natives[n].len == len && !memcmp(natives[n].code, code, len))
			return 1;	/* the same again (a dlopen'ed copy) */
		return -EEXIST;
	}
	if (n_natives == SC_NATIVES_MAX)
		return -ENOSPC;
	natives[n_natives].func = func;
	natives[n_natives].len = (uint8_t)len;
	memcpy(natives[n_natives].code, code, len);
	n_natives++;
	return 0;
}

#endif /* SY_SC_GUARD */
