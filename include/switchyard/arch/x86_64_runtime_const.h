/* SPDX-License-Identifier: MIT */
/*
 * switchyard/arch/x86_64_runtime_const.h - run-time constant sites.
 *
 * Never include this file directly: <switchyard/runtime_const.h> selects
 * it.
 *
 *   e9/a9 <rel32>          JMP32 out of line / TEST32     the guard
 *   48+ b8+r <imm64>       movabs $imm, %reg              ptr (10 bytes)
 *   (41) b8+r <imm32>      mov $imm, %reg32               u32 (5-6 bytes)
 *   (41) c1 e8+r <imm8>    shr $imm, %reg32               shift (3-4 bytes)
 *
 * As compiled the guard jumps to out-of-line code that reads the variable
 * (through the GOT: it may live in another object) and does the same
 * operation, and jumps back; the immediates hold placeholders. Init writes
 * the immediate (no thread can be executing it: the guard jumps over it),
 * syncs, and turns the guard into a TEST (one byte, the keys' rule). The
 * TEST clobbers the flags: the sites declare "cc". Each asm takes the
 * variable as a memory input it does not use: the compiler then orders the
 * read after the program's stores to the variable (before init the site
 * reads it).
 *
 * Each site adds a 16-byte record to section "sy_runtime_const":
 *   offset 0  8  sym  - the variable's address
 *   offset 8  4  code - the guard's address minus the field's
 *   offset 12 1  end  - the end of the instruction holding the immediate,
 *                       from the guard
 *   offset 13 1  size - the immediate's size (8, 4, 1)
 *   offset 14 2  0
 */
#ifndef SWITCHYARD_ARCH_X86_64_RUNTIME_CONST_H
#define SWITCHYARD_ARCH_X86_64_RUNTIME_CONST_H

#ifndef SWITCHYARD_RUNTIME_CONST_H
#error "include <switchyard.h> or <switchyard/runtime_const.h>, not this file"
#endif

#define SY__ARCH_HAVE_RUNTIME_CONST 1

#if defined(__clang__)
#define SY__RC_SYM_OPERAND(s) "s"(s)
#define SY__RC_SYM "%c[sy_sym]"
#else
#define SY__RC_SYM_OPERAND(s) "X"(s)
#define SY__RC_SYM "%p[sy_sym]"
#endif

#define SY__RC_RECORD(size)                                                    \
	".pushsection sy_runtime_const, \"aw?" SY__REC_R "\"\n\t"              \
	".balign 8\n\t"                                                        \
	".quad " SY__RC_SYM "\n\t"                                             \
	".long 761b - .\n\t"                                                   \
	".byte 763b - 761b, " #size ", 0, 0\n\t"                               \
	".popsection\n\t"

#define SY__RC_OOL_HEAD                                                        \
	".pushsection .text.unlikely.sy_runtime_const, \"ax?\", @progbits\n"  \
	"764:\tmovq " SY__RC_SYM "@GOTPCREL(%%rip), %q[sy_v]\n\t"

#define runtime_const_ptr(sym)                                                 \
	__extension__({                                                        \
		unsigned long sy__v;                                           \
		__asm__("761:\t.byte 0xe9\n\t.long 764f - 762f\n"               \
			"762:\tmovabs $0x0123456789abcdef, %q[sy_v]\n"          \
			"763:\n\t"                                             \
			SY__RC_RECORD(8)                                       \
			SY__RC_OOL_HEAD                                        \
			"movq (%q[sy_v]), %q[sy_v]\n\t"                         \
			"jmp 763b\n\t"                                         \
			".popsection"                                          \
			: [sy_v] "=r"(sy__v)                                   \
			: [sy_sym] SY__RC_SYM_OPERAND(&(sym)), "m"(sym)        \
			: "cc");                                               \
		(__typeof__(sym))sy__v;                                        \
	})

/* a 32-bit immediate (not in the kernel's API) */
#define runtime_const_u32(sym)                                                 \
	__extension__({                                                        \
		unsigned int sy__v;                                            \
		__asm__("761:\t.byte 0xe9\n\t.long 764f - 762f\n"               \
			"762:\tmovl $0x12345678, %k[sy_v]\n"                    \
			"763:\n\t"                                             \
			SY__RC_RECORD(4)                                       \
			SY__RC_OOL_HEAD                                        \
			"movl (%q[sy_v]), %k[sy_v]\n\t"                         \
			"jmp 763b\n\t"                                         \
			".popsection"                                          \
			: [sy_v] "=r"(sy__v)                                   \
			: [sy_sym] SY__RC_SYM_OPERAND(&(sym)), "m"(sym)        \
			: "cc");                                               \
		sy__v;                                                         \
	})

/* val >> sym, 32-bit; the out-of-line path needs %cl */
#define runtime_const_shift_right_32(val, sym)                                 \
	__extension__({                                                        \
		unsigned int sy__x = (unsigned int)(val);                      \
		unsigned long sy__c;                                           \
		__asm__("761:\t.byte 0xe9\n\t.long 764f - 762f\n"               \
			"762:\tshrl $12, %k[sy_x]\n"                            \
			"763:\n\t"                                             \
			SY__RC_RECORD(1)                                       \
			".pushsection .text.unlikely.sy_runtime_const, "       \
			"\"ax?\", @progbits\n"                                 \
			"764:\tmovq " SY__RC_SYM "@GOTPCREL(%%rip), %%rcx\n\t"  \
			"movl (%%rcx), %%ecx\n\t"                              \
			"shrl %%cl, %k[sy_x]\n\t"                               \
			"jmp 763b\n\t"                                         \
			".popsection"                                          \
			: [sy_x] "+r"(sy__x), "=&c"(sy__c)                     \
			: [sy_sym] SY__RC_SYM_OPERAND(&(sym)), "m"(sym)        \
			: "cc");                                               \
		(void)sy__c;                                                   \
		sy__x;                                                         \
	})

/* Per-object glue, as for static call sites (x86_64_static_call.h). */
#ifndef SY__NO_DSO_GLUE
__asm__(".pushsection sy_runtime_const, \"aw" SY__REC_R "\"\n\t"
	".popsection\n\t"
	".hidden __start_sy_runtime_const\n\t"
	".hidden __stop_sy_runtime_const\n\t"
	".pushsection .text.sy__rc_dso_glue, \"axG\", @progbits, sy__rc_dso_glue, comdat\n"
	"1:\tleaq __start_sy_runtime_const(%rip), %rdi\n\t"
	"leaq __stop_sy_runtime_const(%rip), %rsi\n\t"
	"jmp sy__register_runtime_consts@PLT\n"
	"2:\tleaq __start_sy_runtime_const(%rip), %rdi\n\t"
	"leaq __stop_sy_runtime_const(%rip), %rsi\n\t"
	"jmp sy__unregister_runtime_consts@PLT\n\t"
	".popsection\n\t"
	".pushsection .init_array.00099, \"awG\", @init_array, sy__rc_dso_glue, comdat\n\t"
	".balign 8\n\t"
	".quad 1b\n\t"
	".popsection\n\t"
	".pushsection .fini_array.00099, \"awG\", @fini_array, sy__rc_dso_glue, comdat\n\t"
	".balign 8\n\t"
	".quad 2b\n\t"
	".popsection");
#endif

#endif /* SWITCHYARD_ARCH_X86_64_RUNTIME_CONST_H */
