// SPDX-License-Identifier: MIT
//! Static calls: calls reach the target after each update, NULL and RET0
//! do what the C API says, arguments and results cross the site intact
//! (every register, sign and zero extension), the site holds the C
//! header's patched forms (and its compiled forms with
//! SWITCHYARD_STATIC_CALL=detour, where every call still reaches the right
//! target), a leaf function keeps nothing below the stack pointer across a
//! site, a backtrace from the target walks through the site (payload and
//! detour), a panic in an `extern "C-unwind"` target is caught, one in an
//! `extern "C"` target aborts, and the calls are listed by name (the
//! library, and the `switchyard` tool on this file).
//!
//! Some checks run in a child: this test binary again, with `SY_SC_CHILD`
//! naming what to do (the `child_mode` test; a no-op otherwise).

#![cfg_attr(feature = "nightly-asm-unwind", feature(asm_unwind))]

use std::hint::black_box;
use std::path::PathBuf;
use std::process::Command;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use switchyard::static_call::{Target, static_calls};
use switchyard::{
    PATCHING, define_static_call, define_static_call_null, define_static_call_ret0, static_call,
};

// ---- targets ----------------------------------------------------------------

static CALLS: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];

fn calls(i: usize) -> u64 {
    CALLS[i].load(Ordering::SeqCst)
}

extern "C" fn t_double(x: u64) -> u64 {
    CALLS[0].fetch_add(1, Ordering::SeqCst);
    x * 2
}

extern "C" fn t_square(x: u64) -> u64 {
    CALLS[1].fetch_add(1, Ordering::SeqCst);
    x * x
}

extern "C" fn t_plus(x: u64) -> u64 {
    CALLS[2].fetch_add(1, Ordering::SeqCst);
    x + 100
}

define_static_call!(A: extern "C" fn(u64) -> u64 = t_double);

#[inline(never)]
fn site_a(x: u64) -> u64 {
    static_call!(A(x))
}

/// A second site of the same call, in another function.
#[inline(never)]
fn site_a2(x: u64) -> u64 {
    static_call!(A(x)) + 1
}

static VOIDS: AtomicU64 = AtomicU64::new(0);

extern "C" fn t_void(n: u64) {
    VOIDS.fetch_add(n, Ordering::SeqCst);
}

define_static_call_null!(V: extern "C" fn(u64));

#[inline(never)]
fn site_v(n: u64) {
    static_call!(V(n))
}

define_static_call_ret0!(R0: extern "C" fn(u64) -> u64);
define_static_call_ret0!(RP: extern "C" fn() -> *const u8);
define_static_call_ret0!(RB: extern "C" fn(bool) -> bool);

#[test]
fn calls_reach_the_target_after_each_update() {
    let base: Vec<u64> = (0..3).map(calls).collect();
    assert_eq!(site_a(7), 14);
    assert_eq!(site_a2(7), 15);
    assert_eq!(
        A.target(),
        Target::Func(t_double as extern "C" fn(u64) -> u64)
    );
    for (f, want, i) in [
        (t_square as extern "C" fn(u64) -> u64, 49, 1),
        (t_plus, 107, 2),
        (t_double, 14, 0),
        (t_square, 49, 1),
    ] {
        let before = calls(i);
        A.update(f).unwrap();
        assert_eq!(A.target(), Target::Func(f));
        assert_eq!(site_a(black_box(7)), want);
        assert_eq!(site_a2(black_box(7)), want + 1);
        assert_eq!(calls(i), before + 2, "the target ran once per call");
    }
    // the same target again: nothing changes
    A.update(t_square).unwrap();
    assert_eq!(site_a(3), 9);
    A.update_ret0().unwrap();
    assert_eq!(A.target(), Target::Ret0);
    let before: Vec<u64> = (0..3).map(calls).collect();
    assert_eq!(site_a(7), 0);
    assert_eq!(
        (0..3).map(calls).collect::<Vec<_>>(),
        before,
        "RET0 calls nothing"
    );
    A.update_null().unwrap();
    assert_eq!(A.target(), Target::Null);
    let _ = site_a(7); // no call; the value is unspecified
    assert_eq!(
        (0..3).map(calls).collect::<Vec<_>>(),
        before,
        "NULL calls nothing"
    );
    A.set(Target::Func(t_double)).unwrap();
    assert_eq!(site_a(21), 42);
    assert!(calls(0) > base[0]);
    if PATCHING {
        let c = A.info().expect("A is listed");
        assert_eq!(c.sites, 2, "{c:?}");
        assert!(c.name.ends_with("static_call::A"), "{c:?}");
        assert!(c.target.ends_with("t_double"), "{c:?}");
    }
}

#[test]
fn null_calls_nothing_and_ret0_returns_zero() {
    // defined NULL: a void call does nothing
    assert_eq!(V.target(), Target::Null);
    site_v(5);
    assert_eq!(VOIDS.load(Ordering::SeqCst), 0);
    V.update(t_void).unwrap();
    site_v(5);
    site_v(6);
    assert_eq!(VOIDS.load(Ordering::SeqCst), 11);
    V.update_null().unwrap();
    site_v(100);
    assert_eq!(VOIDS.load(Ordering::SeqCst), 11);
    V.update_ret0().unwrap(); // a void call of return0: nothing either
    site_v(100);
    assert_eq!(VOIDS.load(Ordering::SeqCst), 11);
    // defined RET0: 0 of every return type, whatever the arguments
    assert_eq!(R0.target(), Target::Ret0);
    assert_eq!(static_call!(R0(black_box(u64::MAX))), 0);
    assert!(static_call!(RP()).is_null());
    assert!(!static_call!(RB(black_box(true))));
    extern "C" fn not(b: bool) -> bool {
        !b
    }
    RB.update(not).unwrap();
    assert!(static_call!(RB(black_box(false))));
    RB.update_ret0().unwrap();
    assert!(!static_call!(RB(black_box(false))));
}

// ---- arguments and results --------------------------------------------------

extern "C" fn mix6(a: u64, b: u64, c: u64, d: u64, e: u64, f: u64) -> u64 {
    // each argument in its own bits: a swapped pair shows
    a | b << 8 | c << 16 | d << 24 | e << 32 | f << 40
}
define_static_call!(M6: extern "C" fn(u64, u64, u64, u64, u64, u64) -> u64 = mix6);

extern "C" fn mix5(a: u8, b: u16, c: u32, d: i64, e: usize) -> i64 {
    a as i64 + b as i64 + c as i64 + d + e as i64
}
define_static_call!(M5: extern "C" fn(u8, u16, u32, i64, usize) -> i64 = mix5);

extern "C" fn neg4(a: i8, b: i16, c: i32, d: isize) -> i32 {
    // sign-extended by the site: the callee may read them as wider types
    (a as i32) + (b as i32) + c + (d as i32)
}
define_static_call!(N4: extern "C" fn(i8, i16, i32, isize) -> i32 = neg4);

extern "C" fn ptrs(p: *const u64, q: *mut u64, n: Option<NonNull<u64>>) -> *mut u64 {
    // SAFETY: the test passes valid pointers.
    unsafe { *q = *p + n.map_or(0, |n| *n.as_ptr()) };
    q
}
define_static_call!(P3: extern "C" fn(*const u64, *mut u64, Option<NonNull<u64>>) -> *mut u64 = ptrs);

extern "C" fn flags(a: bool, c: u32) -> bool {
    a && c == 'é' as u32
}
define_static_call!(F2: extern "C" fn(bool, u32) -> bool = flags);

extern "C" fn zero() -> i8 {
    -3
}
define_static_call!(Z0: extern "C" fn() -> i8 = zero);

extern "C" fn opt(p: NonNull<u8>) -> Option<NonNull<u8>> {
    Some(p)
}
define_static_call!(O1: extern "C" fn(NonNull<u8>) -> Option<NonNull<u8>> = opt);

#[test]
fn arguments_and_results_cross_the_site() {
    let v: Vec<u64> = (1..=6).map(|i| black_box(i * 3)).collect();
    assert_eq!(
        static_call!(M6(v[0], v[1], v[2], v[3], v[4], v[5])),
        mix6(3, 6, 9, 12, 15, 18)
    );
    assert_eq!(
        static_call!(M5(
            black_box(255),
            black_box(65535),
            black_box(u32::MAX),
            black_box(-1),
            7
        )),
        255 + 65535 + u32::MAX as i64 - 1 + 7
    );
    assert_eq!(
        static_call!(N4(
            black_box(-1),
            black_box(-2),
            black_box(-3),
            black_box(-4)
        )),
        -10
    );
    let (a, mut b, c) = (40u64, 0u64, 2u64);
    let r = static_call!(P3(&a, &mut b, NonNull::new(&c as *const u64 as *mut u64)));
    assert_eq!(r, &mut b as *mut u64);
    assert_eq!(b, 42);
    let r = static_call!(P3(&a, &mut b, None));
    assert_eq!(unsafe { *r }, 40);
    assert!(static_call!(F2(black_box(true), black_box('é' as u32))));
    assert!(!static_call!(F2(black_box(true), black_box('e' as u32))));
    assert_eq!(static_call!(Z0()), -3);
    let mut byte = 0u8;
    let p = NonNull::from(&mut byte);
    assert_eq!(static_call!(O1(p)), Some(p));
    // a trailing comma, and an expression with side effects evaluated once
    let mut n = 0;
    let r = static_call!(ONCE({
        n += 1;
        n
    },));
    assert_eq!((n, r), (1, 11));
}

extern "C" fn plus10(x: u64) -> u64 {
    x + 10
}
define_static_call!(ONCE: extern "C" fn(u64) -> u64 = plus10);

// ---- the bytes at a site ----------------------------------------------------

/// The bytes of a function from its start.
fn code_of(f: usize, n: usize) -> Vec<u8> {
    // SAFETY: code of this process, mapped readable; read volatile (the
    // library may write it meanwhile).
    (0..n)
        .map(|i| unsafe { std::ptr::read_volatile((f + i) as *const u8) })
        .collect()
}

// An empty contribution, so that the bounds exist in the fallback too
// (where no site records anything).
core::arch::global_asm!(".pushsection sy_static_call_sites, \"awR\"", ".popsection");

unsafe extern "C" {
    // the bounds of this file's table of static call records, which the
    // per-object glue hands to the library
    static __start_sy_static_call_sites: [switchyard::sys::sy_sc_entry; 0];
    static __stop_sy_static_call_sites: [switchyard::sys::sy_sc_entry; 0];
}

/// The sites of the call whose key is at `key`, from the records (the code
/// field: relative to itself).
fn sites_of(key: *mut switchyard::sys::static_call_key) -> Vec<usize> {
    // SAFETY: the linker's bounds of the section; records of 16 bytes.
    let (start, stop) = (
        &raw const __start_sy_static_call_sites as *const switchyard::sys::sy_sc_entry,
        &raw const __stop_sy_static_call_sites as *const switchyard::sys::sy_sc_entry,
    );
    let n = (stop as usize - start as usize) / 16;
    (0..n)
        .filter_map(|i| {
            // SAFETY: inside the table; the meta a record names is a static.
            let e = unsafe { &*start.add(i) };
            (unsafe { (*e.meta).key } == key)
                .then(|| (&raw const e.code as isize + e.code as isize) as usize)
        })
        .collect()
}

/// x86-64: the 23 bytes of the site at `at`, from the arm.
fn x86_site(at: usize) -> Vec<u8> {
    code_of(at, 23)
}

/// AArch64: the site's word.
fn a64_site(at: usize) -> u32 {
    u32::from_le_bytes(code_of(at, 4).try_into().unwrap())
}

extern "C" fn w_one(x: u64) -> u64 {
    x + 1
}
extern "C" fn w_two(x: u64) -> u64 {
    x + 2
}
define_static_call!(W: extern "C" fn(u64) -> u64 = w_one);

#[inline(never)]
fn site_w(x: u64) -> u64 {
    static_call!(W(x))
}

/// What the site holds now: "call <addr>", "null", "ret0", "detour" (x86:
/// the compiled form; AArch64: a BL elsewhere).
fn site_form() -> String {
    let sites = sites_of(W.as_ptr());
    assert_eq!(sites.len(), 1, "W has one site");
    let at = sites[0];
    if cfg!(target_arch = "x86_64") {
        let s = x86_site(at);
        match (s[2], s[13], &s[18..23]) {
            (0xf7, 0xe9, [0xe8, 0, 0, 0, 0]) => "detour".into(),
            (0xc7, 0xa9, [0xe8, r @ ..]) => {
                let rel = i32::from_le_bytes(r.try_into().unwrap()) as isize;
                format!("call {:#x}", (at as isize + 23 + rel) as usize)
            }
            (0xc7, 0xa9, [0x0f, 0x1f, 0x44, 0, 0]) => "null".into(),
            (0xc7, 0xa9, [0x0f, 0x1f, 0x00, 0x31, 0xc0]) => "ret0".into(),
            _ => panic!("unexpected site bytes {s:02x?}"),
        }
    } else {
        let w = a64_site(at);
        if w == 0xd503_201f {
            return "null".into();
        }
        let imm = ((w & 0x03ff_ffff) << 6) as i32 >> 6;
        let to = (at as isize + 4 * imm as isize) as usize;
        if to == switchyard::sys::__static_call_return0 as *const () as usize {
            "ret0".into()
        } else if to == w_one as *const () as usize || to == w_two as *const () as usize {
            format!("call {to:#x}")
        } else {
            "detour".into() // the veneer (or a stub: not in this binary)
        }
    }
}

/// What a constructor of default priority saw: the site's form, and its
/// call's result.
static EARLY: std::sync::Mutex<Option<(String, u64)>> = std::sync::Mutex::new(None);

extern "C" fn early() {
    if PATCHING && std::env::var_os("SWITCHYARD_STATIC_CALL").is_none() {
        *EARLY.lock().unwrap() = Some((site_form(), site_w(1)));
    }
}

/// A constructor of default priority: it runs after the glue's
/// (.init_array.00099), which registered and patched every site first.
#[used]
#[unsafe(link_section = ".init_array")]
static EARLY_CTOR: extern "C" fn() = early;

#[test]
fn sites_are_patched_before_the_programs_constructors_run() {
    if !PATCHING || std::env::var_os("SWITCHYARD_STATIC_CALL").is_some() {
        return;
    }
    let (form, r) = EARLY.lock().unwrap().clone().expect("the constructor ran");
    // (W's target may have changed since; at start-up it was w_one)
    assert_eq!(form, format!("call {:#x}", w_one as *const () as usize));
    assert_eq!(r, 2);
}

#[test]
fn the_site_holds_the_patched_forms() {
    if !PATCHING || std::env::var_os("SWITCHYARD_STATIC_CALL").is_some() {
        return;
    }
    assert_eq!(site_w(1), 2);
    assert_eq!(
        site_form(),
        format!("call {:#x}", w_one as *const () as usize)
    );
    W.update(w_two).unwrap();
    assert_eq!(
        site_form(),
        format!("call {:#x}", w_two as *const () as usize)
    );
    assert_eq!(site_w(1), 3);
    W.update_null().unwrap();
    assert_eq!(site_form(), "null");
    W.update_ret0().unwrap();
    assert_eq!(site_form(), "ret0");
    assert_eq!(site_w(1), 0);
    W.update(w_one).unwrap();
    assert_eq!(
        site_form(),
        format!("call {:#x}", w_one as *const () as usize)
    );
    assert_eq!(site_w(1), 2);
}

/// An inline native (registered by C code, here through the -sys crate):
/// a Rust site whose target is the native's function holds its code.
#[inline(never)]
extern "C" fn times3plus1(x: u64) -> u64 {
    x.wrapping_mul(3).wrapping_add(1)
}
extern "C" fn twice(x: u64) -> u64 {
    x * 2
}
define_static_call!(NAT: extern "C" fn(u64) -> u64 = twice);

#[inline(never)]
fn site_nat(x: u64) -> u64 {
    static_call!(NAT(x))
}

#[test]
fn an_inline_native_takes_the_place_of_the_call() {
    if !PATCHING
        || !cfg!(target_arch = "x86_64")
        || std::env::var_os("SWITCHYARD_STATIC_CALL").is_some()
    {
        return;
    }
    // lea 1(%rdi,%rdi,2), %rax: 5 bytes, the room of a Rust site; it
    // changes rax only, as a native must at a site that does not restore
    // the stack pointer after its payload
    let code = [0x48u8, 0x8d, 0x44, 0x7f, 0x01];
    let f: unsafe extern "C" fn() = unsafe {
        std::mem::transmute::<extern "C" fn(u64) -> u64, unsafe extern "C" fn()>(times3plus1)
    };
    // SAFETY: code does what times3plus1 does.
    let r =
        unsafe { switchyard::sys::switchyard_static_call_native(Some(f), code.as_ptr().cast(), 5) };
    assert_eq!(r, 0);
    assert_eq!(site_nat(5), 10);
    NAT.update(times3plus1).unwrap();
    let at = sites_of(NAT.as_ptr());
    assert_eq!(at.len(), 1);
    assert_eq!(
        x86_site(at[0])[18..23],
        code,
        "the payload holds the native"
    );
    assert_eq!(site_nat(black_box(5)), 16);
    NAT.update(twice).unwrap();
    assert_eq!(x86_site(at[0])[18], 0xe8, "a call again");
    assert_eq!(site_nat(black_box(5)), 10);
}

// ---- a leaf function and the red zone -----------------------------------------

/// The stack pointer, read without moving it.
#[inline(always)]
fn sp() -> usize {
    let s: usize;
    // SAFETY: reads a register.
    unsafe {
        #[cfg(target_arch = "x86_64")]
        std::arch::asm!("mov %rsp, {}", out(reg) s, options(att_syntax, nomem, nostack, preserves_flags));
        #[cfg(target_arch = "aarch64")]
        std::arch::asm!("mov {}, sp", out(reg) s, options(nomem, nostack, preserves_flags));
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            s = 0;
        }
    }
    s
}

/// Fills its stack below the caller's stack pointer with a pattern: data a
/// caller kept in its red zone across the call would be overwritten.
extern "C" fn scribble(x: u64) -> u64 {
    let mut junk = [0xa5a5_a5a5_a5a5_a5a5u64; 64];
    black_box(&mut junk);
    x ^ junk[black_box(3)]
}
define_static_call!(S: extern "C" fn(u64) -> u64 = scribble);

/// The array's address escapes (the asm may read and write the array),
/// without a call: a function that does this and nothing else stays a
/// leaf even in a debug build.
macro_rules! escape {
    ($p:expr) => {
        // SAFETY: an empty asm! block that is told the address.
        unsafe {
            #[cfg(target_arch = "x86_64")]
            std::arch::asm!("/* {0} */", in(reg) $p, options(nostack, preserves_flags));
            #[cfg(not(target_arch = "x86_64"))]
            std::arch::asm!("/* {0} */", in(reg) $p, options(nostack, preserves_flags));
        }
    };
}

/// The control: a leaf like `leaf_site` without the site. Its array lies
/// below the stack pointer (in the red zone), which shows that the check
/// can see it.
#[inline(never)]
fn leaf_no_site(x: u64) -> (u64, bool) {
    let mut a = [
        x,
        x ^ 1,
        x ^ 2,
        x ^ 3,
        x ^ 4,
        x ^ 5,
        x ^ 6,
        x ^ 7,
        x ^ 8,
        x ^ 9,
        x ^ 10,
        x ^ 11,
    ];
    let p = &raw mut a;
    escape!(p);
    let below = (p as usize) < sp();
    (
        a[0] ^ a[1] ^ a[2] ^ a[3] ^ a[4] ^ a[5] ^ a[6] ^ a[7] ^ a[8] ^ a[9] ^ a[10] ^ a[11],
        below,
    )
}

/// The same leaf with a site (optimised, it makes no call but the site's):
/// the site's asm! block (no `nostack`) makes the compiler keep the array
/// above the stack pointer, where the target's stack cannot reach it.
#[inline(never)]
fn leaf_site(x: u64) -> (u64, bool) {
    let mut a = [
        x,
        x ^ 1,
        x ^ 2,
        x ^ 3,
        x ^ 4,
        x ^ 5,
        x ^ 6,
        x ^ 7,
        x ^ 8,
        x ^ 9,
        x ^ 10,
        x ^ 11,
    ];
    let p = &raw mut a;
    escape!(p);
    let below = (p as usize) < sp();
    let y = static_call!(S(x));
    (
        a[0] ^ a[1] ^ a[2] ^ a[3] ^ a[4] ^ a[5] ^ a[6] ^ a[7] ^ a[8] ^ a[9] ^ a[10] ^ a[11] ^ y,
        below,
    )
}

#[test]
fn a_leaf_keeps_nothing_below_the_stack_pointer_across_a_site() {
    let x = black_box(0x1234u64);
    let sum: u64 = (0..12).fold(0, |s, i| s ^ x ^ i);
    let (s, below) = leaf_no_site(x);
    assert_eq!(s, sum);
    if cfg!(target_arch = "x86_64") {
        // AArch64 Linux has no red zone: nothing to show there
        assert!(
            below,
            "control: the compiler did not put the array in the red zone"
        );
    }
    let (s, below) = leaf_site(x);
    assert!(
        !below,
        "the array is below the stack pointer across the site"
    );
    assert_eq!(
        s,
        sum ^ scribble(x),
        "the target's stack overwrote the caller's data"
    );
}

// ---- unwinding ---------------------------------------------------------------

/// A backtrace taken in the target: whether it names the function that
/// holds the site (through the site's payload call or its detour).
extern "C" fn backtrace_names_caller(_: u64) -> u64 {
    let bt = std::backtrace::Backtrace::force_capture().to_string();
    let seen = bt.contains("site_bt");
    if !seen {
        eprintln!("{bt}");
    }
    seen as u64
}
define_static_call!(BT: extern "C" fn(u64) -> u64 = backtrace_names_caller);

#[inline(never)]
fn site_bt(x: u64) -> u64 {
    black_box(static_call!(BT(x)))
}

#[test]
fn a_backtrace_from_the_target_sees_the_caller() {
    assert_eq!(site_bt(1), 1, "the backtrace lost the caller");
}

extern "C-unwind" fn may_panic(x: u64) -> u64 {
    if x == 13 {
        panic!("thirteen");
    }
    x
}
define_static_call!(U: extern "C-unwind" fn(u64) -> u64 = may_panic);

#[inline(never)]
fn site_u(x: u64) -> u64 {
    static_call!(U(x))
}

#[test]
fn a_panic_in_an_unwinding_target_is_caught() {
    unwinding_target_caught();
    if cfg!(feature = "nightly-asm-unwind") && PATCHING {
        // a patched site (may_unwind): the panic crosses the payload's
        // call above, and here the detour's (its FDE)
        assert!(
            U.info().is_some_and(|c| c.sites >= 1),
            "U has no patched site"
        );
        let out = child("unwind")
            .env("SWITCHYARD_STATIC_CALL", "detour")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("UNWIND OK"),
            "{}\n{text}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn unwinding_target_caught() {
    assert_eq!(site_u(1), 1);
    let r = std::panic::catch_unwind(|| site_u(black_box(13)));
    let msg = r.expect_err("the panic was not caught");
    assert_eq!(msg.downcast_ref::<&str>(), Some(&"thirteen"));
    // and the site works on
    assert_eq!(site_u(2), 2);
    U.update_ret0().unwrap();
    assert_eq!(site_u(13), 0);
    U.update(may_panic).unwrap();
    assert!(std::panic::catch_unwind(|| site_u(black_box(13))).is_err());
}

extern "C" fn panics(_: u64) -> u64 {
    panic!("in an extern \"C\" target");
}
define_static_call!(PC: extern "C" fn(u64) -> u64 = panics);

// ---- children -----------------------------------------------------------------

/// This test binary, run as a child doing `what` (through the emulator of
/// `SY_TEST_EMULATOR` in a cross build, as tests/cli.rs does).
fn child(what: &str) -> Command {
    let mut c = switchyard_testsupport::command(std::env::current_exe().unwrap());
    c.args(["child_mode", "--exact", "--nocapture", "--test-threads=1"])
        .env("SY_SC_CHILD", what);
    c
}

/// What a child does; a no-op in the normal run.
#[test]
fn child_mode() {
    let Ok(what) = std::env::var("SY_SC_CHILD") else {
        return;
    };
    match what.as_str() {
        "panic" => {
            static_call!(PC(1));
        }
        "detour" => {
            // every call right, the site in its compiled form throughout
            assert_eq!(site_form(), "detour");
            assert_eq!(site_w(1), 2);
            W.update(w_two).unwrap();
            assert_eq!(site_w(1), 3);
            W.update_ret0().unwrap();
            assert_eq!(site_w(1), 0);
            W.update_null().unwrap();
            let _ = site_w(1);
            W.update(w_one).unwrap();
            assert_eq!(site_w(1), 2);
            assert_eq!(site_form(), "detour");
            assert_eq!(
                site_bt(1),
                1,
                "the backtrace through the detour lost the caller"
            );
            println!("DETOUR OK");
        }
        "unwind" => {
            unwinding_target_caught();
            println!("UNWIND OK");
        }
        _ => panic!("unknown child {what}"),
    }
}

#[test]
fn a_panic_in_an_extern_c_target_aborts() {
    let out = child("panic").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the child survived: {err}");
    use std::os::unix::process::ExitStatusExt;
    // SIGABRT (6); under an emulator the status may be its own
    if std::env::var_os("SY_TEST_EMULATOR").is_none() {
        assert_eq!(out.status.signal(), Some(6), "{err}");
    }
    assert!(
        err.contains("panic in a function that cannot unwind"),
        "{err}"
    );
}

#[test]
fn detour_mode_calls_every_target_through_the_compiled_site() {
    if !PATCHING {
        return;
    }
    let out = child("detour")
        .env("SWITCHYARD_STATIC_CALL", "detour")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("DETOUR OK"),
        "{}\n{text}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---- listing -----------------------------------------------------------------

#[test]
fn the_library_lists_rust_static_calls() {
    if !PATCHING {
        assert!(static_calls().is_empty());
        return;
    }
    let _ = (site_w(0), site_v(0));
    let all = static_calls();
    let w = all
        .iter()
        .find(|c| c.name == "static_call::W")
        .expect("W listed");
    assert_eq!(w.sites, 1);
    assert_eq!(w.addr, W.as_ptr() as usize);
    let v = all
        .iter()
        .find(|c| c.name == "static_call::V")
        .expect("V listed");
    assert!(v.sites >= 1);
}

fn tool() -> Option<PathBuf> {
    switchyard_testsupport::tool()
}

#[test]
fn the_tool_lists_rust_static_calls_in_the_file() {
    let Some(tool) = tool() else { return };
    if !PATCHING {
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(&tool)
        .args(["list", exe.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}{}",
        text,
        String::from_utf8_lossy(&out.stderr)
    );
    for want in [
        "static_call::A",
        "static_call::W",
        "static_call::V",
        "site_w",
    ] {
        assert!(text.contains(want), "no '{want}' in:\n{text}");
    }
    for l in text.lines().filter(|l| l.contains("static_call::")) {
        assert!(!l.contains("_ZN") && !l.contains("17h"), "{l}");
    }
}
