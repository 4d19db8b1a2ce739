// SPDX-License-Identifier: MIT
//! x86-64: static call sites, their records and the per-object glue of
//! `include/switchyard/arch/x86_64_static_call.h`, from the arm on byte for
//! byte, so that the library registers, patches and lists a Rust site as a
//! C one (`src/static_call.c` finds a site by its record, which points at
//! the arm, and checks the arm, the guard, the payload and the signature
//! before the detour; nothing before the arm).
//!
//! ```text
//! 64 48 f7 04 25 <disp32> <imm32>  arm: testq $0,%fs:0 as compiled,
//!                                  movq $desc,%fs:disp32 (rseq_cs) armed
//! e9/a9 <rel32>                    guard: JMP32 to the detour / TEST32
//! e8 <rel32>                       payload (5 bytes): call .+5 as
//!                                  compiled; call target / NOPs (NULL) /
//!                                  NOPs + xor %eax,%eax (RET0) / a native
//! ```
//!
//! The C site wraps this in a stack step (`mov %rsp,SV; lea -128(%rsp),
//! %rsp; and $-16,%rsp` ... `mov SV,%rsp`): a C asm statement knows
//! neither whether the red zone holds data nor the stack's alignment. A
//! Rust `asm!` block without `nostack` is told both (the Rust reference,
//! `asm.rules.stack-below-sp`: the block may use the stack below the stack
//! pointer, which is aligned for a call on entry), so the Rust site steps
//! over no red zone and aligns nothing: the enclosing function aligns the
//! stack in its prologue, once, and keeps no data below it
//! (doc/DESIGN.md "Rust static call sites" shows the code rustc
//! generates). What it keeps of the step is the save of rsp in a register
//! the call preserves (r12) and its restore after the payload: an inline
//! native (`switchyard_static_call_native()`) may push, and one
//! interrupted after its push reaches the detour with rsp 8 lower, which
//! the restore repairs, as at a C site. (Without it, no step at all,
//! measured the same; `__sy_sc_step_in!(none)` is that site, for the
//! benchmark.) Nor does it need the C site's rbp frame: rsp is the same
//! before and after the payload (and, but for that interrupted native,
//! throughout), so the compiler's own unwind information stays true at the
//! call, and a backtrace from the target (and, with `may_unwind`, a panic)
//! walks through the site.
//!
//! The detour (in `.text.unlikely.sy_static_call`, after the rseq
//! signature) and its hand-written CIE and FDE are the C header's: entered
//! by the guard's JMP or as the rseq abort handler, it pushes the end of
//! the site as a return address, aligns the stack in an rbp frame, calls
//! the key's current target (none when NULL), and jumps back.

// The per-object glue for static call sites (the C header's, COMDAT group
// "sy__sc_dso_glue": one copy per linked object, shared with C objects of
// the same final object): the empty contribution to sy_static_call_sites
// ("R": kept under --gc-sections, as the key records'), the constructor in
// .init_array.00099 that registers the object's sites before any other
// constructor of it runs, the destructor for dlclose. Its anchor, named by
// every site, pulls this crate's object holding the glue into any final
// object with sites (rlibs are archives): the keys' anchor lives in
// another object of this crate.
core::arch::global_asm!(
    ".pushsection sy_static_call_sites, \"awR\"",
    ".popsection",
    ".hidden __start_sy_static_call_sites",
    ".hidden __stop_sy_static_call_sites",
    ".pushsection .text.sy__sc_dso_glue, \"axG\", @progbits, sy__sc_dso_glue, comdat",
    "1: leaq __start_sy_static_call_sites(%rip), %rdi",
    "leaq __stop_sy_static_call_sites(%rip), %rsi",
    "jmp sy__register_static_call_sites@PLT",
    "2: leaq __start_sy_static_call_sites(%rip), %rdi",
    "leaq __stop_sy_static_call_sites(%rip), %rsi",
    "jmp sy__unregister_static_call_sites@PLT",
    ".popsection",
    ".pushsection .text.sy__rust_sc_glue_anchor, \"ax\", @progbits",
    ".weak sy__rust_sc_glue_anchor",
    ".hidden sy__rust_sc_glue_anchor",
    "sy__rust_sc_glue_anchor:",
    ".popsection",
    ".pushsection .init_array.00099, \"awG\", @init_array, sy__sc_dso_glue, comdat",
    ".balign 8",
    ".quad 1b",
    ".popsection",
    ".pushsection .fini_array.00099, \"awG\", @fini_array, sy__sc_dso_glue, comdat",
    ".balign 8",
    ".quad 2b",
    ".popsection",
    options(att_syntax)
);

/// The site for 0 to 6 arguments: their registers.
#[doc(hidden)]
#[macro_export]
macro_rules! __sy_sc_site {
    ($k:tt ()) => {
        $crate::__sy_sc_call!($k ())
    };
    ($k:tt ($a0:expr)) => {
        $crate::__sy_sc_call!($k ($a0) "rdi" 0)
    };
    ($k:tt ($a0:expr, $a1:expr)) => {
        $crate::__sy_sc_call!($k ($a0, $a1) "rdi" 0 "rsi" 1)
    };
    ($k:tt ($a0:expr, $a1:expr, $a2:expr)) => {
        $crate::__sy_sc_call!($k ($a0, $a1, $a2) "rdi" 0 "rsi" 1 "rdx" 2)
    };
    ($k:tt ($a0:expr, $a1:expr, $a2:expr, $a3:expr)) => {
        $crate::__sy_sc_call!($k ($a0, $a1, $a2, $a3) "rdi" 0 "rsi" 1 "rdx" 2 "rcx" 3)
    };
    ($k:tt ($a0:expr, $a1:expr, $a2:expr, $a3:expr, $a4:expr)) => {
        $crate::__sy_sc_call!($k ($a0, $a1, $a2, $a3, $a4)
                              "rdi" 0 "rsi" 1 "rdx" 2 "rcx" 3 "r8" 4)
    };
    ($k:tt ($a0:expr, $a1:expr, $a2:expr, $a3:expr, $a4:expr, $a5:expr)) => {
        $crate::__sy_sc_call!($k ($a0, $a1, $a2, $a3, $a4, $a5)
                              "rdi" 0 "rsi" 1 "rdx" 2 "rcx" 3 "r8" 4 "r9" 5)
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
    ($k:tt ($($a:expr),*) $($reg:tt $i:tt)*) => {{
        let __sy_args = $crate::static_call::__private::args(&$crate::__sy_sc_path!($k), ($($a,)*));
        if const { $crate::static_call::__private::unwinds(&$crate::__sy_sc_path!($k)) } {
            $crate::__sy_sc_unwind!($k __sy_args $($reg $i)*)
        } else {
            $crate::__sy_sc_x86!(save [out("r12") _,] [] $k __sy_args $($reg $i)*)
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

/// A call that may unwind, on stable Rust: not through an asm! block
/// (asm.rules.unwind), so through the key's pointer.
#[cfg(not(feature = "nightly-asm-unwind"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __sy_sc_unwind {
    ($k:tt $args:ident $($reg:tt $i:tt)*) => {
        $crate::__sy_sc_path!($k).call_indirect($args)
    };
}

/// A call that may unwind, with the `nightly-asm-unwind` feature: the
/// site, marked `may_unwind`. rustc checks that feature gate against the
/// crate the asm! block lands in (not the macro's), so every crate that
/// calls static_call! enables `#![feature(asm_unwind)]` then.
#[cfg(feature = "nightly-asm-unwind")]
#[doc(hidden)]
#[macro_export]
macro_rules! __sy_sc_unwind {
    ($k:tt $args:ident $($reg:tt $i:tt)*) => {
        $crate::__sy_sc_x86!(save [out("r12") _,] [may_unwind] $k $args $($reg $i)*)
    };
}

/// The stack step before the arm: the save of rsp in r12 (`save`: the
/// Rust site), nothing (`none`), or the C site's (`full`). The last two
/// are for the measurement of what the step costs
/// (examples/static_call_bench.rs); r12 is SV, a register the call keeps
/// (the caller declares it: `[out("r12") _,]`).
#[doc(hidden)]
#[macro_export]
macro_rules! __sy_sc_step_in {
    (none) => {
        ""
    };
    (save) => {
        "mov %rsp, %r12"
    };
    (full) => {
        "mov %rsp, %r12\n lea -128(%rsp), %rsp\n and $-16, %rsp"
    };
}

/// The stack step after the payload (see `__sy_sc_step_in!`).
#[doc(hidden)]
#[macro_export]
macro_rules! __sy_sc_step_out {
    (none) => {
        ""
    };
    (save) => {
        "mov %r12, %rsp"
    };
    (full) => {
        "mov %r12, %rsp"
    };
}

/// The site: `$step` (none, save, full), extra operands, extra asm
/// options, the key's path, the arguments' tuple (typed), then each
/// argument's register and index.
#[doc(hidden)]
#[macro_export]
macro_rules! __sy_sc_x86 {
    ($step:ident [$($extra:tt)*] [$($opt:ident),*] $k:tt $args:ident $($reg:tt $i:tt)*) => {{
        static __SY_META: $crate::static_call::__private::Meta =
            $crate::static_call::__private::Meta::new(&raw const $crate::__sy_sc_path!($k));
        #[allow(unused_variables)]
        let __sy_w = $crate::static_call::__private::words(&$crate::__sy_sc_path!($k), $args);
        let __sy_ret: u64;
        // SAFETY: the site calls the key's target (a function of the key's
        // type, or nothing, or one returning 0) with the C ABI: the
        // arguments in their registers, every register the C ABI lets a
        // callee change declared clobbered, the stack as the asm! block is
        // entered (aligned for a call, nothing kept below it: no
        // `nostack`); the detour restores everything it moves. The record
        // names a static meta, which names the key.
        unsafe {
            ::core::arch::asm!(
                $crate::__sy_sc_step_in!($step),
                "771: .byte 0x64, 0x48, 0xf7, 0x04, 0x25",
                ".long 0, 0",
                ".byte 0xe9",
                ".long 776f - 774f",
                "774: .byte 0xe8",
                ".long 0",
                "775:",
                $crate::__sy_sc_step_out!($step),
                ".reloc 771b, R_X86_64_NONE, sy__rust_sc_glue_anchor",
                ".pushsection sy_static_call_sites, \"aw?R\"",
                ".balign 8",
                ".quad {meta}",
                ".long 771b - ., 0",
                ".popsection",
                // The detour, after the end of the site (for its unwind
                // information) and the rseq signature.
                ".pushsection .text.unlikely.sy_static_call, \"ax?\", @progbits",
                ".long 775b - .",
                ".long 0x53053053",
                "776: lea 775b(%rip), %rax",
                "770: push %rax",
                "777: push %rbp",
                "779: mov %rsp, %rbp",
                "788: and $-16, %rsp",
                "movq {meta}@GOTPCREL(%rip), %rax",
                "movq (%rax), %rax",
                "movq (%rax), %rax",
                "testq %rax, %rax",
                "jz 780f",
                "call *%rax",
                "780: mov %rbp, %rsp",
                "pop %rbp",
                "789: lea 8(%rsp), %rsp",
                "781: jmp 775b",
                "782:",
                ".popsection",
                // Its CIE and FDE (the C header's SY__SC_FDE): rows at the
                // entry (CFA = rsp, RA = the end of the site, computed from
                // the offset before the signature), after the lea (RA =
                // rax), after each push, once the frame is set, once it is
                // dropped, and at the jump back.
                ".pushsection .eh_frame, \"a\", @unwind",
                "783: .long 785f - 784f",
                "784: .long 0",
                ".byte 1",
                ".asciz \"zR\"",
                ".byte 1, 0x78, 16, 1, 0x1b",
                ".byte 0x0c, 7, 8, 0x90, 1",
                ".balign 8, 0",
                "785: .long 787f - 786f",
                "786: .long 786b - 783b",
                ".long 776b - .",
                ".long 782b - 776b",
                ".byte 0",
                ".byte 0x0c, 7, 0",
                ".byte 0x16, 16, 24, 0x80, 0x78, 0x06, 0x08, 32, 0x24",
                ".byte 0x08, 32, 0x25, 0x80, 0x78, 0x06, 0x0c, 0, 0, 0, 0x80",
                ".byte 0x1a, 0x31, 0x24, 0x1c, 0x80, 0x78, 0x22",
                ".byte 0x02, 770b - 776b, 0x09, 16, 0",
                ".byte 0x02, 777b - 770b, 0x0e, 8, 0x90, 1",
                ".byte 0x02, 779b - 777b, 0x0e, 16, 0x86, 2",
                ".byte 0x02, 788b - 779b, 0x0d, 6",
                ".byte 0x02, 789b - 788b, 0x0c, 7, 8, 0x08, 6",
                ".byte 0x02, 781b - 789b, 0x0e, 0",
                ".balign 8, 0",
                "787:",
                ".popsection",
                meta = sym __SY_META,
                $(inout($reg) __sy_w[$i] => _,)*
                $($extra)*
                lateout("rax") __sy_ret,
                clobber_abi("C"),
                options(att_syntax $(, $opt)*),
            );
        }
        $crate::static_call::__private::ret(&$crate::__sy_sc_path!($k), __sy_ret)
    }};
}
