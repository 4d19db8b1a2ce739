// SPDX-License-Identifier: MIT
//! AArch64: the site, its record and the per-object glue of
//! `include/switchyard/arch/aarch64.h`, byte for byte.
//!
//! A site is one `b` to the out-of-line label (4 bytes); the registry turns
//! it into a NOP (`d503201f`) where the key's state asks for the
//! straight-line path. B and NOP are both on the Arm ARM's list of
//! instructions that may be modified while other cores execute them. The
//! record and its section flags are x86-64's (`x86_64.rs` says why "aw?R").

// The per-object glue, as on x86-64: COMDAT group "sy__dso_glue" (the C
// header's name and contents: one copy per linked object), `bti c` at both
// entry points (called from .init_array / .fini_array), `b` to the
// registry (the linker adds a PLT entry or a veneer when the library is
// another object).
core::arch::global_asm!(
    ".pushsection sy_jump_entries, \"awR\"",
    ".popsection",
    ".hidden __start_sy_jump_entries",
    ".hidden __stop_sy_jump_entries",
    ".pushsection .text.sy__dso_glue, \"axG\", %progbits, sy__dso_glue, comdat",
    ".balign 4",
    "1: hint 34",
    "adrp x0, __start_sy_jump_entries",
    "add x0, x0, :lo12:__start_sy_jump_entries",
    "adrp x1, __stop_sy_jump_entries",
    "add x1, x1, :lo12:__stop_sy_jump_entries",
    "b sy__register_jump_table",
    "2: hint 34",
    "adrp x0, __start_sy_jump_entries",
    "add x0, x0, :lo12:__start_sy_jump_entries",
    "adrp x1, __stop_sy_jump_entries",
    "add x1, x1, :lo12:__stop_sy_jump_entries",
    "b sy__unregister_jump_table",
    ".popsection",
    // The anchor (outside the group: the C copy of the group may be the
    // one kept): every site names it (a no-op relocation), which makes the
    // linker take this object, hence the glue, into any final object that
    // has sites. rlibs are archives, and nothing else a program uses need
    // come from this crate's objects. Weak: two versions of the crate in
    // one graph define it twice.
    ".pushsection .text.sy__rust_glue_anchor, \"ax\", %progbits",
    ".weak sy__rust_glue_anchor",
    ".hidden sy__rust_glue_anchor",
    "sy__rust_glue_anchor:",
    ".popsection",
    ".pushsection .init_array.00099, \"awG\", %init_array, sy__dso_glue, comdat",
    ".balign 8",
    ".quad 1b",
    ".popsection",
    ".pushsection .fini_array.00099, \"awG\", %fini_array, sy__dso_glue, comdat",
    ".balign 8",
    ".quad 2b",
    ".popsection",
);

/// The site: `$on_jump` when it jumps, `$on_fall` when it falls through.
#[doc(hidden)]
#[macro_export]
macro_rules! __sy_branch {
    ($key:path, $branch:literal, $on_jump:literal, $on_fall:literal) => {
        'sy: {
            // SAFETY: a `b` to the label, or (once patched) a NOP: no
            // memory, no stack, no flags. The record names a static.
            unsafe {
                ::core::arch::asm!(
                    "2: b {l}",
                    ".reloc 2b, R_AARCH64_NONE, sy__rust_glue_anchor",
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
                    options(nomem, nostack, preserves_flags),
                );
            }
            $on_fall
        }
    };
}
