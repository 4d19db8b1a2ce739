/* SPDX-License-Identifier: MIT */
/*
 * switchyard/arch/aarch64_static_call.h - static call sites for AArch64.
 *
 * Never include this file directly: <switchyard/static_call.h> selects it.
 *
 * A site is one instruction, the same a direct call compiles to:
 *
 *   word        when                         why it may change under threads
 *   bl veneer   as compiled; a far target    BL <-> BL and BL <-> NOP are on
 *               with no stub; an ordinary    the Arm ARM's list of
 *               function at a callee-save    instructions that may be
 *               site                         modified while other cores
 *   bl target   the target within +-128 MiB  execute them (B2.2.5): a core
 *   bl stub     a far target: a stub near    runs the old or the new one,
 *               the site jumps to it         nothing else; one aligned word
 *   nop         a NULL target                is written whole
 *
 * src/sc_insn.c rewrites it (and says which rule makes each step safe).
 * No guard, no rseq, no stack step: AAPCS64 on Linux has no red zone, and
 * sp is 16-byte aligned at every instruction of a compiled function.
 *
 * The veneer, out of line in .text.unlikely (joining the function's
 * section group), calls the key's current target: it loads it (acquire:
 * pairs with the update's release) and tail-calls it with `br x16`, so
 * that the target returns straight to the site (lr is the site's + 4). A
 * NULL target: it returns. A callee-save site's veneer saves x1-x15 and
 * x18 around a `blr x16` instead (its target may be any C function).
 * x16 and x17 are the intra-procedure-call registers (AAPCS64 6.1.1): a
 * linker's veneer may change them too, so every site declares them
 * clobbered.
 *
 * Branch protection (-mbranch-protection=standard): a BL needs no landing
 * pad; `br x16` and `blr x16` land on the target's `bti c` (or its
 * `paciasp`, which acts as one), which every function compiled with branch
 * protection starts with; x16/x17 are the registers BTI c accepts a BR
 * from. A stub (sc_stub.c) is mapped without PROT_BTI. Pointer
 * authentication: the target signs lr against sp, both as the site left
 * them (the veneer changes neither before its br).
 *
 * Each site adds a 16-byte record to section "sy_static_call_sites"
 * (src/sy_records.h):
 *   offset 0  8  meta - absolute address of the site's struct sy__sc_meta
 *   offset 8  4  code - the site minus the field's address
 *   offset 12 4  flags - the veneer minus the field's address (a multiple
 *                of 4: bits 0-1 are the library's at run time)
 *
 * ABI at the site (the compiler sees one asm statement): arguments are bound
 * to x0-x5 after all of them have been evaluated; the result is x0; every
 * caller-saved register (x0-x18, lr, the flags, v0-v31, SVE's predicates)
 * is clobbered. A callee-save site loses x0, x16, x17, lr, the flags and the
 * vector state only.
 */
#ifndef SWITCHYARD_ARCH_AARCH64_STATIC_CALL_H
#define SWITCHYARD_ARCH_AARCH64_STATIC_CALL_H

#ifndef SWITCHYARD_STATIC_CALL_H
#error "include <switchyard.h> or <switchyard/static_call.h>, not this file"
#endif

#define SY__ARCH_HAVE_STATIC_CALL 1

/*
 * The veneer's load of the key's target into x16: the meta's address from
 * the site's record (pc-relative: a local label; the record's .quad is an
 * ordinary data relocation. Not the meta itself: at -O2 gcc names a static
 * local as a section anchor plus an offset, which a GOT reference drops,
 * and a direct adrp cannot reach the meta of a C++ inline function's site,
 * a COMDAT object that may be preempted), its key, the key's func.
 */
#define SY__SC_LOAD                                                            \
	"adrp x16, 770b\n\t"                                                    \
	"ldr x16, [x16, #:lo12:770b]\n\t"                                       \
	"ldr x16, [x16]\n\t"                                                    \
	"ldar x16, [x16]\n\t"

/* The site and its record. */
#define SY__SC_SITE_HEAD                                                            \
	"771:\tbl 776f\n\t"                                                    \
	".pushsection sy_static_call_sites, \"aw?" SY__REC_R "\"\n\t"          \
	".balign 8\n"                                                          \
	"770:\t.quad %c[sy_meta]\n\t"                                          \
	".long 771b - ., 776f - .\n\t"                                         \
	".popsection\n\t"                                                      \
	".pushsection .text.unlikely.sy_static_call, \"ax?\", @progbits\n\t"   \
	".balign 4\n"                                                          \
	"776:\t"

#define SY__SC_TEXT                                                            \
	SY__SC_SITE_HEAD                                                            \
	SY__SC_LOAD                                                            \
	"cbz x16, 777f\n\t"                                                    \
	"br x16\n"                                                             \
	"777:\tret\n\t"                                                        \
	".popsection"

/* The callee-save veneer: a frame (x29, lr), the 16 registers a C
 * function may change but a callee-save site keeps, the call. */
#define SY__SC_TEXT_CS                                                         \
	SY__SC_SITE_HEAD                                                       \
	"stp x29, x30, [sp, #-144]!\n\t"                                       \
	"mov x29, sp\n\t"                                                      \
	SY__A64_CS_SAVE                                                        \
	SY__SC_LOAD                                                            \
	"cbz x16, 777f\n\t"                                                    \
	"blr x16\n"                                                            \
	"777:\t" SY__A64_CS_RESTORE                                            \
	"ldp x29, x30, [sp], #144\n\t"                                         \
	"ret\n\t"                                                              \
	".popsection"

#if defined(__ARM_FEATURE_SVE)
#define SY__SC_CLOBBER_SVE                                                     \
	, "p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", "p10",   \
	"p11", "p12", "p13", "p14", "p15", "ffr"
#else
#define SY__SC_CLOBBER_SVE
#endif

/* The vector registers: v0-v7 and v16-v31 are caller-saved, and of v8-v15
 * a callee keeps the low 64 bits only (AAPCS64 6.1.2). */
#define SY__SC_CLOBBER_V                                                       \
	"v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10",     \
	"v11", "v12", "v13", "v14", "v15", "v16", "v17", "v18", "v19", "v20",  \
	"v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", "v29", "v30",  \
	"v31" SY__SC_CLOBBER_SVE

/* Everything a callee may change, but the argument registers (operands). */
#define SY__SC_CLOBBERS                                                        \
	"x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15",      \
	"x16", "x17", "x18", "x30", "cc", "memory", SY__SC_CLOBBER_V

/* What a callee-save site loses: x0 (an operand), x16, x17, lr, the
 * flags, memory, the vector state. */
#define SY__SC_CLOBBERS_CS                                                     \
	"x16", "x17", "x30", "cc", "memory", SY__SC_CLOBBER_V

/* x0 carries the first argument in and the result out: bound always. */
#define SY__SC_X0_0 0
#define SY__SC_X0_1 sy__t1
#define SY__SC_X0_2 sy__t1
#define SY__SC_X0_3 sy__t1
#define SY__SC_X0_4 sy__t1
#define SY__SC_X0_5 sy__t1
#define SY__SC_X0_6 sy__t1
#define SY__SC_BIND0
#define SY__SC_BIND1
#define SY__SC_BIND2 register long sy__r2 __asm__("x1") = sy__t2;
#define SY__SC_BIND3 SY__SC_BIND2 register long sy__r3 __asm__("x2") = sy__t3;
#define SY__SC_BIND4 SY__SC_BIND3 register long sy__r4 __asm__("x3") = sy__t4;
#define SY__SC_BIND5 SY__SC_BIND4 register long sy__r5 __asm__("x4") = sy__t5;
#define SY__SC_BIND6 SY__SC_BIND5 register long sy__r6 __asm__("x5") = sy__t6;
#define SY__SC_OUT0
#define SY__SC_OUT1
#define SY__SC_OUT2 , "+r"(sy__r2)
#define SY__SC_OUT3 SY__SC_OUT2, "+r"(sy__r3)
#define SY__SC_OUT4 SY__SC_OUT3, "+r"(sy__r4)
#define SY__SC_OUT5 SY__SC_OUT4, "+r"(sy__r5)
#define SY__SC_OUT6 SY__SC_OUT5, "+r"(sy__r6)
#define SY__SC_IN0
#define SY__SC_IN1
#define SY__SC_IN2 , "r"(sy__r2)
#define SY__SC_IN3 SY__SC_IN2, "r"(sy__r3)
#define SY__SC_IN4 SY__SC_IN3, "r"(sy__r4)
#define SY__SC_IN5 SY__SC_IN4, "r"(sy__r5)
#define SY__SC_IN6 SY__SC_IN5, "r"(sy__r6)
#define SY__SC_FREE0 "x1", "x2", "x3", "x4", "x5",
#define SY__SC_FREE1 "x1", "x2", "x3", "x4", "x5",
#define SY__SC_FREE2 "x2", "x3", "x4", "x5",
#define SY__SC_FREE3 "x3", "x4", "x5",
#define SY__SC_FREE4 "x4", "x5",
#define SY__SC_FREE5 "x5",
#define SY__SC_FREE6

/*
 * SY__SC_ASM(n, meta, room) - the site, with its n arguments already
 * converted into the longs sy__t1..sy__tn (declared by the caller); a long:
 * x0 after the call. room (an inline native's) has no use here: a site is
 * one BL. SY__A64_SYM(): the meta's symbol, printed bare by %c.
 */
#define SY__SC_ASM(n, meta, room)                                              \
	__extension__({                                                        \
		SY__SC_BIND##n                                                 \
		register long sy__x0 __asm__("x0") = SY__SC_X0_##n;            \
		__asm__ volatile(SY__SC_TEXT                                   \
				 : "+r"(sy__x0) SY__SC_OUT##n                  \
				 : [sy_meta] SY__A64_SYM(meta), [sy_room] "i"(room) \
				 : SY__SC_FREE##n SY__SC_CLOBBERS);            \
		sy__x0;                                                        \
	})
/* SY__SC_ASM_CS(n, meta, room) - a callee-save site: x1-x5 are inputs
 * (the callee keeps them), x0 the only argument register written. */
#define SY__SC_ASM_CS(n, meta, room)                                           \
	__extension__({                                                        \
		SY__SC_BIND##n                                                 \
		register long sy__x0 __asm__("x0") = SY__SC_X0_##n;            \
		__asm__ volatile(SY__SC_TEXT_CS                                \
				 : "+r"(sy__x0)                                \
				 : [sy_meta] SY__A64_SYM(meta), [sy_room] "i"(room) \
				   SY__SC_IN##n                                \
				 : SY__SC_CLOBBERS_CS);                        \
		sy__x0;                                                        \
	})

/*
 * Per-object glue, as for jump labels (arch/aarch64.h): the object's table
 * of sites goes to the registry before any of its code runs, and comes
 * back when it is unloaded. COMDAT group "sy__sc_dso_glue": one copy per
 * object.
 */
#ifndef SY__NO_DSO_GLUE
__asm__(".pushsection sy_static_call_sites, \"aw" SY__REC_R "\"\n\t"
	".popsection\n\t"
	".hidden __start_sy_static_call_sites\n\t"
	".hidden __stop_sy_static_call_sites\n\t"
	".pushsection .text.sy__sc_dso_glue, \"axG\", @progbits, sy__sc_dso_glue, comdat\n\t"
	".balign 4\n"
	"1:\thint 34\n\t"	/* bti c: called from .init_array */
	"adrp x0, __start_sy_static_call_sites\n\t"
	"add x0, x0, :lo12:__start_sy_static_call_sites\n\t"
	"adrp x1, __stop_sy_static_call_sites\n\t"
	"add x1, x1, :lo12:__stop_sy_static_call_sites\n\t"
	"b sy__register_static_call_sites\n"
	"2:\thint 34\n\t"	/* bti c: called from .fini_array */
	"adrp x0, __start_sy_static_call_sites\n\t"
	"add x0, x0, :lo12:__start_sy_static_call_sites\n\t"
	"adrp x1, __stop_sy_static_call_sites\n\t"
	"add x1, x1, :lo12:__stop_sy_static_call_sites\n\t"
	"b sy__unregister_static_call_sites\n\t"
	".popsection\n\t"
	".pushsection .init_array.00099, \"awG\", @init_array, sy__sc_dso_glue, comdat\n\t"
	".balign 8\n\t"
	".quad 1b\n\t"
	".popsection\n\t"
	".pushsection .fini_array.00099, \"awG\", @fini_array, sy__sc_dso_glue, comdat\n\t"
	".balign 8\n\t"
	".quad 2b\n\t"
	".popsection");
#endif

#endif /* SWITCHYARD_ARCH_AARCH64_STATIC_CALL_H */
