/* SPDX-License-Identifier: MIT */
/*
 * switchyard/arch/aarch64_alternative.h - alternatives for AArch64.
 *
 * Never include this file directly: <switchyard/alternative.h> selects it.
 *
 * A site, as assembled (the kernel's arm64 ALTERNATIVE() wants the old and
 * the new instructions of one length; here the shorter is padded):
 *   661: old instructions
 *   662: NOP x pad/4             pad = the longest replacement - the old
 *   663:                                 instructions, if positive
 * In other sections (of the enclosing function's COMDAT group, if any):
 *   .text.unlikely.sy_altinstr   6641: replacement 1  6651:  (6642..6652: 2)
 *   sy_altinstr_copy             667: old instructions and pad again: what
 *                                the site must hold, for the check before
 *                                the write (relative operands re-aimed)
 *   sy_altinstr                  a 16-byte record per replacement, as on
 *                                x86-64 (arch/x86_64_alternative.h)
 * The records of one site are consecutive; the last that applies wins.
 *
 * The replacements come before the site here: the pad is then a backward
 * reference that GNU as computes on the spot, as .rept needs (every
 * instruction is 4 bytes, so no relaxation can change it; LLVM's assembler
 * takes a .fill of NOP words instead, sized at layout). A replacement
 * must not align or hold a literal pool (.ltorg): its length would not be
 * known there. Registration (src/alternative.c, src/arch/aarch64/insn.c)
 * copies the chosen replacement over the site, re-aiming its branches,
 * literal loads, ADR and ADRP, and turns the rest into NOPs, or into a B
 * over them when they are many.
 *
 * Unlike the kernel's arm64 alternatives (patched while other CPUs are
 * held), a site is written once, before any code of its object runs: the
 * Arm ARM's limits on changing instructions that another core executes
 * (B2.2.5) do not arise.
 */
#ifndef SWITCHYARD_ARCH_AARCH64_ALTERNATIVE_H
#define SWITCHYARD_ARCH_AARCH64_ALTERNATIVE_H

#ifndef SWITCHYARD_ALTERNATIVE_H
#error "include <switchyard.h> or <switchyard/alternative.h>, not this file"
#endif

#define SY__ALT_STR(x) #x
#define SY__ALT_XSTR(x) SY__ALT_STR(x)

#ifdef SWITCHYARD_NO_PATCHING

#define SY__ALT_1(oldinstr, newinstr, f) oldinstr "\n\t"
#define SY__ALT_2(oldinstr, newinstr1, f1, newinstr2, f2) oldinstr "\n\t"

#else /* patched sites */

/* c * c is 1 for either assembler's true value (GNU as: -1) */
#define SY__ALT_B01(c) "((" c ") * (" c "))"
#define SY__ALT_OLEN "(662b - 661b)"
#define SY__ALT_R1 "(6651b - 6641b)"
#define SY__ALT_R2 "(6652b - 6642b)"
/* the longest replacement, then the pad over the old instructions */
#define SY__ALT_MAX2                                                           \
	"(" SY__ALT_R1 " + " SY__ALT_B01(SY__ALT_R2 " > " SY__ALT_R1)          \
	" * (" SY__ALT_R2 " - " SY__ALT_R1 "))"
#define SY__ALT_PAD(rlen)                                                      \
	SY__ALT_B01(rlen " > " SY__ALT_OLEN) " * (" rlen " - " SY__ALT_OLEN ")"

#define SY__ALT_REPL(n, newinstr)                                              \
	".pushsection .text.unlikely.sy_altinstr, \"ax?\", @progbits\n\t"     \
	".balign 4\n"                                                          \
	"664" #n ":\n\t" newinstr "\n"                                         \
	"665" #n ":\n\t"                                                       \
	".popsection\n\t"
#if defined(__clang__)
/* LLVM's assembler sizes a .fill when it lays the section out (its .rept
 * wants a count at once); the words are NOPs all the same, marked data */
#define SY__ALT_NOPS(pad) ".fill (" pad ") / 4, 4, 0xd503201f\n"
#else
#define SY__ALT_NOPS(pad)                                                      \
	".rept (" pad ") / 4\n\t"                                              \
	"nop\n\t"                                                              \
	".endr\n"
#endif
#define SY__ALT_SITE(oldinstr, pad)                                            \
	"661:\n\t" oldinstr "\n"                                               \
	"662:\n\t" SY__ALT_NOPS(pad)                                           \
	"663:\n\t"                                                             \
	".pushsection sy_altinstr_copy, \"a?\", @progbits\n\t"                \
	".balign 4\n"                                                          \
	"667:\n\t" oldinstr "\n\t" SY__ALT_NOPS(pad) "\t"                      \
	".popsection\n\t"
#define SY__ALT_RECORD(n, f)                                                   \
	".long 661b - ., 664" #n "b - ., 667b - .\n\t"                         \
	".short " f "\n\t"                                                     \
	".byte 663b - 661b, 665" #n "b - 664" #n "b\n\t"
#define SY__ALT_1(oldinstr, newinstr, f)                                       \
	SY__ALT_REPL(1, newinstr)                                              \
	SY__ALT_SITE(oldinstr, SY__ALT_PAD(SY__ALT_R1))                        \
	".pushsection sy_altinstr, \"aw?" SY__REC_R "\"\n\t"                   \
	".balign 4\n\t"                                                        \
	SY__ALT_RECORD(1, f)                                                   \
	".popsection\n\t"
#define SY__ALT_2(oldinstr, newinstr1, f1, newinstr2, f2)                      \
	SY__ALT_REPL(1, newinstr1)                                             \
	SY__ALT_REPL(2, newinstr2)                                             \
	SY__ALT_SITE(oldinstr, SY__ALT_PAD(SY__ALT_MAX2))                      \
	".pushsection sy_altinstr, \"aw?" SY__REC_R "\"\n\t"                   \
	".balign 4\n\t"                                                        \
	SY__ALT_RECORD(1, f1)                                                  \
	SY__ALT_RECORD(2, f2)                                                  \
	".popsection\n\t"

#endif /* SWITCHYARD_NO_PATCHING */

/* The kernel's forms: strings of assembly. */
#define ALTERNATIVE(oldinstr, newinstr, feature)                               \
	SY__ALT_1(oldinstr, newinstr, SY__ALT_XSTR(feature))
#define ALTERNATIVE_2(oldinstr, newinstr1, f1, newinstr2, f2)                  \
	SY__ALT_2(oldinstr, newinstr1, SY__ALT_XSTR(f1), newinstr2,           \
		  SY__ALT_XSTR(f2))

#define alternative(oldinstr, newinstr, feature)                               \
	__asm__ volatile(ALTERNATIVE(oldinstr, newinstr, feature)              \
			 : : : "memory")
#define alternative_2(oldinstr, newinstr1, f1, newinstr2, f2)                  \
	__asm__ volatile(ALTERNATIVE_2(oldinstr, newinstr1, f1, newinstr2, f2) \
			 : : : "memory")
#define alternative_input(oldinstr, newinstr, feature, ...)                    \
	__asm__ volatile(ALTERNATIVE(oldinstr, newinstr, feature)              \
			 : : __VA_ARGS__)
#define alternative_io(oldinstr, newinstr, feature, output, ...)               \
	__asm__ volatile(ALTERNATIVE(oldinstr, newinstr, feature)              \
			 : output : __VA_ARGS__)

/*
 * alternative_call*(): one direct BL. AAPCS64 has no red zone and keeps
 * sp 16-byte aligned at every instruction, so the call needs no stack
 * step; the link register it writes is an output of the asm (x30, bound
 * to a register variable), so that the enclosing function saves its own.
 * The caller lists what the callee may change, as on x86-64: the outputs,
 * and as clobbers the other caller-saved registers (x0-x18, v0-v7,
 * v16-v31, "cc", "memory"; x16 and x17 also for a veneer or PLT entry the
 * linker puts in between). SY__A64_SYM(): the function's symbol, printed
 * bare.
 */
#define alternative_call(oldfunc, newfunc, feature, output, ...)               \
	__extension__({                                                        \
		register unsigned long sy__lr __asm__("x30");                  \
		__asm__ volatile(ALTERNATIVE("bl %c[sy_old]",                  \
					     "bl %c[sy_new]", feature)         \
				 : output, "=r"(sy__lr)                        \
				 : [sy_old] SY__A64_SYM(oldfunc),              \
				   [sy_new] SY__A64_SYM(newfunc),              \
				   ##__VA_ARGS__);                             \
		(void)sy__lr;                                                  \
	})
#define alternative_call_2(oldfunc, newfunc1, f1, newfunc2, f2, output, ...)   \
	__extension__({                                                        \
		register unsigned long sy__lr __asm__("x30");                  \
		__asm__ volatile(ALTERNATIVE_2("bl %c[sy_old]",                \
					       "bl %c[sy_new1]", f1,           \
					       "bl %c[sy_new2]", f2)           \
				 : output, "=r"(sy__lr)                        \
				 : [sy_old] SY__A64_SYM(oldfunc),              \
				   [sy_new1] SY__A64_SYM(newfunc1),            \
				   [sy_new2] SY__A64_SYM(newfunc2),            \
				   ##__VA_ARGS__);                             \
		(void)sy__lr;                                                  \
	})

/*
 * static_cpu_has(feature): compiled as a B to code that asks
 * boot_cpu_has() (right before registration, and forever if the site is
 * refused); registration makes it a NOP (present) or a B to the "absent"
 * label (ALT_NOT): one record each, exactly one applies.
 */
#undef static_cpu_has
#undef cpu_feature_enabled
#ifdef SWITCHYARD_NO_PATCHING
#define static_cpu_has(feature) boot_cpu_has(feature)
#else
#define static_cpu_has(feature)                                                \
	__extension__({                                                        \
		__label__ sy_dyn, sy_no, sy_out;                               \
		int sy__has;                                                   \
		__asm__ goto(SY__ALT_2("b %l[sy_dyn]", "nop", "%c[sy_f]",      \
				       "b %l[sy_no]", "%c[sy_nf]")             \
			     : : [sy_f] "i"(feature),                          \
			       [sy_nf] "i"(ALT_NOT(feature))                   \
			     : : sy_dyn, sy_no);                               \
		sy__has = 1;                                                   \
		goto sy_out;                                                   \
	sy_dyn:                                                                \
		sy__has = boot_cpu_has(feature);                               \
		goto sy_out;                                                   \
	sy_no:                                                                 \
		sy__has = 0;                                                   \
	sy_out:                                                                \
		sy__has != 0;                                                  \
	})
#endif
#define cpu_feature_enabled(feature) static_cpu_has(feature)

/*
 * Per-object glue, as for jump label sites (arch/aarch64.h): the object's
 * records go to the library before any of its code runs. Each entry starts
 * with BTI C (HINT 34, a NOP where BTI is not enforced): the loader calls
 * it through .init_array and .fini_array.
 */
#if !defined(SY__NO_DSO_GLUE) && !defined(SWITCHYARD_NO_PATCHING)
__asm__(".pushsection sy_altinstr, \"aw" SY__REC_R "\"\n\t"
	".popsection\n\t"
	".hidden __start_sy_altinstr\n\t"
	".hidden __stop_sy_altinstr\n\t"
	".pushsection .text.sy__alt_dso_glue, \"axG\", @progbits, sy__alt_dso_glue, comdat\n\t"
	".balign 4\n"
	"1:\thint 34\n\t"
	"adrp x0, __start_sy_altinstr\n\t"
	"add x0, x0, :lo12:__start_sy_altinstr\n\t"
	"adrp x1, __stop_sy_altinstr\n\t"
	"add x1, x1, :lo12:__stop_sy_altinstr\n\t"
	"b sy__register_alternatives\n"
	"2:\thint 34\n\t"
	"adrp x0, __start_sy_altinstr\n\t"
	"add x0, x0, :lo12:__start_sy_altinstr\n\t"
	"adrp x1, __stop_sy_altinstr\n\t"
	"add x1, x1, :lo12:__stop_sy_altinstr\n\t"
	"b sy__unregister_alternatives\n\t"
	".popsection\n\t"
	".pushsection .init_array.00099, \"awG\", @init_array, sy__alt_dso_glue, comdat\n\t"
	".balign 8\n\t"
	".quad 1b\n\t"
	".popsection\n\t"
	".pushsection .fini_array.00099, \"awG\", @fini_array, sy__alt_dso_glue, comdat\n\t"
	".balign 8\n\t"
	".quad 2b\n\t"
	".popsection");
#endif

#endif /* SWITCHYARD_ARCH_AARCH64_ALTERNATIVE_H */
