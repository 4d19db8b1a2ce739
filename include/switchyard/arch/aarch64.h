/* SPDX-License-Identifier: MIT */
/*
 * switchyard/arch/aarch64.h - jump label sites for AArch64.
 *
 * Never include this file directly: <switchyard/static_key.h> selects it.
 *
 * A site is one `b` to the out-of-line label (4 bytes, +-128 MiB: always
 * enough within one object). Before any code of the object runs, its
 * constructor turns every site whose key state asks for the straight-line
 * path into a NOP (d503201f). B and NOP are both on the Arm ARM's list of
 * instructions that may be concurrently modified and executed (B2.2.5,
 * "Concurrent modification and execution of instructions"): a core that
 * runs the site while it is rewritten executes either the old or the new
 * instruction, so no guard and no breakpoint protocol is needed
 * (src/arch/aarch64/sy_arch.h).
 *
 * The record is x86-64's (include/switchyard/arch/x86_64.h, src/sy_records.h):
 * 16 bytes in section "sy_jump_entries", code and target self-relative,
 * the key absolute plus bit 0 for the likely forms. "aw?": the record
 * joins the section group of the code it describes, so that a discarded
 * COMDAT copy of an inline function takes its records with it; "R" as on
 * x86-64 (kept under LLD's --gc-sections).
 */
#ifndef SWITCHYARD_ARCH_AARCH64_H
#define SWITCHYARD_ARCH_AARCH64_H

#ifndef SWITCHYARD_STATIC_KEY_H
#error "include <switchyard.h> or <switchyard/static_key.h>, not this file"
#endif

#define SY__ARCH_HAVE_JUMP_LABEL 1

/*
 * SY__ARCH_SITE(key, branch, label) - the site: an asm goto that jumps to
 * label in the B form and falls through in the NOP form, and its record.
 * The key's address, printed bare with %c (preemptible symbols in PIC code
 * included: the dynamic linker fills the .quad), an element of an array of
 * keys too (SY__A64_SYM(), <switchyard/core.h>).
 */
#define SY__ARCH_SITE(keyp, branch, label)                                     \
	__asm__ goto("1:\tb %l[" #label "]\n\t"                                \
		     ".pushsection sy_jump_entries, \"aw?" SY__REC_R "\"\n\t"  \
		     ".balign 8\n\t"                                            \
		     ".long 1b - ., %l[" #label "] - .\n\t"                      \
		     ".quad %c0 + %c1\n\t"                                      \
		     ".popsection"                                              \
		     : : SY__A64_SYM(keyp), "i"(branch) : : label)

/*
 * Per-object glue, as on x86-64 (one COMDAT copy per object): an empty
 * contribution to sy_jump_entries, a constructor in .init_array.00099 that
 * hands the table to the registry, a destructor in .fini_array.00099 that
 * takes it back. `b` to the registry: the linker makes a PLT entry (or a
 * veneer) when the library is another object.
 */
#ifndef SY__NO_DSO_GLUE
__asm__(".pushsection sy_jump_entries, \"aw" SY__REC_R "\"\n\t"
	".popsection\n\t"
	".hidden __start_sy_jump_entries\n\t"
	".hidden __stop_sy_jump_entries\n\t"
	".pushsection .text.sy__dso_glue, \"axG\", @progbits, sy__dso_glue, comdat\n\t"
	".balign 4\n"
	"1:\thint 34\n\t"	/* bti c: called from .init_array */
	"adrp x0, __start_sy_jump_entries\n\t"
	"add x0, x0, :lo12:__start_sy_jump_entries\n\t"
	"adrp x1, __stop_sy_jump_entries\n\t"
	"add x1, x1, :lo12:__stop_sy_jump_entries\n\t"
	"b sy__register_jump_table\n"
	"2:\thint 34\n\t"	/* bti c: called from .fini_array */
	"adrp x0, __start_sy_jump_entries\n\t"
	"add x0, x0, :lo12:__start_sy_jump_entries\n\t"
	"adrp x1, __stop_sy_jump_entries\n\t"
	"add x1, x1, :lo12:__stop_sy_jump_entries\n\t"
	"b sy__unregister_jump_table\n\t"
	".popsection\n\t"
	".pushsection .init_array.00099, \"awG\", @init_array, sy__dso_glue, comdat\n\t"
	".balign 8\n\t"
	".quad 1b\n\t"
	".popsection\n\t"
	".pushsection .fini_array.00099, \"awG\", @fini_array, sy__dso_glue, comdat\n\t"
	".balign 8\n\t"
	".quad 2b\n\t"
	".popsection");
#endif

#endif /* SWITCHYARD_ARCH_AARCH64_H */
