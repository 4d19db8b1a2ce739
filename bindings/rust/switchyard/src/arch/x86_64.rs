// SPDX-License-Identifier: MIT
//! x86-64: the site, its record and the per-object glue of
//! `include/switchyard/arch/x86_64.h`, byte for byte, so that the library
//! registers and patches a Rust object's sites as a C object's.
//!
//! A site is one `jmp` to the out-of-line label; the assembler relaxes it
//! to JMP8 (`eb rel8`) or JMP32 (`e9 rel32`). The registry turns it into
//! TEST8 (`a8`) or TEST32 (`a9`), which differ from the jump in the first
//! byte only and write nothing but the flags, before the object's code
//! runs. Its 16-byte record in `sy_jump_entries`: code and target
//! self-relative, the key's absolute address plus bit 0 (the branch: 1 for
//! the likely forms).
//!
//! Section flags: "aw?R". `?` puts the record in the section group of the
//! function it describes, as in C: a discarded COMDAT copy of the function
//! takes its records with it (rustc emits no COMDAT groups on ELF today:
//! generic and inline functions are instantiated per crate, with local
//! symbols, and each instance keeps its own site and record; `?` is then
//! no group, and costs nothing). `R` (SHF_GNU_RETAIN) keeps the record
//! under `--gc-sections` with LLD, Rust's default linker, whose
//! `-z start-stop-gc` would drop a section that only `__start_`/`__stop_`
//! symbols name.

// The per-object glue (the C header's, COMDAT group "sy__dso_glue"): an
// empty contribution to sy_jump_entries (so that __start_/__stop_ exist;
// "R" as above), a constructor in .init_array.00099 that hands the
// object's table to the registry before any other constructor of the
// object runs, and a destructor in .fini_array.00099 (dlclose of a cdylib)
// that takes it back. The group has the C header's name and contents: in
// an object that links C code using the headers too, the linker keeps one
// copy, and the object registers once. (Were there two, the registry
// ignores a table it already has.)
core::arch::global_asm!(
    ".pushsection sy_jump_entries, \"awR\"",
    ".popsection",
    ".hidden __start_sy_jump_entries",
    ".hidden __stop_sy_jump_entries",
    ".pushsection .text.sy__dso_glue, \"axG\", @progbits, sy__dso_glue, comdat",
    "1: leaq __start_sy_jump_entries(%rip), %rdi",
    "leaq __stop_sy_jump_entries(%rip), %rsi",
    "jmp sy__register_jump_table@PLT",
    "2: leaq __start_sy_jump_entries(%rip), %rdi",
    "leaq __stop_sy_jump_entries(%rip), %rsi",
    "jmp sy__unregister_jump_table@PLT",
    ".popsection",
    // The anchor (outside the group: the C copy of the group may be the
    // one kept): every site names it (a no-op relocation), which makes the
    // linker take this object, hence the glue, into any final object that
    // has sites. rlibs are archives, and nothing else a program uses need
    // come from this crate's objects. Weak: two versions of the crate in
    // one graph define it twice.
    ".pushsection .text.sy__rust_glue_anchor, \"ax\", @progbits",
    ".weak sy__rust_glue_anchor",
    ".hidden sy__rust_glue_anchor",
    "sy__rust_glue_anchor:",
    ".popsection",
    ".pushsection .init_array.00099, \"awG\", @init_array, sy__dso_glue, comdat",
    ".balign 8",
    ".quad 1b",
    ".popsection",
    ".pushsection .fini_array.00099, \"awG\", @fini_array, sy__dso_glue, comdat",
    ".balign 8",
    ".quad 2b",
    ".popsection",
    options(att_syntax)
);

/// The site: `$on_jump` when it jumps, `$on_fall` when it falls through.
#[doc(hidden)]
#[macro_export]
macro_rules! __sy_branch {
    ($key:path, $branch:literal, $on_jump:literal, $on_fall:literal) => {
        'sy: {
            // SAFETY: a jump to the label, or (once patched) a TEST that
            // writes the flags only: no memory, no stack. The record names
            // a static (`sym`), whose address is fixed at link time.
            unsafe {
                ::core::arch::asm!(
                    "2: jmp {l}",
                    ".reloc 2b, R_X86_64_NONE, sy__rust_glue_anchor",
                    ".pushsection sy_jump_entries, \"aw?R\"",
                    ".balign 8",
                    ".long 2b - ., {l} - .",
                    ".quad {k} + {b}",
                    ".popsection",
                    l = label {
                        $crate::__sy_cold!();
                        break 'sy $on_jump;
                    },
                    k = sym $key,
                    b = const $branch,
                    options(att_syntax, nomem, nostack),
                );
            }
            $on_fall
        }
    };
}
