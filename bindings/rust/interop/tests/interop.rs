// SPDX-License-Identifier: MIT
//! Keys shared between C and Rust in one program, one copy of the library:
//! a Rust key flipped from C moves the Rust and the C sites, a C key
//! flipped from Rust moves both too; the program registers once though its
//! C object carries the header's glue as well as the crate's.

use switchyard::{static_branch_likely, static_branch_unlikely};
use switchyard_interop_tests::*;

#[inline(never)]
fn rust_site_rust_key() -> bool {
    static_branch_unlikely!(rust_key)
}

#[inline(never)]
fn rust_site_c_key() -> bool {
    static_branch_likely!(c_key)
}

#[test]
fn keys_cross_the_language_boundary() {
    let all = |want: bool| {
        assert_eq!(rust_site_rust_key(), want, "Rust site of rust_key");
        assert_eq!(c_site_rust_key(), want, "C site of rust_key");
        assert_eq!(c_site_rust_key_likely(), want, "likely C site of rust_key");
    };
    all(false);
    assert_eq!(c_enable_rust_key(), 0);
    all(true);
    rust_key.disable().unwrap();
    all(false);
    rust_key.enable().unwrap();
    all(true);
    assert_eq!(c_disable_rust_key(), 0);
    all(false);

    assert!(!rust_site_c_key() && !c_site_c_key());
    c_key.enable().unwrap();
    assert!(rust_site_c_key() && c_site_c_key());
    assert_eq!(c_disable_c_key(), 0);
    assert!(!rust_site_c_key() && !c_site_c_key());
    assert_eq!(c_enable_c_key(), 0);
    assert!(rust_site_c_key() && c_site_c_key());
    c_key.disable().unwrap();
}

#[test]
fn the_program_registers_once() {
    let _ = (rust_site_rust_key(), c_site_rust_key(), rust_site_c_key());
    let mut st = switchyard::sys::switchyard_stats::default();
    assert_eq!(unsafe { switchyard::sys::switchyard_get_stats(&mut st) }, 0);
    assert_eq!(st.objects, 1, "{st:?}");
    let keys: Vec<_> = switchyard::keys()
        .into_iter()
        .map(|k| (k.name, k.sites))
        .collect();
    assert!(keys.contains(&("rust_key".to_string(), 3)), "{keys:?}");
    assert!(keys.contains(&("c_key".to_string(), 2)), "{keys:?}");
}

/// The glue's code: `lea __start_sy_jump_entries(%rip), %rdi; lea
/// __stop_sy_jump_entries(%rip), %rsi; jmp`, once to register, once to
/// unregister. The C object and the Rust crate both bring a copy, in
/// COMDAT group "sy__dso_glue": the linker keeps one, so the program holds
/// the sequence twice, not four times. (A double registration would be
/// harmless, the registry ignores a table it has; this shows there is
/// none.)
#[cfg(target_arch = "x86_64")]
#[test]
fn the_glue_is_linked_once() {
    use std::ffi::c_void;
    unsafe extern "C" {
        static __start_sy_jump_entries: u8;
        static __stop_sy_jump_entries: u8;
        fn dl_iterate_phdr(
            cb: unsafe extern "C" fn(*mut DlPhdrInfo, usize, *mut c_void) -> i32,
            arg: *mut c_void,
        ) -> i32;
    }
    #[repr(C)]
    struct DlPhdrInfo {
        addr: usize,
        name: *const u8,
        phdr: *const Phdr,
        phnum: u16,
    }
    #[repr(C)]
    struct Phdr {
        p_type: u32,
        p_flags: u32,
        p_offset: u64,
        p_vaddr: u64,
        p_paddr: u64,
        p_filesz: u64,
        p_memsz: u64,
        p_align: u64,
    }
    /// The main program's executable segments (the first object).
    unsafe extern "C" fn segs(info: *mut DlPhdrInfo, _: usize, arg: *mut c_void) -> i32 {
        let (info, v) = unsafe { (&*info, &mut *(arg as *mut Vec<(usize, usize)>)) };
        for i in 0..info.phnum as usize {
            let p = unsafe { &*info.phdr.add(i) };
            if p.p_type == 1 && p.p_flags & 1 != 0 {
                v.push((info.addr + p.p_vaddr as usize, p.p_memsz as usize));
            }
        }
        1
    }
    let start = (&raw const __start_sy_jump_entries) as usize;
    let stop = (&raw const __stop_sy_jump_entries) as usize;
    let mut v: Vec<(usize, usize)> = Vec::new();
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
                let x = (a + i + 7).wrapping_add_signed(rel(3));
                let y = (a + i + 14).wrapping_add_signed(rel(10));
                if x == start && y == stop {
                    found += 1;
                }
            }
        }
    }
    assert_eq!(found, 2, "the glue's register and unregister sequences");
}

/// Generic and inline functions instantiated in two crates (this test's
/// and the library's): rustc gives each instance its own code (no COMDAT
/// group on ELF; with shared generics, a debug build reuses the library's
/// u8 instance), each with its own site and record, all registered and
/// all following the key.
#[test]
fn sites_in_generic_and_inline_functions_follow_the_key() {
    let all = || {
        [
            generic_site::<u8>(),
            generic_site::<u16>(),
            generic_site::<i64>(),
            inline_site(),
            lib_instances()[0],
            lib_instances()[1],
        ]
    };
    assert_eq!(all(), [false; 6]);
    GENERIC_KEY.enable().unwrap();
    assert_eq!(all(), [true; 6]);
    GENERIC_KEY.disable().unwrap();
    assert_eq!(all(), [false; 6]);
    let n = GENERIC_KEY.sites().len();
    assert!(n >= 4, "{n} sites: one per instance at least");
    eprintln!("GENERIC_KEY: {n} sites");
}
