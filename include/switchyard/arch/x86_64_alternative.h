/* SPDX-License-Identifier: MIT */
/*
 * switchyard/arch/x86_64_alternative.h - alternatives for x86-64.
 *
 * Never include this file directly: <switchyard/alternative.h> selects it.
 *
 * A site, as assembled:
 *   661: old instructions
 *   662: 0x90 x pad              pad = the longest replacement - the old
 *   663:                                 instructions, if positive
 * In other sections (of the enclosing function's COMDAT group, if any):
 *   .text.unlikely.sy_altinstr   6641: replacement 1  6651:  (6642..6652: 2)
 *   sy_altinstr_copy             667: old instructions and pad again: what
 *                                the site must hold, for the check before
 *                                the write (relative operands re-aimed)
 *   sy_altinstr                  a 16-byte record per replacement:
 *     offset 0  4  site - 661b minus the field's address
 *     offset 4  4  repl - the replacement minus the field's address
 *     offset 8  4  copy - 667b minus the field's address
 *     offset 12 2  feature - X86_FEATURE_*, bit 15: when absent (ALT_NOT)
 *     offset 14 1  the site's length (663b - 661b)
 *     offset 15 1  the replacement's length
 * The records of one site are consecutive; the last that applies wins.
 *
 * The pad expression is written so that GNU as (a true comparison is -1)
 * and LLVM's assembler agree: c * c is 1 for either true value. The
 * replacements come after the site so that the pad is a forward reference,
 * resolved when the assembler lays the sections out (GNU as warns about a
 * zero .skip it can compute on the spot).
 */
#ifndef SWITCHYARD_ARCH_X86_64_ALTERNATIVE_H
#define SWITCHYARD_ARCH_X86_64_ALTERNATIVE_H

#ifndef SWITCHYARD_ALTERNATIVE_H
#error "include <switchyard.h> or <switchyard/alternative.h>, not this file"
#endif

#define SY__ALT_STR(x) #x
#define SY__ALT_XSTR(x) SY__ALT_STR(x)

#if defined(__clang__)
#define SY__ALT_SYM_OPERAND(s) "s"(s)
#define SY__ALT_SYM(name) "%c[" #name "]"
#else
#define SY__ALT_SYM_OPERAND(s) "X"(s)
#define SY__ALT_SYM(name) "%p[" #name "]"
#endif

#ifdef SWITCHYARD_NO_PATCHING

#define SY__ALT_1(oldinstr, newinstr, f) oldinstr "\n\t"
#define SY__ALT_2(oldinstr, newinstr1, f1, newinstr2, f2) oldinstr "\n\t"

#else /* patched sites */

#define SY__ALT_B01(c) "((" c ") * (" c "))"
#define SY__ALT_OLEN "(662b - 661b)"
#define SY__ALT_R1 "(6651f - 6641f)"
#define SY__ALT_R2 "(6652f - 6642f)"
/* the longest replacement, then the pad over the old instructions */
#define SY__ALT_MAX2                                                           \
	"(" SY__ALT_R1 " + " SY__ALT_B01(SY__ALT_R2 " > " SY__ALT_R1)          \
	" * (" SY__ALT_R2 " - " SY__ALT_R1 "))"
#define SY__ALT_PAD(rlen)                                                      \
	SY__ALT_B01(rlen " > " SY__ALT_OLEN) " * (" rlen " - " SY__ALT_OLEN ")"

#define SY__ALT_REPL(n, newinstr)                                              \
	".pushsection .text.unlikely.sy_altinstr, \"ax?\", @progbits\n"       \
	"664" #n ":\n\t" newinstr "\n"                                         \
	"665" #n ":\n\t"                                                       \
	".popsection\n"
#define SY__ALT_SITE(oldinstr, pad)                                            \
	"661:\n\t" oldinstr "\n"                                               \
	"662:\n\t"                                                             \
	".skip " pad ", 0x90\n"                                                \
	"663:\n\t"                                                             \
	".pushsection sy_altinstr_copy, \"a?\", @progbits\n"                  \
	"667:\n\t" oldinstr "\n\t"                                             \
	".skip " pad ", 0x90\n\t"                                              \
	".popsection\n\t"
#define SY__ALT_RECORD(n, f)                                                   \
	".long 661b - ., 664" #n "b - ., 667b - .\n\t"                         \
	".word " f "\n\t"                                                      \
	".byte 663b - 661b, 665" #n "b - 664" #n "b\n\t"
#define SY__ALT_1(oldinstr, newinstr, f)                                       \
	SY__ALT_SITE(oldinstr, SY__ALT_PAD(SY__ALT_R1))                        \
	SY__ALT_REPL(1, newinstr)                                              \
	".pushsection sy_altinstr, \"aw?" SY__REC_R "\"\n\t"                   \
	".balign 4\n\t"                                                        \
	SY__ALT_RECORD(1, f)                                                   \
	".popsection\n\t"
#define SY__ALT_2(oldinstr, newinstr1, f1, newinstr2, f2)                      \
	SY__ALT_SITE(oldinstr, SY__ALT_PAD(SY__ALT_MAX2))                      \
	SY__ALT_REPL(1, newinstr1)                                             \
	SY__ALT_REPL(2, newinstr2)                                             \
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
	__asm__ volatile(ALTERNATIVE(oldinstr, newinstr, feature) : : : "memory")
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
 * alternative_call*(): one direct call. The stack pointer goes to rbx (an
 * early-clobbered output: a callee keeps it), below the red zone (the
 * enclosing function may keep data there: no -mno-red-zone in user space)
 * and is aligned to 16, as the ABI wants at a call. The frame-address
 * input forces an rbp frame in the enclosing function, so that its CFA
 * stays rbp-based across the moved stack pointer and unwinding from the
 * callee works (as at static call sites).
 */
#define SY__ALT_CALL_HEAD                                                      \
	"mov %%rsp, %%rbx\n\t"                                                 \
	"lea -128(%%rsp), %%rsp\n\t"                                           \
	"and $-16, %%rsp\n\t"
#define alternative_call(oldfunc, newfunc, feature, output, ...)               \
	__extension__({                                                        \
		unsigned long sy__sv;                                          \
		__asm__ volatile(SY__ALT_CALL_HEAD                             \
				 ALTERNATIVE("call " SY__ALT_SYM(sy_old),         \
					     "call " SY__ALT_SYM(sy_new), feature) \
				 "mov %%rbx, %%rsp"                            \
				 : output, "=&b"(sy__sv)                       \
				 : [sy_old] SY__ALT_SYM_OPERAND(oldfunc),      \
				   [sy_new] SY__ALT_SYM_OPERAND(newfunc),      \
				   "r"(__builtin_frame_address(0)),            \
				   ##__VA_ARGS__);                             \
		(void)sy__sv;                                                  \
	})
#define alternative_call_2(oldfunc, newfunc1, f1, newfunc2, f2, output, ...)   \
	__extension__({                                                        \
		unsigned long sy__sv;                                          \
		__asm__ volatile(SY__ALT_CALL_HEAD                             \
				 ALTERNATIVE_2("call " SY__ALT_SYM(sy_old),       \
					       "call " SY__ALT_SYM(sy_new1), f1,  \
					       "call " SY__ALT_SYM(sy_new2), f2)  \
				 "mov %%rbx, %%rsp"                            \
				 : output, "=&b"(sy__sv)                       \
				 : [sy_old] SY__ALT_SYM_OPERAND(oldfunc),      \
				   [sy_new1] SY__ALT_SYM_OPERAND(newfunc1),    \
				   [sy_new2] SY__ALT_SYM_OPERAND(newfunc2),    \
				   "r"(__builtin_frame_address(0)),            \
				   ##__VA_ARGS__);                             \
		(void)sy__sv;                                                  \
	})

/*
 * static_cpu_has(feature): compiled as a JMP32 to code that asks
 * boot_cpu_has() (right before registration, and forever if the site is
 * refused); registration makes it a 5-byte NOP (present) or a JMP32 to
 * the "absent" label (ALT_NOT): one record each, exactly one applies.
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
		__asm__ goto(SY__ALT_2(".byte 0xe9\n\t"                        \
				       ".long %l[sy_dyn] - . - 4", "",         \
				       "%c[sy_f]", ".byte 0xe9\n\t"            \
				       ".long %l[sy_no] - . - 4", "%c[sy_nf]") \
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
 * Per-object glue, as for static call sites (x86_64_static_call.h): the
 * object's records go to the library before any of its code runs.
 */
#if !defined(SY__NO_DSO_GLUE) && !defined(SWITCHYARD_NO_PATCHING)
__asm__(".pushsection sy_altinstr, \"aw" SY__REC_R "\"\n\t"
	".popsection\n\t"
	".hidden __start_sy_altinstr\n\t"
	".hidden __stop_sy_altinstr\n\t"
	".pushsection .text.sy__alt_dso_glue, \"axG\", @progbits, sy__alt_dso_glue, comdat\n"
	"1:\tleaq __start_sy_altinstr(%rip), %rdi\n\t"
	"leaq __stop_sy_altinstr(%rip), %rsi\n\t"
	"jmp sy__register_alternatives@PLT\n"
	"2:\tleaq __start_sy_altinstr(%rip), %rdi\n\t"
	"leaq __stop_sy_altinstr(%rip), %rsi\n\t"
	"jmp sy__unregister_alternatives@PLT\n\t"
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

#endif /* SWITCHYARD_ARCH_X86_64_ALTERNATIVE_H */
