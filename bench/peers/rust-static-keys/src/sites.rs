// SPDX-License-Identifier: MIT
//! The Rust side of the suite's PEERS disabled-site cost, the twin of
//! switchyard's bench/peers_sites.c: a loop calling a non-inlined function
//! with 8 disabled sites between small steps of dependent work (the same
//! steps as the C file), per call, as
//!
//!   none   the same work, no site (the floor)
//!   flags  `if FLAG[i].load(Relaxed)`: 8 AtomicBools, each on its own
//!          cache line (what a Rust program reaches for instead)
//!   keys   `if static_branch_unlikely!(K[i])`: 8 static-keys 0.8.2 keys
//!
//! in two warm loops, as in the C twin: dependent calls (x = f(x),
//! latency-bound: the sites hide in the chain's shadow) and independent
//! calls (sum += f(i), throughput-bound: the sites' instructions take issue
//! slots).
//!
//! The functions are #[no_mangle] and #[inline(never)] so that the suite
//! can read their bytes with nm -S and the loop calls exactly them.
//!
//! Rounds interleave the variants, the first rotated each round; a sample
//! is ns per call. With SY_BENCH_RAW=FILE every variant appends one JSON
//! line {"loop", "variant", "unit", "samples"} to FILE, as
//! bench/common/stats.h bench_raw() does. Self-checks (exit status 1): no site fired while
//! disabled; the three functions compute the same value; after enabling,
//! every site of the flags and the keys fires once per call, and none after
//! disabling again.
//!
//! Usage: sy-bench-rust-sites [ROUNDS [CALLS]]   (defaults 31 and 1000000)

#[cfg(all(feature = "upstream", feature = "switchyard"))]
compile_error!("build with one of the features upstream (default) and switchyard");
// switchyard's crate under the other crate's name: the code below is the
// same for both
#[cfg(feature = "switchyard")]
use switchyard::compat as static_keys;
use static_keys::{define_static_key_false, static_branch_unlikely};
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

define_static_key_false!(K0);
define_static_key_false!(K1);
define_static_key_false!(K2);
define_static_key_false!(K3);
define_static_key_false!(K4);
define_static_key_false!(K5);
define_static_key_false!(K6);
define_static_key_false!(K7);

/// A flag on a cache line of its own, as in the C twin.
#[repr(align(64))]
struct Flag(AtomicBool);
static FLAG: [Flag; 8] = [const { Flag(AtomicBool::new(false)) }; 8];
static FIRED: AtomicUsize = AtomicUsize::new(0);

/// What an enabled site does: out of line, never reached while disabled.
#[cold]
#[inline(never)]
fn hit() {
    FIRED.fetch_add(1, Relaxed);
}

/// A step of dependent work between two sites: the same in peers_sites.c.
macro_rules! work {
    ($x:ident, $i:expr) => {
        $x = $x.wrapping_mul(33).wrapping_add($i);
        $x ^= $x >> 7;
    };
}

#[no_mangle]
#[inline(never)]
pub extern "C" fn sy_peer_sites_none(mut x: u32) -> u32 {
    work!(x, 0); work!(x, 1); work!(x, 2); work!(x, 3);
    work!(x, 4); work!(x, 5); work!(x, 6); work!(x, 7);
    x
}

macro_rules! sf {
    ($x:ident, $i:expr) => {
        if FLAG[$i].0.load(Relaxed) {
            hit();
        }
        work!($x, $i);
    };
}

#[no_mangle]
#[inline(never)]
pub extern "C" fn sy_peer_sites_flags(mut x: u32) -> u32 {
    sf!(x, 0); sf!(x, 1); sf!(x, 2); sf!(x, 3);
    sf!(x, 4); sf!(x, 5); sf!(x, 6); sf!(x, 7);
    x
}

macro_rules! sk {
    ($x:ident, $k:ident, $i:expr) => {
        if static_branch_unlikely!($k) {
            hit();
        }
        work!($x, $i);
    };
}

#[no_mangle]
#[inline(never)]
pub extern "C" fn sy_peer_sites_keys(mut x: u32) -> u32 {
    sk!(x, K0, 0); sk!(x, K1, 1); sk!(x, K2, 2); sk!(x, K3, 3);
    sk!(x, K4, 4); sk!(x, K5, 5); sk!(x, K6, 6); sk!(x, K7, 7);
    x
}

fn run(f: extern "C" fn(u32) -> u32, seed: u32, calls: u64) -> u32 {
    let mut x = seed;
    for _ in 0..calls {
        x = f(x);
    }
    x
}

fn run_independent(f: extern "C" fn(u32) -> u32, seed: u32, calls: u64) -> u32 {
    let mut sum = seed;
    for i in 0..calls {
        sum = sum.wrapping_add(f(i as u32));
    }
    sum
}

/// Loop `l` of the six: dependent (0..3) or independent (3..6) calls of
/// variant l % 3.
fn run_loop(l: usize, seed: u32, calls: u64) -> u32 {
    let fns: [extern "C" fn(u32) -> u32; 3] =
        [sy_peer_sites_none, sy_peer_sites_flags, sy_peer_sites_keys];
    let f = std::hint::black_box(fns[l % 3]);
    if l < 3 {
        run(f, seed, calls)
    } else {
        run_independent(f, seed, calls)
    }
}

fn check(what: &str, want: usize, bad: &mut bool) {
    let got = FIRED.load(Relaxed);
    if got != want {
        eprintln!("sy-bench-rust-sites: {what}: {got} sites fired, want {want}");
        *bad = true;
    }
}

fn set_all(on: bool) {
    for f in &FLAG {
        f.0.store(on, Relaxed);
    }
    // SAFETY: global_init() has run and this program is single-threaded.
    unsafe {
        for k in [&K0, &K1, &K2, &K3, &K4, &K5, &K6, &K7] {
            if on {
                k.enable()
            } else {
                k.disable()
            }
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().map_or(31, |s| s.parse().expect("ROUNDS"));
    let calls: u64 = args.next().map_or(1_000_000, |s| s.parse().expect("CALLS"));
    assert!(rounds >= 3 && calls >= 1, "usage: sy-bench-rust-sites [ROUNDS>=3 [CALLS>=1]]");
    static_keys::global_init();

    let names = [
        "no site",
        "8 flag checks (AtomicBool Relaxed, own cache line)",
        if cfg!(feature = "switchyard") {
            "8 switchyard (Rust) static_branch_unlikely!"
        } else {
            "8 static-keys static_branch_unlikely!"
        },
    ];
    // the two builds' loops apart (the suite pools samples by name)
    let modes = if cfg!(feature = "switchyard") {
        ["dependent calls, Rust (switchyard build)", "independent calls, Rust (switchyard build)"]
    } else {
        ["dependent calls, Rust", "independent calls, Rust"]
    };
    let mut s = vec![vec![0f64; rounds]; 6];
    let mut sink = 0u32;
    // warm-up: one untimed round of every loop, then all six in turn
    for l in 0..6 {
        sink ^= run_loop(l, 0, calls);
    }
    for r in 0..rounds {
        for k in 0..6 {
            let v = (r + k) % 6;
            let t0 = Instant::now();
            sink ^= run_loop(v, r as u32, calls);
            s[v][r] = t0.elapsed().as_nanos() as f64 / calls as f64;
        }
    }
    println!(
        "disabled sites, warm loops: ns per call of a function with 8 sites, \
         {rounds} rounds of {calls} calls (result {sink})"
    );
    let raw = std::env::var_os("SY_BENCH_RAW");
    for v in 0..6 {
        let mut q = s[v].clone();
        q.sort_by(f64::total_cmp);
        println!("  {:<24} {:<52} median {:7.3}", modes[v / 3], names[v % 3], q[rounds / 2]);
        if let Some(path) = &raw {
            let list: Vec<String> = s[v].iter().map(|x| format!("{x:.6}")).collect();
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .expect("SY_BENCH_RAW");
            writeln!(
                f,
                "{{\"loop\": \"{}\", \"variant\": \"{}\", \
                 \"unit\": \"ns/call\", \"samples\": [{}]}}",
                modes[v / 3],
                names[v % 3],
                list.join(", ")
            )
            .expect("SY_BENCH_RAW");
        }
    }

    let mut bad = false;
    check("disabled, after the rounds", 0, &mut bad);
    let want = sy_peer_sites_none(12345);
    if sy_peer_sites_flags(12345) != want || sy_peer_sites_keys(12345) != want {
        eprintln!("sy-bench-rust-sites: the variants compute different values");
        bad = true;
    }
    set_all(true);
    sy_peer_sites_flags(1);
    check("flags enabled", 8, &mut bad);
    sy_peer_sites_keys(1);
    check("keys enabled", 16, &mut bad);
    set_all(false);
    sy_peer_sites_flags(1);
    sy_peer_sites_keys(1);
    check("disabled again", 16, &mut bad);
    std::process::exit(bad as i32);
}
