/* SPDX-License-Identifier: MIT */
/*
 * arch/arch.h - what the generic code needs from each architecture
 * (src/arch/<arch>/), and nothing else; included by internal.h, where
 * everything it uses (SY_HIDDEN, struct switchyard_cpu) is declared first.
 */
#ifndef SY_ARCH_ARCH_H
#define SY_ARCH_ARCH_H

/* ---- the per-arch contract (src/arch/<arch>/) ---------------------------
 *
 *   sy_arch_jump_decode  verify: a freshly loaded site holds the jump that
 *                        the asm emitted to target or its no-op form (a
 *                        prepatched file), maybe under a debugger's
 *                        breakpoint; gives its length
 *   sy_arch_jump_shadow  which form a breakpoint found at start-up hides,
 *                        from the file's bytes
 *   sy_arch_site_check   classify a site's bytes for a change: write, skip,
 *                        fix under a breakpoint, step back to canonical,
 *                        or refuse
 *   sy_arch_site_jumps   whether a site's bytes jump now
 *   sy_arch_is_trap      a debugger's breakpoint sits on the site
 *   sy_arch_jump_encode  encode: the bytes of the JMP or no-op form
 *   sy_arch_jump_encode_pair  both forms at once (old, new)
 *   sy_arch_sync_cores   sync: every thread of the process serialises
 *                        before the call returns
 *   sy_arch_cpu_probe    the CPU's identity and feature words
 *                        (<switchyard/cpufeature.h>)
 *   sy_arch_cpu_deps     hide every feature whose prerequisite is hidden
 *                        (transitively; clearcpuid's cpuid-deps)
 *   sy_arch_cpu_synthetic  the synthetic features, from the others
 *   sy_arch_cpu_relax    a spin-wait hint
 *   SY_ARCH_MAX_INSN     the longest change the engine must carry
 *   SY_ARCH_JUMP_LEN     a site's length from its record's LONG bit (and
 *                        SY_ARCH_JUMP_IS_LONG, the bit for a length)
 *   sy_arch_code_store   store code through a writable mapping, and
 *   sy_arch_code_written what the writing thread must do after a write
 *                        (defaults below)
 *   SY_ARCH_HAVE_MEMCPY  a copy routine of its own (memcpy_arch.c:
 *                        sy_arch_mc_entry() is not NULL); without it
 *                        switchyard_memcpy is the C library's memcpy
 * The generic poke engine (poke.c) does the patching in between.
 */
/* What sy_arch_site_check() finds at a site (see arch/x86_64/sy_arch.h). */
enum sy_site_check {
	SY_SITE_OLD,		/* holds the other canonical form: write new */
	SY_SITE_NEW,		/* takes the new path already: nothing to do */
	SY_SITE_FIX,		/* under a breakpoint: write the fix (below) */
	SY_SITE_PREP,		/* not canonical: write the fix (the path is
				   kept), sync, check again */
	SY_SITE_TRAPPED,	/* under a breakpoint that hides the opcode
				   the change needs */
	SY_SITE_FOREIGN,	/* unexpected bytes */
};

/* A write of len bytes at the site's address + off. */
struct sy_arch_fix {
	unsigned off, len;
	uint8_t bytes[8];
};

#include <string.h>

#include "sy_arch.h"	/* src/arch/<arch>/: decode, encode (inline) */

#ifndef SY_ARCH_HAVE_CODE_STORE
/*
 * Store code through a writable mapping: a plain copy. On x86-64 each
 * change is one byte, which cannot be torn (arch/x86_64/sy_arch.h); and
 * once written nothing is left to do for this thread, whose processor
 * snoops stores to code (SDM vol. 3A, "Self-Modifying Code"): the other
 * threads are serialised by sy_arch_sync_cores(). An arch that needs more
 * (AArch64: word stores, cache maintenance) defines its own.
 */
static inline void sy_arch_code_store(void *dst, const uint8_t *src,
				      size_t len)
{
	memcpy(dst, src, len);
}

static inline void sy_arch_code_written(uintptr_t addr, size_t len)
{
	(void)addr;
	(void)len;
}
#endif

SY_HIDDEN int sy_arch_sync_cores(void);	/* src/arch/<arch>/sync.c */
/* src/arch/<arch>/sync.c: whether the calling thread is known to be the
 * process's only one (then no other core needs a sync, and no membarrier
 * is made); what a membarrier error means, for a message. */
SY_HIDDEN bool sy_arch_single_threaded(void);
SY_HIDDEN const char *sy_membarrier_why(int err);
/* src/arch/<arch>/insn.c, for alternatives: copy len bytes of code at from
 * into buf, to be written at `to`, relative operands keeping their
 * destinations (0, -EINVAL: undecodable, -ERANGE: out of reach, -ENOSYS);
 * fill len bytes with the fewest NOPs (or a jump over them). */
SY_HIDDEN int sy_arch_code_move(uint8_t *buf, const uint8_t *from, size_t len,
				uintptr_t to);
SY_HIDDEN void sy_arch_nop_fill(uint8_t *buf, size_t len);
/* src/arch/<arch>/cpu_probe.c: fill *cpu and words (zeroed by the caller) */
SY_HIDDEN void sy_arch_cpu_probe(struct switchyard_cpu *cpu,
				 uint32_t words[SWITCHYARD_CPU_WORDS]);
/* ... and the synthetic features, from the words left after the mask */
SY_HIDDEN void sy_arch_cpu_deps(uint32_t words[SWITCHYARD_CPU_WORDS]);
SY_HIDDEN void sy_arch_cpu_synthetic(const struct switchyard_cpu *cpu,
				     uint32_t words[SWITCHYARD_CPU_WORDS]);

#endif /* SY_ARCH_ARCH_H */
