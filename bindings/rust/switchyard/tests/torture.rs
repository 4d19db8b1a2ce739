// SPDX-License-Identifier: MIT
//! Flipping a key while threads run its sites: worker threads (half of
//! them with every signal blocked) run two sites of a key in a loop and
//! count each pass, while another thread flips the key a few thousand
//! times. Every pass is accounted for, every pass made while no change was
//! in progress saw the key's state, and after the last flip every thread
//! sees the final state.
//!
//! The negative control: the same site and record in a section the
//! library never reads, so never registered. Its threads run beside the
//! others, checked the same way: it must NOT follow the flips, which shows
//! that the checks can see a stale site.

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use switchyard::{PATCHING, define_static_key_false, static_branch_likely, static_branch_unlikely};

define_static_key_false!(T);

/// Even: no change in progress; odd: a flip is being made. The state after
/// flip i (seq 2i + 2): enabled for even i.
static SEQ: AtomicU64 = AtomicU64::new(0);
static STOP: AtomicBool = AtomicBool::new(false);
/// Per worker: the last even SEQ at which it checked a pass. Every 64
/// flips, in each state, the flipper waits for every worker to check one
/// (200 ms at most): with 2 CPUs and 7 threads a worker could otherwise
/// sleep through all the short windows of one state.
static SEEN: [AtomicU64; 6] = [const { AtomicU64::new(0) }; 6];

fn expected(seq: u64) -> bool {
    (seq / 2) % 2 == 1
}

#[inline(never)]
fn site_unlikely() -> bool {
    static_branch_unlikely!(T)
}

#[inline(never)]
fn site_likely() -> bool {
    static_branch_likely!(T)
}

/// A likely site of T whose record sits in a section nothing registers:
/// it keeps the jump the compiler emitted, i.e. says false whatever T is.
#[inline(never)]
fn site_unregistered() -> bool {
    'sy: {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as the crate's own site (a jump, the flags clobbered).
        unsafe {
            std::arch::asm!(
                "2: jmp {l}",
                ".pushsection sy_test_unregistered, \"aw?R\"",
                ".balign 8",
                ".long 2b - ., {l} - .",
                ".quad {k} + 1",
                ".popsection",
                l = label { break 'sy false; },
                k = sym T,
                options(att_syntax, nomem, nostack),
            );
        }
        #[cfg(target_arch = "aarch64")]
        // SAFETY: as the crate's own site.
        unsafe {
            std::arch::asm!(
                "2: b {l}",
                ".pushsection sy_test_unregistered, \"aw?R\"",
                ".balign 8",
                ".long 2b - ., {l} - .",
                ".quad {k} + 1",
                ".popsection",
                l = label { break 'sy false; },
                k = sym T,
                options(nomem, nostack, preserves_flags),
            );
        }
        true
    }
}

#[derive(Debug, Default)]
struct Tally {
    iters: u64,
    taken: u64,
    not_taken: u64,
    checked: [u64; 2], // passes checked against the state, by state
    wrong: u64,        // ... that did not match it
    last: bool,        // the site after the last flip
}

fn run(me: usize, block: bool, control: bool, ready: Arc<AtomicU64>) -> Tally {
    if block {
        switchyard_testsupport::block_all_signals();
    }
    // through a pointer the compiler cannot see into: the loads of SEQ
    // around the call stay on their side of the site
    let site: fn() -> bool = black_box(if control {
        site_unregistered
    } else {
        site_unlikely
    });
    let other: fn() -> bool = black_box(if control {
        site_unregistered
    } else {
        site_likely
    });
    let mut t = Tally::default();
    ready.fetch_add(1, Ordering::Release);
    while !STOP.load(Ordering::Acquire) {
        let s1 = SEQ.load(Ordering::Acquire);
        let a = site();
        let b = other();
        let s2 = SEQ.load(Ordering::Acquire);
        t.iters += 1;
        if a {
            t.taken += 1;
        } else {
            t.not_taken += 1;
        }
        if s1 == s2 && s1.is_multiple_of(2) {
            let want = expected(s1);
            t.checked[want as usize] += 1;
            SEEN[me].store(s1, Ordering::Relaxed);
            if a != want || b != want {
                t.wrong += 1;
            }
        }
    }
    // STOP was set after the last flip returned: its sites are written
    t.last = site() && other();
    t
}

#[test]
fn threads_see_every_flip_and_the_control_does_not() {
    if !PATCHING {
        return;
    }
    let flips: u64 = std::env::var("SY_TORTURE_FLIPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3001)
        | 1; // odd: the final state is enabled, the initial one disabled
    let ready = Arc::new(AtomicU64::new(0));
    // (block signals, control)
    let kinds = [
        (false, false),
        (true, false),
        (false, false),
        (true, false),
        (false, true),
        (true, true),
    ];
    let workers: Vec<_> = kinds
        .iter()
        .enumerate()
        .map(|(me, &(block, control))| {
            let r = ready.clone();
            (
                block,
                control,
                thread::spawn(move || run(me, block, control, r)),
            )
        })
        .collect();
    while ready.load(Ordering::Acquire) < kinds.len() as u64 {
        thread::yield_now();
    }
    let t0 = std::time::Instant::now();
    for i in 0..flips {
        SEQ.fetch_add(1, Ordering::AcqRel);
        if i % 2 == 0 {
            T.enable().unwrap();
        } else {
            T.disable().unwrap();
        }
        let s = SEQ.fetch_add(1, Ordering::AcqRel) + 1;
        let w0 = std::time::Instant::now();
        while i % 64 < 2
            && kinds
                .iter()
                .enumerate()
                .any(|(i, k)| !k.1 && SEEN[i].load(Ordering::Relaxed) < s)
            && w0.elapsed() < std::time::Duration::from_millis(200)
        {
            thread::yield_now();
        }
    }
    let took = t0.elapsed();
    assert!(T.is_enabled());
    STOP.store(true, Ordering::Release);
    let mut control_wrong = 0;
    for (block, control, h) in workers {
        let t = h.join().unwrap();
        eprintln!(
            "{} thread, signals {}: {} passes, {} taken, {} checked ({} off, {} on), {} wrong, last {}",
            if control { "control" } else { "worker" },
            if block { "blocked" } else { "open" },
            t.iters,
            t.taken,
            t.checked[0] + t.checked[1],
            t.checked[0],
            t.checked[1],
            t.wrong,
            t.last
        );
        assert_eq!(t.taken + t.not_taken, t.iters, "every pass accounted for");
        if control {
            // never registered: the emitted jump (false) throughout
            assert_eq!(t.taken, 0);
            assert!(!t.last, "the control followed the last flip");
            control_wrong += t.wrong;
        } else {
            assert_eq!(t.wrong, 0, "a pass disagreed with the key's state");
            assert!(
                t.last,
                "after the last flip the thread still sees the old state"
            );
            assert!(
                t.checked[0] > 0 && t.checked[1] > 0,
                "the thread saw both states: {t:?}"
            );
        }
    }
    assert!(
        control_wrong > 0,
        "the checks could not see the stale control site"
    );
    eprintln!("{flips} flips in {took:?} ({:?} each)", took / flips as u32);
}
