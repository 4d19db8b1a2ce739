/* SPDX-License-Identifier: MIT */
/*
 * switchyard/arch/aarch64_callee_save.h - callee-save functions for
 * AArch64: the mark the registry checks and the register-saving thunk.
 *
 * Never include this file directly: <switchyard/static_call.h> selects it
 * (whether or not sites are patched: a thunk is a function like any other).
 */
#ifndef SWITCHYARD_ARCH_AARCH64_CALLEE_SAVE_H
#define SWITCHYARD_ARCH_AARCH64_CALLEE_SAVE_H

#ifndef SWITCHYARD_STATIC_CALL_H
#error "include <switchyard.h> or <switchyard/static_call.h>, not this file"
#endif

/*
 * Callee-save functions (<switchyard/static_call.h>) keep every general
 * register but x0, x16, x17 and lr (x16/x17 are the intra-procedure-call
 * registers a linker's veneer may use anyway). Such a function starts 8
 * bytes past a 16-byte boundary, after an 8-byte mark, as on x86-64: the
 * registry checks the mark before it writes a direct BL to it into a
 * callee-save site. Its first instruction is `bti c` (hint 34: a NOP on
 * processors without BTI), so that a veneer's `br x16` may enter it in a
 * program built with -mbranch-protection.
 */
#define SY__CS_MARK_VALUE 0x3165766153435953	/* "SYCSave1" */
#define SWITCHYARD_CALLEE_SAVE_ASM_ENTRY(fn)                                   \
	".balign 16\n\t"                                                       \
	".quad 0x3165766153435953\n\t"                                         \
	".globl " #fn "\n\t"                                                   \
	".type " #fn ", %function\n"                                           \
	#fn ":\n\t"                                                            \
	"hint 34\n\t"
/* What a C function may change and a callee-save function keeps: x1-x15
 * and x18, below a frame record (x29, lr) at sp (144 bytes in all); the
 * thunk and the callee-save sites' veneer (aarch64_static_call.h). */
#define SY__A64_CS_SAVE                                                        \
	"stp x1, x2, [sp, #16]\n\t"                                            \
	"stp x3, x4, [sp, #32]\n\t"                                            \
	"stp x5, x6, [sp, #48]\n\t"                                            \
	"stp x7, x8, [sp, #64]\n\t"                                            \
	"stp x9, x10, [sp, #80]\n\t"                                           \
	"stp x11, x12, [sp, #96]\n\t"                                          \
	"stp x13, x14, [sp, #112]\n\t"                                         \
	"stp x15, x18, [sp, #128]\n\t"
#define SY__A64_CS_RESTORE                                                     \
	"ldp x15, x18, [sp, #128]\n\t"                                         \
	"ldp x13, x14, [sp, #112]\n\t"                                         \
	"ldp x11, x12, [sp, #96]\n\t"                                          \
	"ldp x9, x10, [sp, #80]\n\t"                                           \
	"ldp x7, x8, [sp, #64]\n\t"                                            \
	"ldp x5, x6, [sp, #48]\n\t"                                            \
	"ldp x3, x4, [sp, #32]\n\t"                                            \
	"ldp x1, x2, [sp, #16]\n\t"

#define SY__CALLEE_SAVE_THUNK(func, thunk)                                     \
	__asm__(".pushsection .text.sy_callee_save, \"ax\", %progbits\n\t"     \
		SWITCHYARD_CALLEE_SAVE_ASM_ENTRY(thunk)                        \
		".cfi_startproc\n\t"                                           \
		"stp x29, x30, [sp, #-144]!\n\t"                               \
		".cfi_def_cfa_offset 144\n\t"                                  \
		".cfi_offset x29, -144\n\t"                                    \
		".cfi_offset x30, -136\n\t"                                    \
		"mov x29, sp\n\t"                                              \
		SY__A64_CS_SAVE                                                \
		"bl " #func "\n\t"                                             \
		SY__A64_CS_RESTORE                                             \
		"ldp x29, x30, [sp], #144\n\t"                                 \
		".cfi_restore x29\n\t"                                         \
		".cfi_restore x30\n\t"                                         \
		".cfi_def_cfa_offset 0\n\t"                                    \
		"ret\n\t"                                                      \
		".cfi_endproc\n\t"                                             \
		".size " #thunk ", . - " #thunk "\n\t"                         \
		".popsection")

#endif /* SWITCHYARD_ARCH_AARCH64_CALLEE_SAVE_H */
