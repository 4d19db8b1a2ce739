/* SPDX-License-Identifier: MIT */
/*
 * arch/x86_64/sy_arch.h - encode and verify x86-64 jump label sites (the
 * per-arch contract of src/internal.h; inline, because registration calls
 * them for every site).
 *
 *   form     bytes             length  effect
 *   TEST8    a8 rel8           2       test al, imm8: writes flags only
 *   JMP8     eb rel8           2       jump to the out-of-line code
 *   TEST32   a9 rel32          5       test eax, imm32: writes flags only
 *   JMP32    e9 rel32          5       jump to the out-of-line code
 *
 * rel is the target minus the address of the next instruction. A site keeps
 * its length for life: the assembler chose it from the distance, so the
 * jump always fits.
 *
 * Why TEST and not NOP for the disabled form: each TEST form differs from
 * its JMP in the first byte only, so every change of a site is a one-byte
 * store. Another thread executing the site meanwhile fetches either the old
 * or the new opcode byte, never a mix of two instructions: a single byte
 * cannot be torn, and the bytes after it are the same immediate/rel in both
 * instructions (this is the property the kernel gets from its one-byte INT3
 * in text_poke_bp(); Intel SDM vol. 3 8.1.3 asks for serialisation only so
 * that the executing thread stops using stale bytes, which the sync step
 * gives). A NOP differs from the JMP in every byte, and patching it while
 * threads run needs the kernel's breakpoint protocol: a trap that a thread
 * blocking SIGTRAP turns into a crash (the kernel forces the signal and
 * resets it to SIG_DFL). TEST writes only the flags, which the site's asm
 * declares clobbered; it reads al/eax, whose value is irrelevant. It is one
 * instruction and one ALU uop, as cheap as a NOP in the measurements of
 * doc/BENCHMARKS-HISTORY.md.
 */
#ifndef SY_ARCH_X86_64_H
#define SY_ARCH_X86_64_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define SY_ARCH_MAX_INSN 16
/* A debugger's breakpoint instruction, for messages. */
#define SY_ARCH_TRAP_NAME "int3"

#define SY_X86_JMP8 0xeb
#define SY_X86_JMP32 0xe9
#define SY_X86_TEST8 0xa8	/* test al, imm8 */
#define SY_X86_TEST32 0xa9	/* test eax, imm32 */
#define SY_X86_INT3 0xcc	/* a debugger's breakpoint */

/* A site's length from its record's LONG bit, and the bit for a length. */
#define SY_ARCH_JUMP_LEN(long_) ((long_) ? 5u : 2u)
#define SY_ARCH_JUMP_IS_LONG(len) ((len) == 5)

/* Whether b is the byte a debugger's software breakpoint writes (int3):
 * the poke engine's view of a breakpoint inside an exact change (bp_mask) */
static inline bool sy_arch_bp_byte(uint8_t b)
{
	return b == SY_X86_INT3;
}

/*
 * The site must hold one of its two forms to target: the jump the
 * assembler emitted, or the TEST that `switchyard prepatch` may have
 * written over it in the file; or either under a debugger's breakpoint
 * (int3 over the opcode: gdb inserts breakpoints before the program runs,
 * hence before registration). The rel tells the length: read as rel8 and
 * as rel32 it cannot match both (their low bytes differ by 3).
 */
static inline int sy_arch_jump_decode(uintptr_t code, uintptr_t target,
				      unsigned *len)
{
	const uint8_t *p = (const uint8_t *)code;
	int32_t r32;

	memcpy(&r32, p + 1, 4);
	if ((p[0] == SY_X86_INT3 || p[0] == SY_X86_JMP8 ||
	     p[0] == SY_X86_TEST8) &&
	    (intptr_t)target - (intptr_t)(code + 2) == (int8_t)p[1]) {
		*len = 2;
		return 0;
	}
	if ((p[0] == SY_X86_INT3 || p[0] == SY_X86_JMP32 ||
	     p[0] == SY_X86_TEST32) &&
	    (intptr_t)target - (intptr_t)(code + 5) == r32) {
		*len = 5;
		return 0;
	}
	return -EFAULT;
}

/*
 * What a debugger's breakpoint found at a site at start-up hides, from the
 * site's bytes in the file (file) and in memory (mem, int3 over the
 * opcode): 1 a jump, 0 a TEST (a prepatched file), -1 unknown (the file
 * holds something else there: it is not the file that was loaded).
 */
static inline int sy_arch_jump_shadow(const uint8_t *file, const uint8_t *mem,
				      unsigned len)
{
	if (memcmp(file + 1, mem + 1, len - 1))
		return -1;
	if (file[0] == (len == 2 ? SY_X86_JMP8 : SY_X86_JMP32))
		return 1;
	if (file[0] == (len == 2 ? SY_X86_TEST8 : SY_X86_TEST32))
		return 0;
	return -1;
}

static inline void sy_arch_jump_encode(uintptr_t code, uintptr_t target,
				       unsigned len, bool jump, uint8_t *out)
{
	if (len == 2) {
		out[0] = jump ? SY_X86_JMP8 : SY_X86_TEST8;
		out[1] = (uint8_t)(int8_t)((intptr_t)target - (intptr_t)(code + 2));
	} else {
		int32_t r32 = (int32_t)((intptr_t)target - (intptr_t)(code + 5));

		out[0] = jump ? SY_X86_JMP32 : SY_X86_TEST32;
		memcpy(out + 1, &r32, 4);
	}
}

/* Both forms at once (old, new): they share everything but the opcode. */
static inline void sy_arch_jump_encode_pair(uintptr_t code, uintptr_t target,
					    unsigned len, bool old_jump,
					    bool new_jump, uint8_t *old,
					    uint8_t *new_)
{
	sy_arch_jump_encode(code, target, len, new_jump, new_);
	memcpy(old, new_, len);
	old[0] = len == 2 ? (old_jump ? SY_X86_JMP8 : SY_X86_TEST8)
			  : (old_jump ? SY_X86_JMP32 : SY_X86_TEST32);
}

/*
 * Debugger breakpoints. A debugger that plants a breakpoint on a site
 * writes int3 (cc) over its opcode and keeps the byte it replaced (its
 * "shadow"); whenever it steps over or removes the breakpoint it writes
 * that byte back, whatever we wrote meanwhile. gdb re-reads the shadow at
 * every insertion, and in its default all-stop mode it removes and
 * re-inserts breakpoints at every stop. So the opcode under a breakpoint
 * belongs to the debugger: we never write it. What we may write is the
 * rel: no thread executes it while the opcode is int3 (a thread that
 * reaches the site traps on the first byte), and a jump whose rel is 0
 * goes to the next instruction, i.e. falls through like TEST. The forms:
 *
 *   bytes        path          arises
 *   TEST rel     falls through canonical
 *   JMP  rel     jumps         canonical
 *   JMP  0       falls through a debugger restored JMP over the rel 0 we
 *                              wrote under its breakpoint
 *   TEST 0       falls through a step of the way back to canonical
 *   int3 rel     as the shadow the breakpoint hides
 *   int3 0       falls through whatever the shadow
 *
 * The registry keeps this invariant: a site's opcode, or the shadow of the
 * breakpoint over it, is its canonical opcode for its key's state (or the
 * jump the compiler emitted, before registration and in a stale table),
 * except that a rel of 0 always goes with JMP. Hence under a breakpoint:
 *
 *   rel  shadow is     change to      what we do
 *   rel  d->hidden     the shadow's   nothing (NEW)
 *   rel  JMP           fall through   write rel 0 (FIX): JMP 0 falls through
 *   rel  TEST          jump           nothing can make it jump when the
 *                                     debugger restores TEST: TRAPPED
 *   0    JMP           fall through   nothing (NEW)
 *   0    JMP           jump           write rel (FIX): JMP rel
 *
 * The rule that makes a FIX safe is the one the kernel's text_poke_bp()
 * rests on and the only cross-modification Intel has stated it supports
 * without a stop: while an int3 sits on byte 0, the bytes after it may be
 * rewritten, and a core serialisation after the write (the batch's sync,
 * SDM vol. 3 8.1.3) makes every core fetch them before it runs them. Here
 * the int3 is the debugger's, and the debugger removes it, not us.
 *
 * And without one, the two non-canonical forms are brought back to
 * canonical first, in steps that each keep the path (PREP, each step
 * followed by a sync): JMP 0 -> TEST 0 (the opcode, one byte: the same
 * assumption as every flip, stated at the top of this file and in
 * doc/DESIGN.md, "The protocol", step 2), TEST 0 -> TEST rel (a TEST's
 * immediate is never used: any mix of old and new rel bytes a thread may
 * fetch is a TEST of the same length that falls through; the same
 * assumption, that a fetch sees each byte old or new).
 *
 * A jump to the next instruction is not our everyday disabled form: it is
 * a taken branch (a branch predictor entry, and a fetch redirect in loops
 * bound by taken branches), and its 5-byte form would need a rel32 written
 * while threads may execute it, which no single store guarantees through
 * /proc/self/mem; under a breakpoint nobody executes it.
 */
/*
 * Classify the bytes at mem for a change to new (a canonical form of len
 * bytes; old, the other canonical form, shares its rel); hidden_jump: a
 * breakpoint over the site with its rel intact hides a JMP.
 */
static inline enum sy_site_check sy_arch_site_check(const uint8_t *mem,
						    const uint8_t *new_,
						    unsigned len,
						    bool hidden_jump,
						    struct sy_arch_fix *fix)
{
	bool new_jumps = new_[0] == SY_X86_JMP8 || new_[0] == SY_X86_JMP32;
	uint8_t jmp = len == 2 ? SY_X86_JMP8 : SY_X86_JMP32;
	uint8_t test = len == 2 ? SY_X86_TEST8 : SY_X86_TEST32;
	uint32_t rel = 0, want = 0;	/* fixed-size loads: no memcmp call */
	bool rel_ok, rel_0;

	if (len == 2) {
		rel = mem[1];
		want = new_[1];
	} else {
		memcpy(&rel, mem + 1, 4);
		memcpy(&want, new_ + 1, 4);
	}
	rel_ok = rel == want;
	rel_0 = rel == 0;
	/* the everyday case: one of the two canonical forms */
	if (rel_ok && (mem[0] == jmp || mem[0] == test))
		return mem[0] == new_[0] ? SY_SITE_NEW : SY_SITE_OLD;
	if (!rel_0 && !rel_ok)
		return SY_SITE_FOREIGN;
	fix->off = 1;
	fix->len = len - 1;
	if (mem[0] == SY_X86_INT3) {
		if (rel_ok && rel_0)	/* a jump to the next instruction */
			return SY_SITE_NEW;
		if (rel_ok) {
			if (hidden_jump == new_jumps)
				return SY_SITE_NEW;
			if (!hidden_jump)
				return SY_SITE_TRAPPED;
			memset(fix->bytes, 0, len - 1);
			return SY_SITE_FIX;
		}
		if (!new_jumps)
			return SY_SITE_NEW;
		memcpy(fix->bytes, new_ + 1, len - 1);
		return SY_SITE_FIX;
	}
	if (mem[0] == jmp) {
		fix->off = 0;
		fix->len = 1;
		fix->bytes[0] = test;
		return SY_SITE_PREP;
	}
	if (mem[0] == test) {
		memcpy(fix->bytes, new_ + 1, len - 1);
		return SY_SITE_PREP;
	}
	return SY_SITE_FOREIGN;
}

static inline bool sy_arch_is_trap(const uint8_t *mem)
{
	return mem[0] == SY_X86_INT3;
}

/*
 * Whether the bytes at mem jump now; under a breakpoint, as they will once
 * the debugger restores hidden_jump (the shadow the invariant above says).
 */
static inline bool sy_arch_site_jumps(const uint8_t *mem, unsigned len,
				      bool hidden_jump)
{
	static const uint8_t zero[4] = { 0 };

	if (!memcmp(mem + 1, zero, len - 1))
		return false;
	if (mem[0] == SY_X86_INT3)
		return hidden_jump;
	return mem[0] == SY_X86_JMP8 || mem[0] == SY_X86_JMP32;
}

/*
 * ---- static call sites (include/switchyard/arch/x86_64_static_call.h) ----
 *
 *   offset  bytes                        as compiled      patched
 *   0       64 48 f7 04 25 <disp32> <imm32>
 *           (test $imm32, %fs:disp32)    both 0           disp32 = rseq+8,
 *                                                         imm32 = descriptor,
 *                                                         then f7 -> c7: the
 *                                                         store (movq $imm32)
 *   13      e9/a9 <rel32>                JMP32 detour     TEST32 when the
 *                                                         payload is in use
 *   18      payload, room bytes (5..15)  e8 00 00 00 00   NOPs + e8 <rel32>,
 *                                   + NOPs (0x90)         NOPs (no target),
 *                                                         NOPs + 31 c0 (RET0),
 *                                                         NOPs + a native
 *   18+room the code after the site
 * The rseq critical section is [0, 18 + room): from the arm to the end of
 * the payload. The guard's rel32 points at the detour, which is also the
 * rseq abort handler (after the signature).
 */
#define SY_SC_ARM 0
#define SY_SC_ARM_OP 2
#define SY_SC_DISP 5
#define SY_SC_IMM 9
#define SY_SC_GUARD 13
#define SY_SC_PAYLOAD 18
#define SY_SC_ROOM_MAX 15	/* a payload's room: 5 to 15 bytes */
#define SY_SC_RSEQ_SIG 0x53053053u	/* glibc's RSEQ_SIG on x86 */
#define SY_SC_GUARD_DETOUR SY_X86_JMP32	/* the guard's form that diverts */
#define SY_SC_GUARD_PASS SY_X86_TEST32	/* ... and the one that lets pass */
#define SY_SC_ARM_OFF 0xf7	/* the arm's opcode as compiled (test) */
#define SY_SC_ARM_ON 0xc7	/* ... and armed (mov $imm32 store) */
/* (F7 /0 and C7 /0 take the same prefix, ModRM, SIB, disp32 and imm32:
 * arming changes one byte, the one-byte rule of the keys) */
#define SY_X86_CALL32 0xe8

static const uint8_t sy_sc_compiled_head[SY_SC_GUARD] = {
	0x64, 0x48, 0xf7, 0x04, 0x25, 0, 0, 0, 0, 0, 0, 0, 0
};
static const uint8_t sy_sc_ret0[2] = { 0x31, 0xc0 };	/* xor %eax,%eax */

/* n bytes of NOPs (one instruction for n <= 8, then NOP8s) */
static inline void sy_arch_nops(uint8_t *out, unsigned n)
{
	static const uint8_t nops[9][8] = {
		{ 0 }, { 0x90 }, { 0x66, 0x90 }, { 0x0f, 0x1f, 0x00 },
		{ 0x0f, 0x1f, 0x40, 0x00 }, { 0x0f, 0x1f, 0x44, 0x00, 0x00 },
		{ 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
		{ 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00 },
		{ 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00 },
	};

	while (n) {
		unsigned k = n > 8 ? 8 : n;

		memcpy(out, nops[k], k);
		out += k;
		n -= k;
	}
}

/* The payload of room bytes that calls target from the site at code: NOPs,
 * then the call, which returns to the end of the site; false when target
 * lies beyond rel32 reach. */
static inline bool sy_arch_sc_call(uintptr_t code, unsigned room,
				   uintptr_t target, uint8_t *out)
{
	uintptr_t end = code + SY_SC_PAYLOAD + room;
	intptr_t rel = (intptr_t)target - (intptr_t)end;
	int32_t r32 = (int32_t)rel;

	if (rel != r32)
		return false;
	sy_arch_nops(out, room - 5);
	out[room - 5] = SY_X86_CALL32;
	memcpy(out + room - 4, &r32, 4);
	return true;
}

/* The payload of room bytes that holds code (len <= room) at its end,
 * after NOPs: the code's last instruction then ends the rseq section, so a
 * thread preempted after it is outside and is not sent to the detour to do
 * it again (as for the call, the commit is the section's last instruction).
 */
static inline void sy_arch_sc_inline(const uint8_t *code, unsigned len,
				     unsigned room, uint8_t *out)
{
	sy_arch_nops(out, room - len);
	memcpy(out + room - len, code, len);
}

/* The payload as compiled: a call to the next instruction, then NOPs
 * (0x90 each: the header's .fill). */
static inline bool sy_arch_sc_is_compiled_payload(const uint8_t *p,
						  unsigned room)
{
	if (memcmp(p, "\xe8\0\0\0\0", 5))
		return false;
	for (unsigned i = 5; i < room; i++)
		if (p[i] != 0x90)
			return false;
	return true;
}

/* Whether p holds a call payload of room bytes (any rel32). */
static inline bool sy_arch_sc_is_call(const uint8_t *p, unsigned room)
{
	uint8_t pad[SY_SC_ROOM_MAX];

	sy_arch_nops(pad, room - 5);
	return !memcmp(p, pad, room - 5) && p[room - 5] == SY_X86_CALL32;
}

/*
 * A stub for a target beyond a site's reach (src/sc_stub.c): `jmp
 * *0(%rip)` and the target's address, padded with int3 to 16 bytes.
 */
#define SY_SC_STUB_LEN 16
#define SY_SC_STUB_FILL SY_X86_INT3	/* what a stub page holds unused */
/* Stub pages lie within 1.5 GiB of their sites (a rel32 reaches 2),
 * sought 64 MiB apart. No sync of their own: nothing runs a stub before a
 * payload that calls it is written, and that write is followed by the
 * update's SYNC_CORE (a processor snoops stores to code: SDM vol. 3A,
 * "Self-Modifying Code"). */
#define SY_SC_STUB_REACH (3ul << 29)
#define SY_SC_STUB_STEP (64ul << 20)
#define SY_SC_STUB_SYNC 0
static inline void sy_arch_sc_stub(uintptr_t target, uint8_t out[16])
{
	static const uint8_t jmp[6] = { 0xff, 0x25, 0, 0, 0, 0 };

	memcpy(out, jmp, 6);
	memcpy(out + 6, &target, 8);
	out[14] = out[15] = SY_X86_INT3;
}

/* The detour a site's guard jumps to (its rel32, as compiled), also its
 * rseq abort handler. */
static inline uintptr_t sy_arch_sc_detour(uintptr_t code)
{
	int32_t rel;

	memcpy(&rel, (const uint8_t *)code + SY_SC_GUARD + 1, 4);
	return code + SY_SC_PAYLOAD + (intptr_t)rel;
}


/* A spin-wait hint (PAUSE). */
static inline void sy_arch_cpu_relax(void)
{
	__builtin_ia32_pause();
}

/* run-time constant sites (include/switchyard/arch/x86_64_runtime_const.h) */
#define SY_RC_GUARD_JMP SY_X86_JMP32
#define SY_RC_GUARD_TEST SY_X86_TEST32
#define SY_RC_GUARD_LEN 5

/* alternatives (insn.c): an instruction's length and its relative operand */
#define SY_ARCH_HAVE_ALTERNATIVES 1

/* A copy routine of its own (memcpy_arch.c, memcpy_vec.c):
 * sy_arch_mc_entry() returns its dispatcher, not NULL. */
#define SY_ARCH_HAVE_MEMCPY 1
struct sy_x86_insn {
	uint8_t len;		/* 1..15 */
	uint8_t rel_off;	/* where the relative operand starts */
	uint8_t rel_size;	/* 0 (none), 1 or 4 */
	bool branch;		/* a relative branch (else RIP-relative data) */
};
/* Decode the instruction at p (at most avail bytes): 0 or -EINVAL. */
__attribute__((visibility("hidden")))
int sy_x86_insn_decode(const uint8_t *p, size_t avail, struct sy_x86_insn *in);

#endif /* SY_ARCH_X86_64_H */
