/* SPDX-License-Identifier: MIT */
/*
 * switchyard/arch/aarch64_runtime_const.h - run-time constant sites for
 * AArch64, in the kernel's arm64 forms (MOVZ/MOVK for a pointer, LSR for
 * the shift).
 *
 * Never include this file directly: <switchyard/runtime_const.h> selects
 * it.
 *
 *   +0  B ool / NOP                            the guard
 *   +4  MOVZ Xd, #0xcdef                       ptr: the value's 4 halves
 *       MOVK Xd, #0x89ab, LSL #16
 *       MOVK Xd, #0x4567, LSL #32
 *       MOVK Xd, #0x0123, LSL #48
 *   +4  MOVZ Wd, #0x5678                       u32: 2 halves
 *       MOVK Wd, #0x1234, LSL #16
 *   +4  LSR Wd, Wd, #12                        shift
 *
 * As compiled the guard is a B to out-of-line code that reads the
 * variable (through the GOT: it may live in another object) and does the
 * same operation, and branches back; the immediates hold placeholders.
 * Init writes the immediates (no thread can be executing them: the guard
 * branches over them; MOVZ, MOVK and LSR are not among the instructions
 * the Arm ARM lets change under a running core, B2.2.5), makes them
 * visible (cache maintenance, a context synchronisation event on every
 * core), and only then turns the guard into a NOP: B <-> NOP is on that
 * list (src/arch/aarch64/sy_arch.h). Each asm takes the variable as a
 * memory input it does not use: the compiler then orders the read after
 * the program's stores to the variable (before init the site reads it).
 *
 * Each site adds a 16-byte record to section "sy_runtime_const", as on
 * x86-64 (arch/x86_64_runtime_const.h): the variable's address, the
 * guard's address minus the field's, the end of the instructions holding
 * the immediate from the guard (20, 12, 8), the immediate's size (8, 4,
 * 1), two zero bytes.
 */
#ifndef SWITCHYARD_ARCH_AARCH64_RUNTIME_CONST_H
#define SWITCHYARD_ARCH_AARCH64_RUNTIME_CONST_H

#ifndef SWITCHYARD_RUNTIME_CONST_H
#error "include <switchyard.h> or <switchyard/runtime_const.h>, not this file"
#endif

#define SY__ARCH_HAVE_RUNTIME_CONST 1

#define SY__RC_RECORD(size)                                                    \
	".pushsection sy_runtime_const, \"aw?" SY__REC_R "\"\n\t"              \
	".balign 8\n"                                                          \
	"760:\t.quad %c[sy_sym]\n\t"                                          \
	".long 761b - .\n\t"                                                   \
	".byte 763b - 761b, " #size ", 0, 0\n\t"                               \
	".popsection\n\t"

/*
 * the out-of-line code: the variable's address into register r, read
 * from the site's record (pc-relative: a local label; the record's .quad is
 * an ordinary data relocation). Not through the GOT: at -O1 and up gcc
 * names a static variable as a section anchor plus an offset, and a GOT
 * reference drops the offset (every static of the file read the anchor's
 * slot: the first variable's value).
 */
#define SY__RC_OOL_HEAD(r)                                                     \
	".pushsection .text.unlikely.sy_runtime_const, \"ax?\", @progbits\n\t" \
	".balign 4\n"                                                          \
	"764:\tadrp " r ", 760b\n\t"                                           \
	"ldr " r ", [" r ", #:lo12:760b]\n\t"

#define runtime_const_ptr(sym)                                                 \
	__extension__({                                                        \
		unsigned long sy__v;                                           \
		__asm__("761:\tb 764f\n\t"                                     \
			"movz %x[sy_v], #0xcdef\n\t"                           \
			"movk %x[sy_v], #0x89ab, lsl #16\n\t"                  \
			"movk %x[sy_v], #0x4567, lsl #32\n\t"                  \
			"movk %x[sy_v], #0x0123, lsl #48\n"                    \
			"763:\n\t"                                             \
			SY__RC_RECORD(8)                                       \
			SY__RC_OOL_HEAD("%x[sy_v]")                            \
			"ldr %x[sy_v], [%x[sy_v]]\n\t"                         \
			"b 763b\n\t"                                           \
			".popsection"                                          \
			: [sy_v] "=r"(sy__v)                                   \
			: [sy_sym] SY__A64_SYM(&(sym)), "m"(sym));             \
		(__typeof__(sym))sy__v;                                        \
	})

/* a 32-bit immediate (not in the kernel's API) */
#define runtime_const_u32(sym)                                                 \
	__extension__({                                                        \
		unsigned int sy__v;                                            \
		__asm__("761:\tb 764f\n\t"                                     \
			"movz %w[sy_v], #0x5678\n\t"                           \
			"movk %w[sy_v], #0x1234, lsl #16\n"                    \
			"763:\n\t"                                             \
			SY__RC_RECORD(4)                                       \
			SY__RC_OOL_HEAD("%x[sy_v]")                            \
			"ldr %w[sy_v], [%x[sy_v]]\n\t"                         \
			"b 763b\n\t"                                           \
			".popsection"                                          \
			: [sy_v] "=r"(sy__v)                                   \
			: [sy_sym] SY__A64_SYM(&(sym)), "m"(sym));             \
		sy__v;                                                         \
	})

/* val >> sym, 32-bit; the out-of-line path shifts by a register (LSRV
 * takes the count modulo 32, as the immediate is masked) */
#define runtime_const_shift_right_32(val, sym)                                 \
	__extension__({                                                        \
		unsigned int sy__x = (unsigned int)(val);                      \
		unsigned long sy__t;                                           \
		__asm__("761:\tb 764f\n\t"                                     \
			"lsr %w[sy_x], %w[sy_x], #12\n"                        \
			"763:\n\t"                                             \
			SY__RC_RECORD(1)                                       \
			SY__RC_OOL_HEAD("%x[sy_t]")                            \
			"ldr %w[sy_t], [%x[sy_t]]\n\t"                         \
			"lsr %w[sy_x], %w[sy_x], %w[sy_t]\n\t"                 \
			"b 763b\n\t"                                           \
			".popsection"                                          \
			: [sy_x] "+r"(sy__x), [sy_t] "=&r"(sy__t)              \
			: [sy_sym] SY__A64_SYM(&(sym)), "m"(sym));             \
		(void)sy__t;                                                   \
		sy__x;                                                         \
	})

/* Per-object glue, as for jump label sites (arch/aarch64.h); each entry
 * starts with BTI C (HINT 34, a NOP where BTI is not enforced): the loader
 * calls it through .init_array and .fini_array. */
#ifndef SY__NO_DSO_GLUE
__asm__(".pushsection sy_runtime_const, \"aw" SY__REC_R "\"\n\t"
	".popsection\n\t"
	".hidden __start_sy_runtime_const\n\t"
	".hidden __stop_sy_runtime_const\n\t"
	".pushsection .text.sy__rc_dso_glue, \"axG\", @progbits, sy__rc_dso_glue, comdat\n\t"
	".balign 4\n"
	"1:\thint 34\n\t"
	"adrp x0, __start_sy_runtime_const\n\t"
	"add x0, x0, :lo12:__start_sy_runtime_const\n\t"
	"adrp x1, __stop_sy_runtime_const\n\t"
	"add x1, x1, :lo12:__stop_sy_runtime_const\n\t"
	"b sy__register_runtime_consts\n"
	"2:\thint 34\n\t"
	"adrp x0, __start_sy_runtime_const\n\t"
	"add x0, x0, :lo12:__start_sy_runtime_const\n\t"
	"adrp x1, __stop_sy_runtime_const\n\t"
	"add x1, x1, :lo12:__stop_sy_runtime_const\n\t"
	"b sy__unregister_runtime_consts\n\t"
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

#endif /* SWITCHYARD_ARCH_AARCH64_RUNTIME_CONST_H */
