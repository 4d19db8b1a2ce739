/* SPDX-License-Identifier: MIT */
/*
 * switchyard/arch/x86_64_callee_save.h - callee-save functions for x86-64:
 * the mark the registry checks and the register-saving thunk.
 *
 * Never include this file directly: <switchyard/static_call.h> selects it
 * (whether or not sites are patched: a thunk is a function like any other).
 */
#ifndef SWITCHYARD_ARCH_X86_64_CALLEE_SAVE_H
#define SWITCHYARD_ARCH_X86_64_CALLEE_SAVE_H

#ifndef SWITCHYARD_STATIC_CALL_H
#error "include <switchyard.h> or <switchyard/static_call.h>, not this file"
#endif

/*
 * Callee-save functions (<switchyard/static_call.h>). A callee-save function
 * starts 8 bytes past a 16-byte boundary, after an 8-byte mark: the registry
 * checks the mark before it writes a direct call to it into a callee-save
 * site (reading 8 bytes before an entry at 8 mod 16 stays in its page).
 */
#define SY__CS_MARK_VALUE 0x3165766153435953	/* "SYCSave1" */
#define SWITCHYARD_CALLEE_SAVE_ASM_ENTRY(fn)                                   \
	".balign 16\n\t"                                                       \
	".quad 0x3165766153435953\n\t"                                         \
	".globl " #fn "\n\t"                                                   \
	".type " #fn ", @function\n"                                           \
	#fn ":\n\t"
#define SY__CALLEE_SAVE_THUNK(func, thunk)                                     \
	__asm__(".pushsection .text.sy_callee_save, \"ax\", @progbits\n\t"     \
		SWITCHYARD_CALLEE_SAVE_ASM_ENTRY(thunk)                        \
		".cfi_startproc\n\t"                                           \
		"push %rbp\n\t"                                                \
		".cfi_def_cfa_offset 16\n\t"                                   \
		".cfi_offset %rbp, -16\n\t"                                    \
		"mov %rsp, %rbp\n\t"                                           \
		".cfi_def_cfa_register %rbp\n\t"                               \
		"and $-16, %rsp\n\t"                                           \
		"push %rdi\n\tpush %rsi\n\tpush %rdx\n\tpush %rcx\n\t"         \
		"push %r8\n\tpush %r9\n\tpush %r10\n\tpush %r11\n\t"           \
		"call " #func "\n\t"                                           \
		"pop %r11\n\tpop %r10\n\tpop %r9\n\tpop %r8\n\t"               \
		"pop %rcx\n\tpop %rdx\n\tpop %rsi\n\tpop %rdi\n\t"             \
		"mov %rbp, %rsp\n\t"                                           \
		"pop %rbp\n\t"                                                 \
		".cfi_def_cfa %rsp, 8\n\t"                                     \
		"ret\n\t"                                                      \
		".cfi_endproc\n\t"                                             \
		".size " #thunk ", . - " #thunk "\n\t"                         \
		".popsection")

#endif /* SWITCHYARD_ARCH_X86_64_CALLEE_SAVE_H */
