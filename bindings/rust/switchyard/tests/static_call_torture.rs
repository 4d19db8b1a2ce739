// SPDX-License-Identifier: MIT
//! Re-targeting a static call while threads call through its site: worker
//! threads (half of them with every signal blocked) call through one site
//! in a loop, while another thread updates the call a few thousand times
//! through four functions, RET0 and NULL. Every pass is accounted for
//! exactly: it ran one target once (the target stamps the pass and counts
//! itself, and the site returns that target's value) or, under RET0 or
//! NULL, none; and after the last update every thread calls the final
//! target.
//!
//! The negative control, in a child process: the same workers while the
//! site's payload is rewritten without the library's protocol (byte by
//! byte through /proc/self/mem, the guard left open), between a call and
//! NULL's NOPs. It must fail (a crash, a hang, or a pass the checks
//! reject), which shows that the checks and the load can see a torn site.
//!
//! x86-64 also: an inline native that pushes (`push %rdi; mfence; pop
//! %rax`, the identity), at sites that threads run while the call is
//! updated to RET0 and back and the threads get signals: a thread
//! interrupted between the push and the pop restarts in the detour with
//! rsp 8 lower, which the site's restore of rsp repairs.
//! Its control, in a child: the same at sites without the restore (no
//! step at all) must crash or compute wrong values.

#![cfg_attr(feature = "nightly-asm-unwind", feature(asm_unwind))]

use std::hint::black_box;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};
use switchyard::static_call::Target;
use switchyard::{PATCHING, define_static_call, static_call};

/// A worker's own record, written by the targets it calls (no other thread
/// touches it).
#[repr(C)]
#[derive(Debug, Default)]
struct Ctx {
    counts: [u64; 4],
    last_seq: u64,
    last_i: u64,
}

macro_rules! target {
    ($name:ident, $i:literal) => {
        extern "C" fn $name(ctx: *mut Ctx, seq: u64) -> u64 {
            // SAFETY: the worker passes its own Ctx.
            let c = unsafe { &mut *ctx };
            c.counts[$i] += 1;
            c.last_seq = seq;
            c.last_i = $i;
            $i + 1
        }
    };
}
target!(t0, 0);
target!(t1, 1);
target!(t2, 2);
target!(t3, 3);

type Fun = extern "C" fn(*mut Ctx, u64) -> u64;

define_static_call!(TC: Fun = t0);
define_static_call!(TX: Fun = t0);

#[inline(never)]
fn site(ctx: *mut Ctx, seq: u64) -> u64 {
    static_call!(TC(ctx, seq))
}

/// The control's site (its own call, so that the rewrite touches nothing
/// the main test runs).
#[inline(never)]
fn site_x(ctx: *mut Ctx, seq: u64) -> u64 {
    static_call!(TX(ctx, seq))
}

#[derive(Debug, Default)]
struct Tally {
    passes: u64,
    calls: u64,      // passes that ran a target (stamped)
    no_call: u64,    // passes that ran none (RET0, NULL)
    ret0: u64,       // ... of which returned 0
    wrong: u64,      // a pass the checks reject
    ctx: Ctx,        // what the targets counted
    final_ok: bool,  // after the last update, every pass called t0
    seen: [bool; 4], // targets it saw
}

static STOP: AtomicBool = AtomicBool::new(false);

fn work(
    block: bool,
    site: fn(*mut Ctx, u64) -> u64,
    ready: Arc<AtomicU64>,
    stop: &AtomicBool,
) -> Tally {
    if block {
        switchyard_testsupport::block_all_signals();
    }
    let site = black_box(site);
    let mut t = Tally::default();
    let ctx: *mut Ctx = &mut t.ctx;
    let mut seq = 0u64;
    ready.fetch_add(1, Ordering::Release);
    let mut pass = |t: &mut Tally, want: Option<u64>| -> bool {
        seq += 1;
        // SAFETY: ctx is this thread's, and no target runs now.
        let before: u64 = unsafe { (*ctx).counts.iter().sum() };
        let r = site(ctx, seq);
        // SAFETY: as above.
        let (after, stamped, i): (u64, bool, u64) = unsafe {
            (
                (*ctx).counts.iter().sum(),
                (*ctx).last_seq == seq,
                (*ctx).last_i,
            )
        };
        t.passes += 1;
        let ok = if stamped {
            t.calls += 1;
            t.seen[i as usize] = true;
            // one target, once, and the site returned its value
            after == before + 1 && r == i + 1 && want.is_none_or(|w| w == i)
        } else {
            t.no_call += 1;
            t.ret0 += (r == 0) as u64;
            after == before && want.is_none()
        };
        if !ok {
            t.wrong += 1;
            if t.wrong <= 3 {
                eprintln!(
                    "wrong pass {seq}: returned {r}, stamped {stamped}, target {i}, count +{}",
                    after - before
                );
            }
        }
        ok
    };
    while !stop.load(Ordering::Acquire) {
        pass(&mut t, None);
    }
    // the updater set STOP after its last update returned: t0 everywhere
    t.final_ok = (0..1000).all(|_| pass(&mut t, Some(0)));
    t
}

/// The updates, in a cycle: functions, RET0, NULL.
fn schedule(n: u64) -> Target<Fun> {
    match n % 6 {
        0 => Target::Func(t1),
        1 => Target::Func(t2),
        2 => Target::Ret0,
        3 => Target::Func(t3),
        4 => Target::Null,
        _ => Target::Func(t0),
    }
}

#[test]
fn every_call_is_accounted_for_while_the_target_changes() {
    let updates: u64 = std::env::var("SY_TORTURE_FLIPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let blocks = [false, true, false, true];
    let ready = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = blocks
        .iter()
        .map(|&b| {
            let r = ready.clone();
            (b, thread::spawn(move || work(b, site, r, &STOP)))
        })
        .collect();
    while ready.load(Ordering::Acquire) < blocks.len() as u64 {
        thread::yield_now();
    }
    let t0_ = Instant::now();
    for n in 0..updates {
        TC.set(schedule(n)).unwrap();
        // let the workers run a little under each target
        for _ in 0..300 {
            std::hint::spin_loop();
        }
    }
    TC.update(t0).unwrap();
    let took = t0_.elapsed();
    STOP.store(true, Ordering::Release);
    let mut seen = [false; 4];
    let (mut calls, mut no_call) = (0, 0);
    for (b, h) in workers {
        let t = h.join().unwrap();
        eprintln!(
            "worker, signals {}: {} passes, {} calls {:?}, {} without a call ({} returned 0), {} wrong",
            if b { "blocked" } else { "open" },
            t.passes,
            t.calls,
            t.ctx.counts,
            t.no_call,
            t.ret0,
            t.wrong
        );
        assert_eq!(
            t.wrong, 0,
            "a pass ran no target, two, or returned another's value"
        );
        assert_eq!(t.calls + t.no_call, t.passes, "every pass accounted for");
        assert_eq!(
            t.ctx.counts.iter().sum::<u64>(),
            t.calls,
            "each call ran one target once"
        );
        assert!(
            t.final_ok,
            "after the last update the thread still reached another target"
        );
        for (s, t) in seen.iter_mut().zip(t.seen) {
            *s |= t;
        }
        calls += t.calls;
        no_call += t.no_call;
    }
    assert!(
        seen.iter().all(|&s| s),
        "the workers did not see every target: {seen:?}"
    );
    assert!(calls > 0 && no_call > 0, "no pass under RET0 or NULL");
    if PATCHING {
        let c = TC.info().expect("TC listed");
        assert_eq!(c.sites, 1);
    }
    eprintln!(
        "{updates} updates in {took:?} ({:?} each)",
        took / updates as u32
    );
}

// ---- the negative control ------------------------------------------------------

// An empty contribution, so that the bounds exist in the fallback too.
core::arch::global_asm!(".pushsection sy_static_call_sites, \"awR\"", ".popsection");

unsafe extern "C" {
    // this file's table of static call records
    static __start_sy_static_call_sites: [switchyard::sys::sy_sc_entry; 0];
    static __stop_sy_static_call_sites: [switchyard::sys::sy_sc_entry; 0];
}

/// The one site of the call whose key is `key` (its record's code: the
/// arm on x86-64).
fn sites_of_key(key: *mut switchyard::sys::static_call_key) -> usize {
    // SAFETY: the linker's bounds of the section; records of 16 bytes, whose
    // metas are statics.
    unsafe {
        let start = &raw const __start_sy_static_call_sites as *const switchyard::sys::sy_sc_entry;
        let stop = &raw const __stop_sy_static_call_sites as *const switchyard::sys::sy_sc_entry;
        let mut sites = (0..(stop as usize - start as usize) / 16)
            .map(|i| &*start.add(i))
            .filter(|e| (*e.meta).key == key)
            .map(|e| (&raw const e.code as isize + e.code as isize) as usize);
        let at = sites.next().expect("the call's site");
        assert!(sites.next().is_none(), "the call has one site");
        at
    }
}

/// x86-64: the address of the payload of TX's site (its record's code is
/// the arm; the payload is 18 bytes on), checked to be armed and open.
fn payload_of_tx() -> usize {
    let at = sites_of_key(TX.as_ptr());
    // SAFETY: code of this process, mapped readable.
    let b: Vec<u8> = (0..23)
        .map(|i| unsafe { std::ptr::read_volatile((at + i) as *const u8) })
        .collect();
    assert!(
        b[..5] == [0x64, 0x48, 0xc7, 0x04, 0x25] && b[13] == 0xa9 && b[18] == 0xe8,
        "{b:02x?}"
    );
    at + 18
}

/// In the child: workers on site_x while its payload is rewritten byte by
/// byte, last byte first, between the call the library wrote and NULL's
/// NOPs, the guard left open. Exits 0 ("CLEAN") if every pass still
/// checked out, 1 if not; a torn call may also kill it or hang it.
fn rogue() -> ! {
    use std::os::unix::fs::FileExt;
    let stop = Box::leak(Box::new(AtomicBool::new(false)));
    let ready = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = [false, true]
        .iter()
        .map(|&b| {
            let r = ready.clone();
            let s: &'static AtomicBool = stop;
            thread::spawn(move || work(b, site_x, r, s))
        })
        .collect();
    while ready.load(Ordering::Acquire) < 2 {
        thread::yield_now();
    }
    let at = payload_of_tx();
    let mem = std::fs::OpenOptions::new()
        .write(true)
        .open("/proc/self/mem")
        .unwrap();
    // SAFETY: reads the payload.
    let call: Vec<u8> = (0..5)
        .map(|i| unsafe { std::ptr::read_volatile((at + i) as *const u8) })
        .collect();
    let nops = [0x0f, 0x1f, 0x44, 0x00, 0x00];
    use std::io::Write;
    println!("REWRITING");
    std::io::stdout().flush().unwrap();
    let t0 = Instant::now();
    'out: for round in 0.. {
        let to = if round % 2 == 0 { &nops[..] } else { &call[..] };
        for i in (0..5).rev() {
            mem.write_at(&to[i..i + 1], (at + i) as u64).unwrap();
            thread::sleep(Duration::from_micros(200));
            if t0.elapsed() > Duration::from_secs(3) {
                break 'out;
            }
        }
    }
    mem.write_at(&call, at as u64).unwrap();
    stop.store(true, Ordering::Release);
    let wrong: u64 = workers.into_iter().map(|h| h.join().unwrap().wrong).sum();
    if wrong == 0 {
        println!("CLEAN");
        std::process::exit(0);
    }
    println!("WRONG {wrong}");
    std::process::exit(1);
}

// ---- a native that pushes ---------------------------------------------------------

extern "C" fn ident(x: u64) -> u64 {
    x
}

define_static_call!(NP: extern "C" fn(u64) -> u64 = ident);
define_static_call!(NP_BARE: extern "C" fn(u64) -> u64 = ident);

/// The crate's site.
#[inline(never)]
fn site_np(x: u64) -> u64 {
    static_call!(NP(x))
}

/// The control's site: the same with no step at all (no restore of rsp).
#[inline(never)]
fn site_np_bare(x: u64) -> u64 {
    #[cfg(all(target_arch = "x86_64", not(feature = "no-patching")))]
    {
        let args = switchyard::static_call::__private::args(&NP_BARE, (x,));
        switchyard::__sy_sc_x86!(none [] [] [NP_BARE] args "rdi" 0)
    }
    #[cfg(not(all(target_arch = "x86_64", not(feature = "no-patching"))))]
    static_call!(NP_BARE(x))
}

/// Registers `push %rdi; mfence; pop %rax` as ident's inline native (the
/// fence, tens of cycles, widens the window between the push and the pop).
fn register_pushing_native() {
    let code = [0x57u8, 0x0f, 0xae, 0xf0, 0x58];
    // SAFETY: a function pointer, erased as the library takes it.
    let f: unsafe extern "C" fn() =
        unsafe { std::mem::transmute::<extern "C" fn(u64) -> u64, unsafe extern "C" fn()>(ident) };
    // SAFETY: the code computes what ident does; it may push at an
    // ordinary site (static_call.h).
    let r = unsafe {
        switchyard::sys::switchyard_static_call_native(Some(f), code.as_ptr().cast(), code.len())
    };
    assert!(r == 0 || r == -17, "switchyard_static_call_native: {r}"); // EEXIST: done
}

const SIGUSR1: i32 = 10;
unsafe extern "C" {
    fn signal(sig: i32, handler: extern "C" fn(i32)) -> usize;
    fn pthread_kill(thread: usize, sig: i32) -> i32;
}

extern "C" fn on_usr1(_: i32) {}

/// Workers (half with every signal blocked) run `site` with ever new
/// arguments while the call `key` goes to RET0 and back `updates` times
/// (and for `secs` seconds at least),
/// and another thread sends the open workers SIGUSR1 as fast as it can
/// (each signal that finds a worker inside a site sends it to the detour):
/// (passes, passes whose result was neither the argument nor 0).
fn run_native(
    site: fn(u64) -> u64,
    key: &'static switchyard::StaticCall<extern "C" fn(u64) -> u64>,
    updates: u64,
    secs: f64,
) -> (u64, u64) {
    use std::os::unix::thread::JoinHandleExt;
    register_pushing_native();
    key.update(ident).unwrap();
    // SAFETY: a handler that does nothing.
    unsafe { signal(SIGUSR1, on_usr1) };
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = [false, true, false, true]
        .into_iter()
        .map(|b| {
            let stop = stop.clone();
            let h = thread::spawn(move || {
                if b {
                    switchyard_testsupport::block_all_signals();
                }
                let site = black_box(site);
                let (mut passes, mut wrong) = (0u64, 0u64);
                let mut x = 1u64;
                while !stop.load(Ordering::Relaxed) {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                    let r = site(x);
                    passes += 1;
                    wrong += (r != x && r != 0) as u64;
                }
                (passes, wrong)
            });
            (b, h)
        })
        .collect();
    let open: Vec<usize> = workers
        .iter()
        .filter(|(b, _)| !b)
        .map(|(_, h)| h.as_pthread_t() as usize)
        .collect();
    let kicking = Arc::new(AtomicBool::new(true));
    let k = kicking.clone();
    let kicker = thread::spawn(move || {
        let mut sent = 0u64;
        while k.load(Ordering::Relaxed) {
            for &t in &open {
                // SAFETY: a live thread (joined after the kicker).
                unsafe { pthread_kill(t, SIGUSR1) };
                sent += 1;
            }
        }
        sent
    });
    let start = Instant::now();
    let mut n = 0;
    while n < updates || start.elapsed().as_secs_f64() < secs {
        if n % 2 == 0 {
            key.update_ret0()
        } else {
            key.update(ident)
        }
        .unwrap();
        for _ in 0..300 {
            std::hint::spin_loop();
        }
        n += 1;
    }
    key.update(ident).unwrap();
    kicking.store(false, Ordering::Relaxed);
    let sent = kicker.join().unwrap();
    stop.store(true, Ordering::Relaxed);
    let r = workers
        .into_iter()
        .map(|(_, h)| h.join().unwrap())
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    eprintln!("{n} updates, {sent} signals, {} passes, {} wrong", r.0, r.1);
    r
}

#[test]
fn an_interrupted_pushing_native_leaves_the_stack_pointer_right() {
    if !PATCHING || !cfg!(target_arch = "x86_64") {
        return;
    }
    let (passes, wrong) = run_native(site_np, &NP, 3000, 1.0);
    eprintln!("pushing native: {passes} passes, {wrong} wrong");
    assert_eq!(wrong, 0);
    // the native is in place at the site now
    assert_eq!(site_np(7), 7);
    let at = sites_of_key(NP.as_ptr());
    // SAFETY: the site's code, mapped readable.
    let b: Vec<u8> = (0..23)
        .map(|i| unsafe { std::ptr::read_volatile((at + i) as *const u8) })
        .collect();
    eprintln!("site bytes {b:02x?}");
    assert_eq!(
        b[18..23],
        [0x57, 0x0f, 0xae, 0xf0, 0x58],
        "the payload holds the native"
    );
}

#[test]
fn control_without_the_restore_of_rsp_a_pushing_native_breaks() {
    if !PATCHING || !cfg!(target_arch = "x86_64") || std::env::var_os("SY_TEST_EMULATOR").is_some()
    {
        eprintln!("SKIP: the control's site is x86-64's");
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["child_mode", "--exact", "--nocapture", "--test-threads=1"])
        .env("SY_SC_TORTURE_CHILD", "bare")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!(
        "control: {}: {}",
        out.status,
        text.trim().lines().last().unwrap_or("")
    );
    use std::os::unix::process::ExitStatusExt;
    let crashed = out.status.signal().is_some();
    let caught = out.status.code() == Some(1) && text.contains("WRONG");
    assert!(text.contains("STARTED"), "the child failed before the run");
    assert!(
        crashed || caught,
        "no pass saw the stack pointer 8 bytes off: {}",
        out.status
    );
}

/// What a child does; a no-op in the normal run.
#[test]
fn child_mode() {
    match std::env::var("SY_SC_TORTURE_CHILD").as_deref() {
        Ok("bare") => {
            use std::io::Write;
            println!("STARTED");
            std::io::stdout().flush().unwrap();
            let (passes, wrong) = run_native(site_np_bare, &NP_BARE, 3000, 10.0);
            println!("{passes} passes");
            if wrong > 0 {
                println!("WRONG {wrong}");
                std::process::exit(1);
            }
            println!("CLEAN");
            std::process::exit(0);
        }
        Ok(_) => rogue(),
        Err(_) => {}
    }
}

#[test]
fn control_a_rewrite_without_the_protocol_is_caught() {
    if !PATCHING || !cfg!(target_arch = "x86_64") || std::env::var_os("SY_TEST_EMULATOR").is_some()
    {
        // an emulator does not see code written through /proc/self/mem
        eprintln!("SKIP: the control rewrites x86-64 code natively");
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let mut c = Command::new(exe)
        .args(["child_mode", "--exact", "--nocapture", "--test-threads=1"])
        .env("SY_SC_TORTURE_CHILD", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = c.try_wait().unwrap() {
            break Some(s);
        }
        if t0.elapsed() > Duration::from_secs(30) {
            let _ = c.kill();
            let _ = c.wait();
            break None; // a torn call sent a worker into a loop: caught too
        }
        thread::sleep(Duration::from_millis(20));
    };
    let out = c.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!(
        "control: {status:?}: {}{}",
        text.trim(),
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .take(4)
            .collect::<Vec<_>>()
            .join(" / ")
    );
    assert!(
        text.contains("REWRITING"),
        "the child failed before the rewrite"
    );
    use std::os::unix::process::ExitStatusExt;
    match status {
        None => {}                                                     // a hang
        Some(s) if s.signal().is_some() => {}                          // a crash
        Some(s) if s.code() == Some(1) && text.contains("WRONG") => {} // the checks
        Some(s) if s.success() => {
            panic!("the unprotected rewrite went unnoticed: the torture cannot see a torn site")
        }
        Some(s) => panic!("the child failed otherwise: {s}"),
    }
}
