// SPDX-License-Identifier: MIT
//! AArch64: static call sites, their records and the per-object glue of
//! `include/switchyard/arch/aarch64_static_call.h`, byte for byte.
//!
//! A site is one `bl` to the site's veneer as compiled; the library
//! (`src/sc_insn.c`) rewrites it in place to `bl target` (or `bl` to a stub
//! near the site for a far target) or a NOP for a NULL target, one aligned
//! word store (BL and NOP are on the Arm ARM's list of instructions that
//! may be modified while other cores execute them). No guard, no rseq, no
//! stack step, in C as in Rust: AAPCS64 on Linux has no red zone and sp is
//! 16-byte aligned at every instruction. The veneer, out of line, loads
//! the key's target (acquire) through the record and tail-calls it with
//! `br x16` (the target returns straight to the site), or returns for a
//! NULL target. Its record: the meta (absolute), the site and the veneer
//! (relative). x16 and x17 are clobbered by any call (a linker's veneer
//! may use them), as `clobber_abi("C")` says.

// The per-object glue (COMDAT group "sy__sc_dso_glue", the C header's),
// with `bti c` at both entry points (called from .init_array and
// .fini_array), and its anchor (see x86_64_call.rs).
core::arch::global_asm!(
    ".pushsection sy_static_call_sites, \"awR\"",
    ".popsection",
    ".hidden __start_sy_static_call_sites",
    ".hidden __stop_sy_static_call_sites",
    ".pushsection .text.sy__sc_dso_glue, \"axG\", %progbits, sy__sc_dso_glue, comdat",
    ".balign 4",
    "1: hint 34",
    "adrp x0, __start_sy_static_call_sites",
    "add x0, x0, :lo12:__start_sy_static_call_sites",
    "adrp x1, __stop_sy_static_call_sites",
    "add x1, x1, :lo12:__stop_sy_static_call_sites",
    "b sy__register_static_call_sites",
    "2: hint 34",
    "adrp x0, __start_sy_static_call_sites",
    "add x0, x0, :lo12:__start_sy_static_call_sites",
    "adrp x1, __stop_sy_static_call_sites",
    "add x1, x1, :lo12:__stop_sy_static_call_sites",
    "b sy__unregister_static_call_sites",
    ".popsection",
    ".pushsection .text.sy__rust_sc_glue_anchor, \"ax\", %progbits",
    ".weak sy__rust_sc_glue_anchor",
    ".hidden sy__rust_sc_glue_anchor",
    "sy__rust_sc_glue_anchor:",
    ".popsection",
    ".pushsection .init_array.00099, \"awG\", %init_array, sy__sc_dso_glue, comdat",
    ".balign 8",
    ".quad 1b",
    ".popsection",
    ".pushsection .fini_array.00099, \"awG\", %fini_array, sy__sc_dso_glue, comdat",
    ".balign 8",
    ".quad 2b",
    ".popsection",
);

/// The site for 0 to 6 arguments: x0 carries the first in and the result
/// out (0 in when there is none); x1-x5 the others.
#[doc(hidden)]
#[macro_export]
macro_rules! __sy_sc_site {
    ($k:tt ()) => {
        $crate::__sy_sc_call!($k () [])
    };
    ($k:tt ($a0:expr)) => {
        $crate::__sy_sc_call!($k ($a0) [0])
    };
    ($k:tt ($a0:expr, $a1:expr)) => {
        $crate::__sy_sc_call!($k ($a0, $a1) [0] "x1" 1)
    };
    ($k:tt ($a0:expr, $a1:expr, $a2:expr)) => {
        $crate::__sy_sc_call!($k ($a0, $a1, $a2) [0] "x1" 1 "x2" 2)
    };
    ($k:tt ($a0:expr, $a1:expr, $a2:expr, $a3:expr)) => {
        $crate::__sy_sc_call!($k ($a0, $a1, $a2, $a3) [0] "x1" 1 "x2" 2 "x3" 3)
    };
    ($k:tt ($a0:expr, $a1:expr, $a2:expr, $a3:expr, $a4:expr)) => {
        $crate::__sy_sc_call!($k ($a0, $a1, $a2, $a3, $a4) [0] "x1" 1 "x2" 2 "x3" 3 "x4" 4)
    };
    ($k:tt ($a0:expr, $a1:expr, $a2:expr, $a3:expr, $a4:expr, $a5:expr)) => {
        $crate::__sy_sc_call!($k ($a0, $a1, $a2, $a3, $a4, $a5) [0]
                              "x1" 1 "x2" 2 "x3" 3 "x4" 4 "x5" 5)
    };
    ($k:tt ($($a:expr),*)) => {
        ::core::compile_error!(
            "static_call!: at most 6 arguments (integers or pointers, one register each)")
    };
}

/// The call: the arguments typed by the key's signature, then the site,
/// or for a signature that may unwind what `__sy_sc_unwind!` does.
#[doc(hidden)]
#[macro_export]
macro_rules! __sy_sc_call {
    ($k:tt ($($a:expr),*) [$($x0:tt)?] $($reg:tt $i:tt)*) => {{
        let __sy_args = $crate::static_call::__private::args(&$crate::__sy_sc_path!($k), ($($a,)*));
        if const { $crate::static_call::__private::unwinds(&$crate::__sy_sc_path!($k)) } {
            $crate::__sy_sc_unwind!($k __sy_args [$($x0)?] $($reg $i)*)
        } else {
            $crate::__sy_sc_a64!([] $k __sy_args [$($x0)?] $($reg $i)*)
        }
    }};
}

/// The key's path from its bracketed form.
#[doc(hidden)]
#[macro_export]
macro_rules! __sy_sc_path {
    ([$($p:ident)::+]) => {
        $($p)::+
    };
}

/// A call that may unwind, on stable Rust: through the key's pointer
/// (asm.rules.unwind).
#[cfg(not(feature = "nightly-asm-unwind"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __sy_sc_unwind {
    ($k:tt $args:ident [$($x0:tt)?] $($reg:tt $i:tt)*) => {
        $crate::__sy_sc_path!($k).call_indirect($args)
    };
}

/// A call that may unwind, with the `nightly-asm-unwind` feature: the
/// site, marked `may_unwind`.
#[cfg(feature = "nightly-asm-unwind")]
#[doc(hidden)]
#[macro_export]
macro_rules! __sy_sc_unwind {
    ($k:tt $args:ident [$($x0:tt)?] $($reg:tt $i:tt)*) => {
        $crate::__sy_sc_a64!([may_unwind] $k $args [$($x0)?] $($reg $i)*)
    };
}

/// x0's value in: the first argument's word, or 0.
#[doc(hidden)]
#[macro_export]
macro_rules! __sy_sc_x0 {
    ($w:ident []) => {
        0u64
    };
    ($w:ident [$i:tt]) => {
        $w[$i]
    };
}

/// The site: extra asm options, the key's path, the arguments' tuple
/// (typed), x0's source, then x1-x5's registers and indexes.
#[doc(hidden)]
#[macro_export]
macro_rules! __sy_sc_a64 {
    ([$($opt:ident),*] $k:tt $args:ident [$($x0:tt)?] $($reg:tt $i:tt)*) => {{
        static __SY_META: $crate::static_call::__private::Meta =
            $crate::static_call::__private::Meta::new(&raw const $crate::__sy_sc_path!($k));
        #[allow(unused_variables)]
        let __sy_w = $crate::static_call::__private::words(&$crate::__sy_sc_path!($k), $args);
        let __sy_ret: u64;
        // SAFETY: the site calls the key's target (a function of the key's
        // type, or nothing, or one returning 0) with the C ABI: arguments
        // in x0-x5, every register the C ABI lets a callee change declared
        // clobbered (x16/x17 among them: the veneer's), sp as the block is
        // entered (16-byte aligned). The record names a static meta.
        unsafe {
            ::core::arch::asm!(
                "771: bl 776f",
                ".reloc 771b, R_AARCH64_NONE, sy__rust_sc_glue_anchor",
                ".pushsection sy_static_call_sites, \"aw?R\"",
                ".balign 8",
                "770: .quad {meta}",
                ".long 771b - ., 776f - .",
                ".popsection",
                ".pushsection .text.unlikely.sy_static_call, \"ax?\", %progbits",
                ".balign 4",
                "776: adrp x16, 770b",
                "ldr x16, [x16, #:lo12:770b]",
                "ldr x16, [x16]",
                "ldar x16, [x16]",
                "cbz x16, 777f",
                "br x16",
                "777: ret",
                ".popsection",
                meta = sym __SY_META,
                inout("x0") $crate::__sy_sc_x0!(__sy_w [$($x0)?]) => __sy_ret,
                $(inout($reg) __sy_w[$i] => _,)*
                clobber_abi("C"),
                options($($opt),*),
            );
        }
        $crate::static_call::__private::ret(&$crate::__sy_sc_path!($k), __sy_ret)
    }};
}
