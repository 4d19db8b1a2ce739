/* SPDX-License-Identifier: MIT */
/*
 * switchyard/arch/x86_64.h - jump label sites for x86-64.
 *
 * Never include this file directly: <switchyard/static_key.h> selects it.
 *
 * A site is one `jmp` to the out-of-line label, sized by the assembler's own
 * branch relaxation: JMP8 (eb rel8, 2 bytes) when the label lies within
 * -128..+127 bytes in the same section, JMP32 (e9 rel32, 5 bytes) otherwise
 * (farther away, or moved to .text.unlikely by hot/cold splitting). Before any
 * code of the object runs, its constructor turns every site whose key state
 * asks for the straight-line path into the no-op of the same length that
 * differs from the jump in its first byte only: TEST8 (a8 rel8, test al) or
 * TEST32 (a9 rel32, test eax). They write nothing but the flags, which the
 * asm declares clobbered; being one byte away from the jump is what lets
 * the library flip a site while other threads execute it (see
 * src/arch/x86_64/sy_arch.h). This is how we get optimal no-op sizes, which
 * the seed's kernel did not have: the assembler knows the distance, we do
 * not have to guess it.
 *
 * Each site adds one 16-byte record to the section "sy_jump_entries":
 *
 *   offset  size  field
 *   0       4     code   - site address minus the field's address
 *   4       4     target - label address minus the field's address
 *   8       8     key    - absolute address of the struct static_key, plus
 *                          bit 0: branch (1 for the likely forms)
 *                          bit 1: set by the registry: 5-byte site
 *
 * The key is an absolute address, not a self-relative one, so that a key
 * defined in another shared object than its sites can be linked: the dynamic
 * linker resolves it (R_X86_64_64 for an exported key, R_X86_64_RELATIVE for
 * a local one). The section is therefore writable, which also lets the
 * registry sort it in place.
 *
 * "R" (SY__REC_R: SHF_GNU_RETAIN, where the compiler can say so) keeps the
 * records under --gc-sections with LLD too: GNU ld keeps every section that
 * a __start_/__stop_ symbol names, LLD (-z start-stop-gc, its default)
 * drops those nothing else references, so that the glue's __start_ would
 * be undefined or, when another object's section survives, this one's
 * sites would silently keep their jumps. Rust links with LLD by default
 * (bindings/rust/); so does clang -fuse-ld=lld.
 */
#ifndef SWITCHYARD_ARCH_X86_64_H
#define SWITCHYARD_ARCH_X86_64_H

#ifndef SWITCHYARD_STATIC_KEY_H
#error "include <switchyard.h> or <switchyard/static_key.h>, not this file"
#endif

#define SY__ARCH_HAVE_JUMP_LABEL 1

/*
 * The key operand must be printed as a symbol (+ offset), whatever the code
 * model: "i" is refused for a preemptible symbol in PIC code. GCC accepts any
 * operand with "X" and prints the bare address with %p; clang wants "s" and
 * %c.
 */
#if defined(__clang__)
#define SY__KEY_OPERAND(k) "s"(k)
#define SY__KEY_PRINT "%c0"
#else
#define SY__KEY_OPERAND(k) "X"(k)
#define SY__KEY_PRINT "%p0"
#endif

/*
 * SY__ARCH_SITE(key, branch, label) - the site: an asm goto that jumps to
 * label in the JMP form and falls through in the TEST form, and its record
 * (static_key.h wraps it into SY__ARCH_STATIC_BRANCH()).
 */
#define SY__ARCH_SITE(keyp, branch, label)                                     \
	__asm__ goto("1:\tjmp %l[" #label "]\n\t"                              \
		     ".pushsection sy_jump_entries, \"aw?" SY__REC_R "\"\n\t"  \
		     ".balign 8\n\t"                                            \
		     ".long 1b - ., %l[" #label "] - .\n\t"                      \
		     ".quad " SY__KEY_PRINT " + %c1\n\t"                        \
		     ".popsection"                                              \
		     : : SY__KEY_OPERAND(keyp), "i"(branch) : "cc" : label)

/*
 * Per-object glue, emitted by every translation unit that includes the
 * header and merged by the linker into one copy per executable or shared
 * object (COMDAT group "sy__dso_glue"): an (empty) contribution to
 * sy_jump_entries so that __start_/__stop_ exist, a constructor that hands
 * the object's table to the registry, and a destructor that takes it back.
 * Under LTO the groups can meet in one assembly file; the registry then sees
 * the same table twice and ignores the second call.
 *
 * The constructor sits in .init_array.00099, ahead of every constructor of
 * priority 101..65535 and of C++ static initialisers, so the object's sites
 * hold their key's state before any of its own code runs. Its destructor
 * sits in .fini_array.00099, which runs after the object's other
 * destructors.
 */
#ifndef SY__NO_DSO_GLUE
__asm__(".pushsection sy_jump_entries, \"aw" SY__REC_R "\"\n\t"
	".popsection\n\t"
	".hidden __start_sy_jump_entries\n\t"
	".hidden __stop_sy_jump_entries\n\t"
	".pushsection .text.sy__dso_glue, \"axG\", @progbits, sy__dso_glue, comdat\n"
	"1:\tleaq __start_sy_jump_entries(%rip), %rdi\n\t"
	"leaq __stop_sy_jump_entries(%rip), %rsi\n\t"
	"jmp sy__register_jump_table@PLT\n"
	"2:\tleaq __start_sy_jump_entries(%rip), %rdi\n\t"
	"leaq __stop_sy_jump_entries(%rip), %rsi\n\t"
	"jmp sy__unregister_jump_table@PLT\n\t"
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

#endif /* SWITCHYARD_ARCH_X86_64_H */
