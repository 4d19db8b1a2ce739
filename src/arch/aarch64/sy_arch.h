/* SPDX-License-Identifier: MIT */
/*
 * arch/aarch64/sy_arch.h - encoding, verifying and writing jump label
 * sites on AArch64 (include/switchyard/arch/aarch64.h emits them).
 *
 *   form   word (little-endian)           path
 *   NOP    d503201f                       falls through
 *   B      000101 imm26 (target - site)/4 jumps to the out-of-line code
 *   BRK    d4200000 | imm16 << 5          a debugger's breakpoint
 *
 * Every site is one aligned 4-byte instruction, and a change replaces it
 * whole. The Arm ARM (B2.2.5, "Concurrent modification and execution of
 * instructions") lets one core execute an instruction that another
 * rewrites when both the old and the new instruction are among B, BL, BRK,
 * HVC, ISB, NOP, SMC and SVC: the executing core then runs the old or the
 * new one, never anything else. NOP <-> B qualifies; the store must be a
 * single-copy atomic 32-bit write (an aligned word store: B2.2.1), which
 * sy_arch_code_store() makes. After the store, the new instruction reaches
 * the other cores' instruction streams through the cache maintenance of
 * sy_arch_code_written() (clean D to PoU, invalidate I, DSB ISH; B2.4.4,
 * "Instruction cache maintenance") and the context synchronisation of
 * every core by membarrier(PRIVATE_EXPEDITED_SYNC_CORE) (sync.c).
 *
 * A debugger's breakpoint (BRK over the whole instruction) leaves nothing
 * of the site to write around: a site under one is never written
 * (TRAPPED), unless the instruction it hides is already the new one.
 */
#ifndef SY_ARCH_AARCH64_H
#define SY_ARCH_AARCH64_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define SY_ARCH_MAX_INSN 16
/* A debugger's breakpoint instruction, for messages. */
#define SY_ARCH_TRAP_NAME "brk"

#define SY_A64_NOP 0xd503201fu
#define SY_A64_B 0x14000000u
#define SY_A64_B_MASK 0xfc000000u
#define SY_A64_BRK 0xd4200000u
#define SY_A64_BRK_MASK 0xffe0001fu

/* A site's length, from its record's LONG bit (x86-64 has two; here every
 * site is one instruction), and the bit for a length. */
#define SY_ARCH_JUMP_LEN(long_) ((void)(long_), 4u)
#define SY_ARCH_JUMP_IS_LONG(len) ((void)(len), false)

static inline uint32_t sy_a64_word(const uint8_t *p)
{
	uint32_t w;

	memcpy(&w, p, 4);
	return w;
}

/* B to target from code, or 0 when out of reach or misaligned */
static inline uint32_t sy_a64_b(uintptr_t code, uintptr_t target)
{
	intptr_t d = (intptr_t)target - (intptr_t)code;

	if ((d & 3) || d < -(1l << 27) || d >= (1l << 27))
		return 0;
	return SY_A64_B | ((uint32_t)(d >> 2) & 0x03ffffffu);
}

/* No byte is a breakpoint here (and no exact change carries a bp_mask). */
static inline bool sy_arch_bp_byte(uint8_t b)
{
	(void)b;
	return false;
}

/*
 * A freshly loaded site holds the B the assembler emitted to target, the
 * NOP that `switchyard prepatch` may have written, or a debugger's BRK
 * (gdb inserts breakpoints before the program runs). It must be aligned
 * and its target within a B's reach.
 */
static inline int sy_arch_jump_decode(uintptr_t code, uintptr_t target,
				      unsigned *len)
{
	uint32_t w, b = sy_a64_b(code, target);

	if ((code & 3) || !b)
		return -EFAULT;
	w = sy_a64_word((const uint8_t *)code);
	if (w != b && w != SY_A64_NOP && (w & SY_A64_BRK_MASK) != SY_A64_BRK)
		return -EFAULT;
	*len = 4;
	return 0;
}

/* What a breakpoint found at start-up hides, from the file's word: 1 a B,
 * 0 a NOP (a prepatched file), -1 unknown (not the file loaded). */
static inline int sy_arch_jump_shadow(const uint8_t *file, const uint8_t *mem,
				      unsigned len)
{
	uint32_t w = sy_a64_word(file);

	(void)mem;
	(void)len;
	if ((w & SY_A64_B_MASK) == SY_A64_B)
		return 1;
	return w == SY_A64_NOP ? 0 : -1;
}

static inline void sy_arch_jump_encode(uintptr_t code, uintptr_t target,
				       unsigned len, bool jump, uint8_t *out)
{
	uint32_t w = jump ? sy_a64_b(code, target) : SY_A64_NOP;

	(void)len;
	memcpy(out, &w, 4);
}

static inline void sy_arch_jump_encode_pair(uintptr_t code, uintptr_t target,
					    unsigned len, bool old_jump,
					    bool new_jump, uint8_t *old,
					    uint8_t *new_)
{
	sy_arch_jump_encode(code, target, len, old_jump, old);
	sy_arch_jump_encode(code, target, len, new_jump, new_);
}

static inline bool sy_arch_is_trap(const uint8_t *mem)
{
	return (sy_a64_word(mem) & SY_A64_BRK_MASK) == SY_A64_BRK;
}

/*
 *   bytes at the site      change to    what we do
 *   the new form           -            nothing (NEW)
 *   the other form         new          write the word (OLD)
 *   BRK hiding the new     -            nothing (NEW)
 *   BRK hiding the other   new          nothing can be written: TRAPPED
 *   anything else          -            refuse (FOREIGN)
 */
static inline enum sy_site_check sy_arch_site_check(const uint8_t *mem,
						    const uint8_t *new_,
						    unsigned len,
						    bool hidden_jump,
						    struct sy_arch_fix *fix)
{
	uint32_t w = sy_a64_word(mem), nw = sy_a64_word(new_);
	bool new_jumps = nw != SY_A64_NOP;

	(void)len;
	(void)fix;
	if (w == nw)
		return SY_SITE_NEW;
	if (sy_arch_is_trap(mem))
		return hidden_jump == new_jumps ? SY_SITE_NEW : SY_SITE_TRAPPED;
	if (new_jumps ? w == SY_A64_NOP : (w & SY_A64_B_MASK) == SY_A64_B)
		return SY_SITE_OLD;
	return SY_SITE_FOREIGN;
}

/* Whether the site jumps now; under a breakpoint, as its shadow will. */
static inline bool sy_arch_site_jumps(const uint8_t *mem, unsigned len,
				      bool hidden_jump)
{
	(void)len;
	if (sy_arch_is_trap(mem))
		return hidden_jump;
	return (sy_a64_word(mem) & SY_A64_B_MASK) == SY_A64_B;
}

/* Code is written a word at a time through /proc/self/mem too
 * (poke_write.c says why). */
#define SY_ARCH_CODE_WORD 4

/*
 * Whether an emulator runs this process: qemu-user passes the host's
 * /proc/cpuinfo through, and an Arm kernel's always has "CPU implementer"
 * lines. qemu keeps running its translation of code written through
 * /proc/self/mem (it sees only stores through its own mappings), so the
 * engine writes through the mprotect window there (poke_write.c).
 * open/read, no stdio (the change path's rule).
 */
#define SY_ARCH_HAVE_EMULATED 1
static inline bool sy_arch_emulated(void)
{
	char buf[4096];
	ssize_t n;
	int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;	/* cannot tell: as on hardware */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	return !strstr(buf, "CPU implementer");
}

/* A guarded page (BTI) shows as "bt" in /proc/self/smaps' VmFlags, and its
 * protection carries PROT_BTI (<asm/mman.h>): the mprotect window keeps it
 * (poke_write.c). */
#define SY_ARCH_PROT_VMFLAG "bt"
#define SY_ARCH_PROT_EXTRA 0x10

#define SY_ARCH_HAVE_CODE_STORE 1
/*
 * Store len bytes of code at dst (through a writable mapping): every
 * aligned instruction word in one single-copy atomic 32-bit store (Arm ARM
 * B2.2.1), so that a core executing it meanwhile sees the old or the new
 * instruction, never a mix of their halves.
 */
static inline void sy_arch_code_store(void *dst, const uint8_t *src,
				      size_t len)
{
	uintptr_t a = (uintptr_t)dst;
	size_t i = 0;

	for (; i < len && ((a + i) & 3); i++)
		((volatile uint8_t *)dst)[i] = src[i];
	for (; i + 4 <= len; i += 4)
		__atomic_store_n((uint32_t *)(a + i), sy_a64_word(src + i),
				 __ATOMIC_RELAXED);
	for (; i < len; i++)
		((volatile uint8_t *)dst)[i] = src[i];
}

/*
 * Code was written at [addr, addr + len): clean the data cache to the
 * point of unification and invalidate the instruction cache over it, then
 * DSB ISH and ISB (Arm ARM B2.4.4; libgcc's __aarch64_sync_cache_range
 * reads CTR_EL0 and skips what IDC and DIC say is not needed). The ISB
 * covers this thread; the other threads get their context synchronisation
 * from sy_arch_sync_cores().
 */
static inline void sy_arch_code_written(uintptr_t addr, size_t len)
{
	__builtin___clear_cache((char *)addr, (char *)(addr + len));
}

/* ---- static calls ---------------------------------------------------------
 *
 * A site is one word (include/switchyard/arch/aarch64_static_call.h):
 *
 *   form         word                          encoding
 *   call         BL target                     100101 imm26 (target - site)/4
 *   none (NULL)  NOP                           d503201f
 *   breakpoint   BRK                           a debugger's: never written
 *
 * src/sc_insn.c rewrites it whole: every pair of forms is on the Arm ARM's
 * list of concurrently modifiable instructions (B2.2.5).
 */
#define SY_SC_INSN 4	/* a site: one instruction word */
#define SY_A64_BL 0x94000000u
#define SY_A64_BL_MASK 0xfc000000u

/* BL to target from code into out; false when out of reach (+-128 MiB)
 * or misaligned. */
static inline bool sy_arch_sc_call(uintptr_t code, uintptr_t target,
				   uint8_t out[4])
{
	uint32_t b = sy_a64_b(code, target);	/* B's reach and rule */

	if (!b)
		return false;
	b = SY_A64_BL | (b & ~SY_A64_B_MASK);
	memcpy(out, &b, 4);
	return true;
}

static inline void sy_arch_sc_none(uint8_t out[4])
{
	uint32_t w = SY_A64_NOP;

	memcpy(out, &w, 4);
}

/* B to target from code into out (an inline native's block, below);
 * false when out of reach. */
static inline bool sy_arch_sc_branch(uintptr_t code, uintptr_t target,
				     uint8_t out[4])
{
	uint32_t b = sy_a64_b(code, target);

	if (!b)
		return false;
	memcpy(out, &b, 4);
	return true;
}

/* Whether the word at mem is a B (an inline native's branch). */
static inline bool sy_arch_sc_is_branch(const uint8_t *mem)
{
	return (sy_a64_word(mem) & SY_A64_B_MASK) == SY_A64_B;
}

/* The target of the BL at mem (site code), or 0 when it holds none. */
static inline uintptr_t sy_arch_sc_call_target(const uint8_t *mem,
					       uintptr_t code)
{
	uint32_t w = sy_a64_word(mem);
	int32_t imm = (int32_t)(w << 6) >> 6;	/* imm26, sign-extended */

	if ((w & SY_A64_BL_MASK) != SY_A64_BL)
		return 0;
	return code + (uintptr_t)((intptr_t)imm * 4);
}

/*
 * A veneer as the header emits it (SY__SC_TEXT, SY__SC_TEXT_CS), checked
 * before its site is touched: its load of the meta's address (adrp + ldr
 * from the site's record), then the fixed words. Returns the address the
 * meta is loaded from (the caller compares it with the record's), 0 when
 * the bytes differ.
 */
static inline uintptr_t sy_a64_adrp_ldr(uintptr_t pc, uint32_t adrp,
					uint32_t ldr, unsigned reg)
{
	int64_t hi;
	uintptr_t page;

	/* ADRP: 1 immlo(2) 10000 immhi(19) Rd; LDR (imm, 64-bit): 11 111
	 * 0 01 01 imm12 Rn Rt, offset imm12 * 8 */
	if ((adrp & 0x9f00001fu) != (0x90000000u | reg) ||
	    (ldr & 0xffc003ffu) != (0xf9400000u | reg << 5 | reg))
		return 0;
	hi = (int64_t)((((adrp >> 5) & 0x7ffff) << 2) | ((adrp >> 29) & 3));
	hi = (hi << 43) >> 43;	/* 21 bits, sign-extended */
	page = (pc & ~(uintptr_t)0xfff) + (uintptr_t)(hi << 12);
	return page + ((ldr >> 10) & 0xfff) * 8;
}

static inline uintptr_t sy_arch_sc_veneer_slot(uintptr_t v, bool cs)
{
	static const uint32_t tail[] = {
		0xf9400210u,	/* ldr x16, [x16] (the key) */
		0xc8dffe10u,	/* ldar x16, [x16] (its func) */
	};
	static const uint32_t plain[] = {
		0xb4000050u,	/* cbz x16, .+8 */
		0xd61f0200u,	/* br x16 */
		0xd65f03c0u,	/* ret */
	};
	static const uint32_t cs_head[] = {
		0xa9b77bfdu,	/* stp x29, x30, [sp, #-144]! */
		0x910003fdu,	/* mov x29, sp */
	};
	static const uint32_t cs_call[] = {
		0xb4000050u,	/* cbz x16, .+8 */
		0xd63f0200u,	/* blr x16 */
	};
	const uint32_t *w = (const uint32_t *)v;
	uintptr_t slot;

	if (cs) {
		if (memcmp(w, cs_head, sizeof(cs_head)))
			return 0;
		w += 10;	/* the frame, 8 stp */
	}
	slot = sy_a64_adrp_ldr((uintptr_t)w, w[0], w[1], 16);
	if (!slot || memcmp(w + 2, tail, sizeof(tail)))
		return 0;
	if (cs ? memcmp(w + 4, cs_call, sizeof(cs_call))
	       : memcmp(w + 4, plain, sizeof(plain)))
		return 0;
	return slot;
}

/*
 * Stubs for targets beyond a BL's reach (sc_stub.c): `ldr x16, .+8;
 * br x16; .quad target` (a literal load, the kernel's module PLT idea),
 * 16 bytes, in pages mapped within 96 MiB of the site (a BL reaches
 * 128). A stub page's unused words are UDF #0 (0). Written once, before
 * any site calls it, then synced (SY_SC_STUB_SYNC): a core that runs the
 * new BL before the update's own sync must find the stub's instructions
 * already visible to its instruction fetch (Arm ARM B2.4.4: the writer's
 * maintenance, then a context synchronisation event on each core).
 */
#define SY_SC_STUB_LEN 16
#define SY_SC_STUB_FILL 0x00
#define SY_SC_STUB_REACH (96ul << 20)
#define SY_SC_STUB_STEP (1ul << 20)
#define SY_SC_STUB_SYNC 1
static inline void sy_arch_sc_stub(uintptr_t target, uint8_t out[16])
{
	static const uint32_t code[2] = {
		0x58000050u,	/* ldr x16, .+8 */
		0xd61f0200u,	/* br x16 */
	};
	uint64_t t = target;

	memcpy(out, code, 8);
	memcpy(out + 8, &t, 8);
}

/*
 * An inline native runs out of line here: a site cannot hold several
 * instructions (nor one off the Arm ARM's list) in place of its BL while
 * threads run it, but it may hold a B to a block near it: the native's
 * words, then a B back to the instruction after the site. The block is
 * written (and synced) before any site branches to it and never changed;
 * the site changes between BL, NOP and B, all on the list. The native's
 * length must be a whole number of words, at most 12 bytes (the block is a
 * stub slot, 16 bytes). Returns false when back is out of reach.
 */
#define SY_SC_NATIVE_OOL 1
static inline bool sy_arch_sc_native_block(uintptr_t addr, const uint8_t *code,
					   unsigned len, uintptr_t back,
					   uint8_t out[16])
{
	memset(out, SY_SC_STUB_FILL, 16);
	memcpy(out, code, len);
	return sy_arch_sc_branch(addr + len, back, out + len);
}

/* A spin-wait hint. */
static inline void sy_arch_cpu_relax(void)
{
	__asm__ volatile("yield" ::: "memory");
}

/* ---- alternatives and run-time constants ---- */

/*
 * CPU features: the hwcap names live in cpu_probe.c (cpu.c's own table is
 * x86-64's).
 */
#define SY_ARCH_HAVE_CPU_NAMES 1
struct sy_cpu_name {
	unsigned feature;
	const char *name;	/* as /proc/cpuinfo's "Features" line has it */
};
__attribute__((visibility("hidden")))
extern const struct sy_cpu_name sy_arch_cpu_names[];
__attribute__((visibility("hidden"))) extern const size_t sy_arch_cpu_nnames;

/*
 * Alternatives (include/switchyard/arch/aarch64_alternative.h): a site is
 * whole instructions, padded with NOPs; insn.c moves code (re-aiming B,
 * BL, B.cond, CBZ/CBNZ, TBZ/TBNZ, LDR literal, ADR, ADRP) and fills with
 * NOPs. Every write happens before any thread runs the site (the object's
 * registration), so the Arm ARM's list of instructions that may change
 * under a running core does not constrain what is written (the same
 * premise as x86-64's: src/alternative.c).
 */
#define SY_ARCH_HAVE_ALTERNATIVES 1
#define SY_ARCH_INSN_ALIGN 4	/* a trap (BRK) can only start here */

/* The length of old without its trailing NOP padding (whole words). */
static inline size_t sy_arch_alt_unpadded(const uint8_t *old, size_t len)
{
	len &= ~(size_t)3;
	while (len && sy_a64_word(old + len - 4) == SY_A64_NOP)
		len -= 4;
	return len;
}

/* A padding of this many words or more is a B over NOPs (insn.c). */
#define SY_A64_PAD_BRANCH 5

/*
 * Run-time constants (include/switchyard/arch/aarch64_runtime_const.h):
 *
 *   +0   B ool  / NOP           the guard
 *   +4   MOVZ Xd, #0xcdef                      ptr: 4 words, end 20
 *        MOVK Xd, #0x89ab, LSL #16
 *        MOVK Xd, #0x4567, LSL #32
 *        MOVK Xd, #0x0123, LSL #48
 *   +4   MOVZ Wd, #0x5678                      u32: 2 words, end 12
 *        MOVK Wd, #0x1234, LSL #16
 *   +4   LSR Wd, Wn, #12 (UBFM Wd, Wn, #12, #31)  shift: 1 word, end 8
 *
 * The immediates are not among the instructions that may change while a
 * core executes them (Arm ARM B2.2.5): they are written while the guard
 * (B) keeps every thread out of them, then made visible (the engine's
 * cache maintenance and core sync), and only then is the guard turned
 * into a NOP, a change B2.2.5 allows under running threads. They are never
 * written again (a second init with another value is refused).
 */
#define SY_ARCH_HAVE_RC_HOOKS 1
#define SY_A64_MOVZ_X 0xd2800000u
#define SY_A64_MOVK_X 0xf2800000u
#define SY_A64_MOVZ_W 0x52800000u
#define SY_A64_MOVK_W 0x72800000u
#define SY_A64_MOV_MASK 0xff800000u	/* opc, sf: hw and imm16 below */
#define SY_A64_UBFM_W 0x53000000u
#define SY_A64_UBFM_MASK 0xffc00000u

static inline bool sy_arch_rc_valid(unsigned end, unsigned size)
{
	return (size == 8 && end == 20) || (size == 4 && end == 12) ||
	       (size == 1 && end == 8);
}

/* MOVZ (first) or MOVK of imm16 at halfword hw into register rd. */
static inline uint32_t sy_a64_mov16(bool x, bool first, unsigned hw,
				    unsigned imm16, unsigned rd)
{
	uint32_t op = x ? (first ? SY_A64_MOVZ_X : SY_A64_MOVK_X)
			: (first ? SY_A64_MOVZ_W : SY_A64_MOVK_W);

	return op | hw << 21 | (imm16 & 0xffffu) << 5 | (rd & 31);
}

/*
 * The immediate's change at a site (code: the guard): the instructions
 * after the guard with the placeholder (old) and with value v (new), their
 * registers as the compiler chose them (read from the site: whatever else
 * differs makes the engine refuse the site as foreign).
 */
static inline void sy_arch_rc_imm(uintptr_t code, unsigned end,
				  unsigned size, uint64_t v, unsigned *off,
				  unsigned *len, uint8_t *old, uint8_t *new_)
{
	static const uint64_t ph[2] = { 0x0123456789abcdefull, 0x12345678u };
	const uint8_t *p = (const uint8_t *)code + 4;
	uint32_t w = sy_a64_word(p), o[4], n[4];
	unsigned words = (end - 4) / 4;

	*off = 4;
	*len = words * 4;
	if (size == 1) {
		/* UBFM Wd, Wn, #immr, #31: LSR by immr; imms stays 31 */
		uint32_t keep = (w & 0x3ffu) | 31u << 10 | SY_A64_UBFM_W;

		o[0] = keep | 12u << 16;
		n[0] = keep | (uint32_t)(v & 31) << 16;
	} else {
		for (unsigned i = 0; i < words; i++) {
			uint64_t pv = ph[size == 4];

			o[i] = sy_a64_mov16(size == 8, !i, i, pv >> 16 * i, w);
			n[i] = sy_a64_mov16(size == 8, !i, i, v >> 16 * i, w);
		}
	}
	memcpy(old, o, *len);
	memcpy(new_, n, *len);
}

/*
 * The guard's change: the B to the out-of-line code (whatever its offset:
 * the record does not say; a guard holding anything but a B or the NOP is
 * refused as foreign) becomes a NOP.
 */
static inline void sy_arch_rc_guard(uintptr_t code, uint8_t *old,
				    uint8_t *new_, unsigned *len)
{
	uint32_t w = sy_a64_word((const uint8_t *)code), n = SY_A64_NOP;

	if ((w & SY_A64_B_MASK) != SY_A64_B)
		w = SY_A64_B | 1;	/* not there: the engine compares */
	memcpy(old, &w, 4);
	memcpy(new_, &n, 4);
	*len = 4;
}

#endif /* SY_ARCH_AARCH64_H */
