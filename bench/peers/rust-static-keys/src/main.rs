// SPDX-License-Identifier: MIT
//! Peer benchmark for switchyard's bench/peers_flip.c: latency of ONE
//! enable + ONE disable of a static key with 1, 100, 1,000 and 10,000 sites,
//! using the Rust crate `static-keys` 0.8.2, single-threaded only (the
//! crate documents `enable`/`disable` as unsound with other threads running).
//!
//! API used (static-keys 0.8.2):
//!   define_static_key_false!(K)      - a key, initially false (in build.rs output)
//!   static_branch_unlikely!(K)       - a site: 5-byte NOP, patched to JMP
//!   static_keys::global_init()       - once, before any enable/disable
//!   unsafe { K.enable() } / unsafe { K.disable() }
//!   static_keys::jump_entries_count() - number of entries in __static_keys
//!
//! Protocol: warm-up of a few enable/disable pairs per key, then rounds in
//! which the four keys take turns (interleaved). One sample is the time of
//! `enable()` plus the time of `disable()` (std::time::Instant, ns); between
//! the two, and after the disable, the key's site functions run once,
//! untimed, to check that exactly N sites (then 0) take the enabled branch.
//!
//! stdout: one JSON object per key, one per line. Everything else: stderr.
//! Usage: sy-bench-rust-static-keys [SAMPLES [THREADS]]   (default 201, 0)
//! Built with `--no-default-features --features switchyard`, the same
//! program measures switchyard's Rust crate (its compat names), and
//! THREADS threads may run the sites while the keys flip.

#[cfg(all(feature = "upstream", feature = "switchyard"))]
compile_error!("build with one of the features upstream (default) and switchyard");
// switchyard's crate under the other crate's name: the code below is the
// same for both
#[cfg(feature = "switchyard")]
use switchyard::compat as static_keys;
use static_keys::{define_static_key_false, static_branch_unlikely, StaticFalseKey};
use std::time::{Duration, Instant};

/// A key of the benchmark: its site count, the key, and the functions that
/// hold its sites (each returns how many of its sites took the enabled path).
type KeySites = (usize, &'static StaticFalseKey, &'static [fn() -> usize]);

// K1, K100, K1000, K10000, their site functions, and `KEYS: [KeySites; 4]`.
include!(concat!(env!("OUT_DIR"), "/sites.rs"));

#[cfg(not(feature = "switchyard"))]
const IMPL: &str = "rust static-keys 0.8.2";
#[cfg(feature = "switchyard")]
const IMPL: &str = "rust switchyard";
/// Warm-up enable/disable pairs per key.
const WARMUP: usize = 3;
/// A single flip slower than this makes the key "slow": fewer samples.
const SLOW_FLIP: Duration = Duration::from_millis(50);
/// Samples for a slow key (further reduced if the budget demands it).
const SLOW_SAMPLES: usize = 51;
/// Rough budget for the measured rounds, to stay under ~2 minutes in total.
const BUDGET: Duration = Duration::from_secs(100);

/// Runs every site of a key once; returns how many took the enabled branch.
fn run_sites(fns: &[fn() -> usize]) -> usize {
    fns.iter().map(|f| f()).sum()
}

/// Panics unless exactly `want` sites of the key take the enabled branch.
fn check(n: usize, fns: &[fn() -> usize], want: usize, after: &str) {
    let got = run_sites(fns);
    assert_eq!(
        got, want,
        "key with {n} sites: {got} sites enabled after {after}, want {want}"
    );
}

/// One sample: timed enable, untimed check, timed disable, untimed check.
/// Returns (enable time, disable time).
#[cfg(not(feature = "switchyard"))]
fn flip_pair(n: usize, key: &StaticFalseKey, fns: &[fn() -> usize]) -> (Duration, Duration) {
    let t0 = Instant::now();
    // SAFETY: global_init() has run and this program is single-threaded.
    unsafe { key.enable() };
    let t_en = t0.elapsed();
    check(n, fns, n, "enable");

    let t1 = Instant::now();
    // SAFETY: as above.
    unsafe { key.disable() };
    let t_dis = t1.elapsed();
    check(n, fns, 0, "disable");
    (t_en, t_dis)
}

/// With switchyard's crate, timed as bench/peers_flip.c times the C
/// library, against which the suite sets it: enable and disable back to
/// back in one interval (returned as the enable's, the disable's 0). The
/// sites are checked apart, untimed, in the warm-up and after the run
/// (`verify`): a check between the two calls runs the code just written,
/// and the disable then found it in the state that left (0.4-0.6 us more a
/// pair than C's protocol at one site, AMD EPYC 26/2).
#[cfg(feature = "switchyard")]
fn flip_pair(_n: usize, key: &StaticFalseKey, _fns: &[fn() -> usize]) -> (Duration, Duration) {
    let t0 = Instant::now();
    // SAFETY: no requirement (the compat names keep `unsafe fn`).
    unsafe {
        key.enable();
        key.disable();
    }
    (t0.elapsed(), Duration::ZERO)
}

/// Untimed: enable, every site jumps; disable, none does.
fn verify(n: usize, key: &StaticFalseKey, fns: &[fn() -> usize]) {
    // SAFETY: as in flip_pair().
    unsafe { key.enable() };
    check(n, fns, n, "enable");
    // SAFETY: as above.
    unsafe { key.disable() };
    check(n, fns, 0, "disable");
}

fn main() {
    let samples: usize = match std::env::args().nth(1) {
        Some(s) => s.parse().expect("SAMPLES must be a positive integer"),
        None => 201,
    };
    assert!(samples > 0, "SAMPLES must be a positive integer");
    // THREADS running every site of every key in a loop during the flips
    // (switchyard's crate only: the other crate's flips are unsafe then)
    let threads: usize = match std::env::args().nth(2) {
        Some(s) => s.parse().expect("THREADS must be a number"),
        None => 0,
    };
    assert!(
        threads == 0 || cfg!(feature = "switchyard"),
        "THREADS > 0: static-keys documents enable/disable as unsafe with other threads running"
    );

    let t_init = Instant::now();
    static_keys::global_init();
    let t_init = t_init.elapsed();

    // Guard against the compiler folding sites together, which the branch
    // check alone cannot see (a merged function called 10 times still
    // counts 10x its sites): every site function must be a distinct
    // function, and the __static_keys section must hold an entry for every
    // generated site (plus the crate's own dummy entries).
    let mut addrs: Vec<usize> = KEYS
        .iter()
        .flat_map(|k| k.2.iter().map(|&f| f as usize))
        .collect();
    let nfns = addrs.len();
    addrs.sort_unstable();
    addrs.dedup();
    assert_eq!(
        addrs.len(),
        nfns,
        "site functions were merged by the compiler"
    );
    let sites: usize = KEYS.iter().map(|k| k.0).sum();
    let entries = static_keys::jump_entries_count();
    assert!(
        entries >= sites,
        "{entries} jump entries for {sites} sites: sites were merged"
    );
    eprintln!(
        "global_init: {t_init:?}; {entries} jump entries for {sites} generated sites \
         in {nfns} distinct functions"
    );

    // Sanity: everything starts disabled.
    for &(n, key, fns) in &KEYS {
        assert!(!key.is_enabled());
        check(n, fns, 0, "start");
    }

    // Warm-up; keep the slowest flip and slowest pair (incl. checks) per key.
    let mut slowest_flip = [Duration::ZERO; 4];
    let mut pair_cost = [Duration::ZERO; 4];
    for _ in 0..WARMUP {
        for (i, &(n, key, fns)) in KEYS.iter().enumerate() {
            let t = Instant::now();
            verify(n, key, fns);
            let (en, dis) = flip_pair(n, key, fns);
            pair_cost[i] = pair_cost[i].max(t.elapsed());
            slowest_flip[i] = slowest_flip[i].max(en).max(dis);
        }
    }

    // Per-key sample counts: `samples` unless a flip is slow, then at most
    // SLOW_SAMPLES, and fewer still if the predicted run exceeds BUDGET.
    let mut want = [samples; 4];
    for i in 0..4 {
        if slowest_flip[i] > SLOW_FLIP {
            want[i] = want[i].min(SLOW_SAMPLES);
        }
    }
    let predict = |w: &[usize; 4]| -> Duration { (0..4).map(|i| pair_cost[i] * w[i] as u32).sum() };
    while predict(&want) > BUDGET {
        // Trim the most expensive key, never below 11 samples.
        let i = (0..4)
            .max_by_key(|&i| pair_cost[i] * want[i] as u32)
            .unwrap();
        if want[i] <= 11 {
            break;
        }
        want[i] = (want[i] * 9 / 10).max(11);
    }
    for (i, &(n, ..)) in KEYS.iter().enumerate() {
        eprintln!(
            "sites {n:5}: warm-up slowest flip {:?}, pair+checks {:?}; {} samples{}",
            slowest_flip[i],
            pair_cost[i],
            want[i],
            if want[i] < samples {
                " (REDUCED: slow flips, to keep the run short)"
            } else {
                ""
            }
        );
    }

    // The threads that run the sites while the key flips: they only
    // execute the code being patched (their counts are not checked: the
    // flip's check runs in this thread).
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let runners: Vec<_> = (0..threads)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    for &(_, _, fns) in &KEYS {
                        core::hint::black_box(run_sites(fns));
                    }
                }
            })
        })
        .collect();

    // Measured rounds, keys interleaved; a key drops out once it has enough.
    let mut t: [Vec<u64>; 4] = Default::default();
    let t_run = Instant::now();
    for round in 0..*want.iter().max().unwrap() {
        for (i, &(n, key, fns)) in KEYS.iter().enumerate() {
            if round < want[i] {
                let (en, dis) = flip_pair(n, key, fns);
                t[i].push((en + dis).as_nanos() as u64);
            }
        }
    }
    eprintln!("measured rounds: {:?}", t_run.elapsed());
    for &(n, key, fns) in &KEYS {
        verify(n, key, fns);
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for r in runners {
        r.join().expect("a thread running the sites panicked");
    }
    // On Linux the crate patches each site by mmap'ing a copy of its page
    // and mremap'ing it over the text: patched text pages end up as
    // anonymous mappings. Report how many mappings the process now has.
    if let Ok(maps) = std::fs::read_to_string("/proc/self/maps") {
        eprintln!("memory mappings after the run: {}", maps.lines().count());
    }

    for (i, &(n, ..)) in KEYS.iter().enumerate() {
        let list: Vec<String> = t[i].iter().map(u64::to_string).collect();
        println!(
            "{{\"impl\":\"{IMPL}\",\"threads\":{threads},\"sites\":{n},\"samples_ns\":[{}]}}",
            list.join(",")
        );
        let mut v = t[i].clone();
        v.sort_unstable();
        eprintln!(
            "sites {n:5}: median {} ns over {} samples",
            v[v.len() / 2],
            v.len()
        );
    }
}
