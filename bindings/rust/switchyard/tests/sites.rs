// SPDX-License-Identifier: MIT
//! The sites and records a Rust object carries are the C headers': the
//! record format read back from the section, the code bytes at each site
//! before and after a change (the forms of `doc/DESIGN.md`), and the
//! registration before the program's constructors run.

use std::sync::atomic::{AtomicU8, Ordering};
use switchyard::{
    PATCHING, Site, define_static_key_false, define_static_key_true, static_branch_likely,
    static_branch_unlikely, sys,
};

define_static_key_false!(K);
define_static_key_true!(EARLY);

#[inline(never)]
fn unlikely_site() -> bool {
    static_branch_unlikely!(K)
}

#[inline(never)]
fn likely_site() -> bool {
    static_branch_likely!(K)
}

/// The code bytes at a site.
fn code(s: &Site) -> Vec<u8> {
    // SAFETY: the site is code of this process, mapped readable; bytes
    // read one by one, volatile (the library may write them meanwhile).
    (0..s.len)
        .map(|i| unsafe { std::ptr::read_volatile((s.addr + i) as *const u8) })
        .collect()
}

/// Whether the bytes are the jump form of the site (and the other form's
/// bytes are what they must be).
fn jumps(b: &[u8]) -> bool {
    if cfg!(target_arch = "x86_64") {
        match (b.len(), b[0]) {
            (2, 0xeb) | (5, 0xe9) => true,  // JMP8, JMP32
            (2, 0xa8) | (5, 0xa9) => false, // TEST8, TEST32
            _ => panic!("not a site: {b:02x?}"),
        }
    } else {
        let w = u32::from_le_bytes(b.try_into().expect("4 bytes"));
        if w == 0xd503_201f {
            false // NOP
        } else {
            assert_eq!(w & 0xfc00_0000, 0x1400_0000, "not B nor NOP: {w:08x}");
            true
        }
    }
}

fn sites_of(f: &str) -> Vec<Site> {
    let v: Vec<Site> = K
        .sites()
        .into_iter()
        .filter(|s| s.function.as_deref().is_some_and(|n| n.ends_with(f)))
        .collect();
    assert!(!v.is_empty(), "no site in {f}: {:?}", K.sites());
    v
}

#[test]
fn sites_change_form_with_their_key() {
    if !PATCHING {
        return;
    }
    assert!(!unlikely_site() && !likely_site());
    let u = sites_of("::unlikely_site");
    let l = sites_of("::likely_site");
    let rest: Vec<Vec<u8>> = u.iter().chain(&l).map(|s| code(s)[1..].to_vec()).collect();
    // disabled: an unlikely site falls through, a likely one jumps
    for s in &u {
        assert!(!s.likely && !s.jumps && !jumps(&code(s)), "{s:?}");
    }
    for s in &l {
        assert!(s.likely && s.jumps && jumps(&code(s)), "{s:?}");
    }
    K.enable().unwrap();
    assert!(unlikely_site() && likely_site());
    for s in &u {
        assert!(jumps(&code(s)), "{s:?}");
    }
    for s in &l {
        assert!(!jumps(&code(s)), "{s:?}");
    }
    // x86-64: the forms differ in their first byte only
    if cfg!(target_arch = "x86_64") {
        let now: Vec<Vec<u8>> = u.iter().chain(&l).map(|s| code(s)[1..].to_vec()).collect();
        assert_eq!(now, rest);
    }
    K.disable().unwrap();
    assert!(!unlikely_site() && !likely_site());
    for s in &u {
        assert!(!jumps(&code(s)));
    }
}

unsafe extern "C" {
    static __start_sy_jump_entries: [sys::sy_jump_entry; 0];
    static __stop_sy_jump_entries: [sys::sy_jump_entry; 0];
}

#[test]
fn records_are_the_c_headers() {
    if !PATCHING {
        return;
    }
    let _ = (unlikely_site(), likely_site());
    // SAFETY: the linker's bounds of this object's section of records.
    let recs = unsafe {
        let a = (&raw const __start_sy_jump_entries) as *const sys::sy_jump_entry;
        let b = (&raw const __stop_sy_jump_entries) as *const sys::sy_jump_entry;
        std::slice::from_raw_parts(a, b.offset_from(a) as usize)
    };
    let key = K.as_ptr() as usize;
    let mut seen = [0; 2];
    for r in recs {
        if r.key & !3 != key {
            continue;
        }
        let code = (&raw const r.code as usize).wrapping_add(r.code as isize as usize);
        let target = (&raw const r.target as usize).wrapping_add(r.target as isize as usize);
        let branch = r.key & 1;
        seen[branch] += 1;
        let f = if branch == 1 {
            "::likely_site"
        } else {
            "::unlikely_site"
        };
        let s = sites_of(f);
        // the record's code field is a site the library reports, of the
        // form its branch bit says
        assert!(s.iter().any(|s| s.addr == code), "{code:#x} not in {s:?}");
        // the target: the out-of-line code, near the site (one function)
        assert!(
            target != code && target.abs_diff(code) < 4096,
            "{code:#x} -> {target:#x}"
        );
    }
    assert!(
        seen[0] >= 1 && seen[1] >= 1,
        "records of K by branch: {seen:?}"
    );
    assert_eq!(recs.as_ptr() as usize % 8, 0);
}

// A constructor of the default priority: it runs after the glue's
// (.init_array.00099), so the site it runs already has its key's form.
static EARLY_SEEN: AtomicU8 = AtomicU8::new(0);

extern "C" fn early() {
    // EARLY is true: a likely site that falls through. Unregistered, it
    // would hold the jump the compiler emitted and say false.
    let on = static_branch_likely!(EARLY);
    EARLY_SEEN.store(if on { 2 } else { 1 }, Ordering::Relaxed);
}

#[used]
#[unsafe(link_section = ".init_array")]
static EARLY_CTOR: extern "C" fn() = early;

#[test]
fn sites_are_registered_before_constructors_run() {
    assert_eq!(
        EARLY_SEEN.load(Ordering::Relaxed),
        2,
        "0: did not run; 1: the emitted jump"
    );
    if PATCHING {
        assert!(
            switchyard::keys()
                .iter()
                .any(|k| k.name == "sites::EARLY" && k.enabled)
        );
    }
}

#[test]
fn keys_are_named_as_the_source_spells_them() {
    if !PATCHING {
        return;
    }
    let _ = unlikely_site();
    let names: Vec<String> = switchyard::keys().into_iter().map(|k| k.name).collect();
    assert!(names.iter().any(|n| n == "sites::K"), "{names:?}");
}
