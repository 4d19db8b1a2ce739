// SPDX-License-Identifier: MIT
//! Static calls shared between C and Rust in one program, one copy of the
//! library: a Rust call updated from C moves the Rust and the C sites, a C
//! call updated from Rust moves both too; the program registers its sites
//! once though its C object carries the header's glue as well as the
//! crate's.

use switchyard::static_call::{Target, static_calls};
use switchyard::{PATCHING, static_call};
use switchyard_interop_sc_tests::*;

#[inline(never)]
fn rust_site_rust_call(x: u64) -> u64 {
    static_call!(RUST_CALL(x))
}

#[inline(never)]
fn rust_site_c_call(x: u64) -> u64 {
    static_call!(C_CALL(x))
}

#[test]
fn static_calls_cross_the_language_boundary() {
    let both = |x: u64, want: u64| {
        assert_eq!(rust_site_rust_call(x), want, "Rust site of rust_call");
        assert_eq!(c_site_rust_call(x), want, "C site of rust_call");
    };
    both(5, 10);
    assert_eq!(c_update_rust_call(rust_square), 0);
    assert_eq!(RUST_CALL.target(), Target::Func(rust_square as Fun));
    both(5, 25);
    RUST_CALL.update(rust_double).unwrap();
    both(6, 12);
    RUST_CALL.update_ret0().unwrap();
    both(6, 0);
    RUST_CALL.update(rust_double).unwrap();
    both(7, 14);

    let c_both = |x: u64, want: u64| {
        assert_eq!(rust_site_c_call(x), want, "Rust site of c_call");
        assert_eq!(c_site_c_call(x), want, "C site of c_call");
    };
    c_both(1, 2);
    assert_eq!(c_update_c_call_add2(), 0);
    c_both(1, 3);
    C_CALL.update(rust_square).unwrap();
    c_both(4, 16);
    assert_eq!(c_update_c_call_null(), 0);
    assert_eq!(C_CALL.target(), Target::Null);
    C_CALL.update(c_add1).unwrap();
    c_both(1, 2);
}

#[test]
fn the_program_registers_its_sites_once() {
    if !PATCHING {
        return;
    }
    let _ = (
        rust_site_rust_call(0),
        rust_site_c_call(0),
        c_site_c_call(0),
        c_site_rust_call(0),
    );
    let calls: Vec<_> = static_calls()
        .into_iter()
        .map(|c| (c.name, c.sites))
        .collect();
    assert!(calls.contains(&("rust_call".to_string(), 2)), "{calls:?}");
    assert!(calls.contains(&("c_call".to_string(), 2)), "{calls:?}");
}

/// The static call glue's code: `lea __start_sy_static_call_sites(%rip),
/// %rdi; lea __stop_sy_static_call_sites(%rip), %rsi; jmp`, once to
/// register, once to unregister. The C object and the Rust crate both
/// bring a copy, in COMDAT group "sy__sc_dso_glue": the linker keeps one,
/// so the program holds the sequence twice, not four times (a second
/// registration would be ignored; this shows there is none).
#[cfg(target_arch = "x86_64")]
#[test]
fn the_glue_is_linked_once() {
    use std::ffi::c_void;
    #[repr(C)]
    struct Info {
        addr: usize,
        name: *const u8,
        phdr: *const [u64; 7],
        phnum: u16,
    }
    unsafe extern "C" {
        static __start_sy_static_call_sites: u8;
        static __stop_sy_static_call_sites: u8;
        fn dl_iterate_phdr(
            cb: unsafe extern "C" fn(*mut Info, usize, *mut c_void) -> i32,
            arg: *mut c_void,
        ) -> i32;
    }
    /// The program's executable PT_LOAD segments (the first object only).
    unsafe extern "C" fn segs(info: *mut Info, _: usize, arg: *mut c_void) -> i32 {
        // SAFETY: what dl_iterate_phdr passes, and the Vec below.
        let (info, v) = unsafe { (&*info, &mut *(arg as *mut Vec<(usize, usize)>)) };
        for i in 0..info.phnum as usize {
            // SAFETY: phnum Elf64_Phdr (56 bytes: 7 words) at phdr.
            let p = unsafe { &*info.phdr.add(i) };
            let (ty, flags) = (p[0] as u32, (p[0] >> 32) as u32);
            if ty == 1 && flags & 1 != 0 {
                v.push((info.addr + p[2] as usize, p[5] as usize)); // p_vaddr, p_memsz
            }
        }
        1
    }
    let start = (&raw const __start_sy_static_call_sites) as usize;
    let stop = (&raw const __stop_sy_static_call_sites) as usize;
    let mut v: Vec<(usize, usize)> = Vec::new();
    // SAFETY: the callback matches the C type.
    unsafe { dl_iterate_phdr(segs, &raw mut v as *mut c_void) };
    assert!(!v.is_empty());
    let mut found = 0;
    for (a, n) in v {
        // SAFETY: a mapped, readable executable segment of this program.
        let code = unsafe { std::slice::from_raw_parts(a as *const u8, n) };
        for i in 0..n.saturating_sub(15) {
            let w = &code[i..i + 15];
            if w[..3] == [0x48, 0x8d, 0x3d] && w[7..10] == [0x48, 0x8d, 0x35] && w[14] == 0xe9 {
                let rel = |o: usize| i32::from_le_bytes(w[o..o + 4].try_into().unwrap()) as isize;
                if (a + i + 7).wrapping_add_signed(rel(3)) == start
                    && (a + i + 14).wrapping_add_signed(rel(10)) == stop
                {
                    found += 1;
                }
            }
        }
    }
    assert_eq!(found, 2, "the glue's register and unregister sequences");
}
