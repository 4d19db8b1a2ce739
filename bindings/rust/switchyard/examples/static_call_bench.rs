// SPDX-License-Identifier: MIT
//! What one call costs from Rust, side by side in one process (the method
//! of the C suite's E2, `bench/e2_calls.c`): a direct call; a static call
//! (the crate's site: the C header's arm, guard and payload, with the save
//! and restore of rsp but no step over the red zone and no alignment);
//! the same site with no step at all, and with the C site's whole step
//! (save, step over the red zone, align, restore), to measure what leaving
//! it out saves; a call through the key's pointer (what the fallback
//! does); a function pointer; a `&dyn Fn`. Every target computes x * 3 + 1
//! and is not inlined.
//!
//! Two loops per variant: a dependent chain x = f(x) (latency) and
//! s += f(i) (throughput), each at 16 placements in the code (a loop's
//! cost moves by whole cycles with where it lies). Loops interleaved, the
//! starting one rotated each round, one unrecorded warm-up round; medians
//! with 95% CIs; each variant over its 16 placements against the direct
//! call's: the Mann-Whitney verdict ("~": not significant at 5%) and the
//! median of the per-round ratios with its 95% CI (paired: the two ran
//! within a second of each other). A chain of 4 dependent adds measured in
//! the same rounds converts ns to cycles.
//!
//!     cargo run --release --example static_call_bench [-- --rounds R --n N]
//!
//! With SWITCHYARD_STATIC_CALL=detour in the environment every site is
//! parked on its detour (an indirect call through the key): run it so to
//! measure that path.

use std::hint::black_box;
use std::time::Instant;
use switchyard::{define_static_call, static_call};

type Fun = extern "C" fn(u64) -> u64;

#[inline(never)]
extern "C" fn tgt_a(x: u64) -> u64 {
    x.wrapping_mul(3).wrapping_add(1)
}

define_static_call!(SC: Fun = tgt_a);
define_static_call!(SC_NONE: Fun = tgt_a);
define_static_call!(SC_FULL: Fun = tgt_a);
define_static_call!(SC_PTR: Fun = tgt_a);

/// The site with another stack step than static_call!'s own (`save`):
/// `none` (no step at all) or `full` (the C site's) (x86-64 only).
#[cfg(all(target_arch = "x86_64", not(feature = "no-patching")))]
macro_rules! site_step {
    ($step:ident $key:ident $x:expr) => {{
        let args = switchyard::static_call::__private::args(&$key, ($x,));
        switchyard::__sy_sc_x86!($step [out("r12") _,] [] [$key] args "rdi" 0)
    }};
}
#[cfg(not(all(target_arch = "x86_64", not(feature = "no-patching"))))]
macro_rules! site_step {
    ($step:ident $key:ident $x:expr) => {
        static_call!($key($x))
    };
}

/// n bytes of NOPs, run once before a loop: they move the loop within its
/// cache line (its head is 16-byte aligned, as LLVM aligns loop heads).
macro_rules! skip {
    ($n:literal) => {
        // SAFETY: NOPs.
        unsafe {
            std::arch::asm!(
                concat!(".skip ", $n, ", 0x90"),
                options(nomem, nostack, preserves_flags)
            )
        }
    };
}

/// A variant's loop at 16 placements of its head (0, 16, ..., 240 bytes
/// further on): `chain` (x = f(x)) or `thru` (s += f(i)). A loop's cost
/// on the AMD EPYC moves by whole cycles with where it lies (and where its
/// target lies: the E2 suite's layout set shows it for C); taken over the
/// 16 placements every variant has the same chances.
macro_rules! placements {
    ($m:ident, $kind:ident, [$($setup:tt)*] |$x:ident| $call:expr) => {
        mod $m {
            #[allow(unused_imports)]
            use super::*;
            placements!(@fn p0 "0" $kind [$($setup)*] |$x| $call);
            placements!(@fn p1 "16" $kind [$($setup)*] |$x| $call);
            placements!(@fn p2 "32" $kind [$($setup)*] |$x| $call);
            placements!(@fn p3 "48" $kind [$($setup)*] |$x| $call);
            placements!(@fn p4 "64" $kind [$($setup)*] |$x| $call);
            placements!(@fn p5 "80" $kind [$($setup)*] |$x| $call);
            placements!(@fn p6 "96" $kind [$($setup)*] |$x| $call);
            placements!(@fn p7 "112" $kind [$($setup)*] |$x| $call);
            placements!(@fn p8 "128" $kind [$($setup)*] |$x| $call);
            placements!(@fn p9 "144" $kind [$($setup)*] |$x| $call);
            placements!(@fn p10 "160" $kind [$($setup)*] |$x| $call);
            placements!(@fn p11 "176" $kind [$($setup)*] |$x| $call);
            placements!(@fn p12 "192" $kind [$($setup)*] |$x| $call);
            placements!(@fn p13 "208" $kind [$($setup)*] |$x| $call);
            placements!(@fn p14 "224" $kind [$($setup)*] |$x| $call);
            placements!(@fn p15 "240" $kind [$($setup)*] |$x| $call);
            pub const ALL: [super::Loop; super::NP] =
                [p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15];
        }
    };
    (@fn $f:ident $skip:literal chain [$($setup:tt)*] |$x:ident| $call:expr) => {
        #[inline(never)]
        pub fn $f(mut $x: u64, n: u64) -> u64 {
            skip!($skip);
            $($setup)*
            for _ in 0..n {
                $x = $call;
            }
            $x
        }
    };
    (@fn $f:ident $skip:literal thru [$($setup:tt)*] |$x:ident| $call:expr) => {
        #[inline(never)]
        pub fn $f(s0: u64, n: u64) -> u64 {
            skip!($skip);
            $($setup)*
            let mut s = s0;
            for $x in 0..n {
                s = s.wrapping_add($call);
            }
            s
        }
    };
}

// ---- x = f(x) ------------------------------------------------------------------

#[inline(never)]
fn c_calib(mut x: u64, n: u64) -> u64 {
    for _ in 0..n {
        // 4 dependent register adds: 4 cycles, whatever the clock
        #[cfg(target_arch = "x86_64")]
        // SAFETY: arithmetic on a register.
        unsafe {
            std::arch::asm!("add {0}, {0}", "add {0}, {0}", "add {0}, {0}", "add {0}, {0}",
                            inout(reg) x, options(nomem, nostack));
        }
        #[cfg(target_arch = "aarch64")]
        // SAFETY: arithmetic on a register.
        unsafe {
            std::arch::asm!("add {0}, {0}, {0}", "add {0}, {0}, {0}", "add {0}, {0}, {0}",
                            "add {0}, {0}, {0}", inout(reg) x, options(nomem, nostack));
        }
    }
    x
}

placements!(c_direct, chain, [] | x | tgt_a(x));
placements!(c_static, chain, [] | x | static_call!(SC(x)));
placements!(c_static_none, chain, [] | x | site_step!(none SC_NONE x));
placements!(c_static_full, chain, [] | x | site_step!(full SC_FULL x));
placements!(c_through_key, chain, [let k = black_box(&SC_PTR);] |x| k.call_indirect((x,)));
placements!(c_pointer, chain, [let f: Fun = black_box(tgt_a);] |x| f(x));
placements!(c_dyn, chain,
            [let c = |x: u64| x.wrapping_mul(3).wrapping_add(1);
             let f: &dyn Fn(u64) -> u64 = black_box(&c);] |x| f(x));

// ---- s += f(i) -----------------------------------------------------------------

placements!(t_direct, thru, [] | i | tgt_a(i));
placements!(t_static, thru, [] | i | static_call!(SC(i)));
placements!(t_static_none, thru, [] | i | site_step!(none SC_NONE i));
placements!(t_static_full, thru, [] | i | site_step!(full SC_FULL i));
placements!(t_through_key, thru, [let k = black_box(&SC_PTR);] |i| k.call_indirect((i,)));
placements!(t_pointer, thru, [let f: Fun = black_box(tgt_a);] |i| f(i));
placements!(t_dyn, thru,
            [let c = |x: u64| x.wrapping_mul(3).wrapping_add(1);
             let f: &dyn Fn(u64) -> u64 = black_box(&c);] |i| f(i));

type Loop = fn(u64, u64) -> u64;

/// Placements of each loop.
const NP: usize = 16;

/// A variant: its name and its loop at each placement.
type Variant = (&'static str, [Loop; NP]);

const NAMES: [&str; 7] = [
    "direct call",
    "static_call! (saves rsp, no red-zone step)",
    "site with no step at all",
    "site + the C site's whole step",
    "through the key (the fallback)",
    "function pointer",
    "&dyn Fn",
];

const CHAIN: [Variant; 7] = [
    (NAMES[0], c_direct::ALL),
    (NAMES[1], c_static::ALL),
    (NAMES[2], c_static_none::ALL),
    (NAMES[3], c_static_full::ALL),
    (NAMES[4], c_through_key::ALL),
    (NAMES[5], c_pointer::ALL),
    (NAMES[6], c_dyn::ALL),
];

const THRU: [Variant; 7] = [
    (NAMES[0], t_direct::ALL),
    (NAMES[1], t_static::ALL),
    (NAMES[2], t_static_none::ALL),
    (NAMES[3], t_static_full::ALL),
    (NAMES[4], t_through_key::ALL),
    (NAMES[5], t_pointer::ALL),
    (NAMES[6], t_dyn::ALL),
];

// ---- statistics (bench/common/stats.h) --------------------------------------------

struct Summary {
    median: f64,
    lo: f64,
    hi: f64,
}

/// The median and its 95% CI: ranks n/2 -+ 0.98 sqrt(n) (the normal
/// approximation of the binomial(n, 1/2) order statistics).
fn summarize(v: &[f64]) -> Summary {
    let mut c = v.to_vec();
    c.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = c.len();
    let median = if n % 2 == 1 {
        c[n / 2]
    } else {
        (c[n / 2 - 1] + c[n / 2]) / 2.0
    };
    let lo = ((n as f64 / 2.0 - 0.98 * (n as f64).sqrt()).floor() as i64).max(0) as usize;
    let hi =
        (((n as f64 / 2.0 + 1.0 + 0.98 * (n as f64).sqrt()).ceil() as i64 - 1) as usize).min(n - 1);
    Summary {
        median,
        lo: c[lo],
        hi: c[hi],
    }
}

/// The two-sided Mann-Whitney U's z score (> 0: a larger).
fn mann_whitney_z(a: &[f64], b: &[f64]) -> f64 {
    let mut u = 0.0;
    for x in a {
        for y in b {
            u += if x > y {
                1.0
            } else if x == y {
                0.5
            } else {
                0.0
            };
        }
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let sigma = (na * nb * (na + nb + 1.0) / 12.0).sqrt();
    if sigma > 0.0 {
        (u - na * nb / 2.0) / sigma
    } else {
        0.0
    }
}

/// "~" when not significant at 5%, else the side of the first sample.
fn verdict(z: f64) -> &'static str {
    if z.abs() < 1.96 {
        "~"
    } else if z > 0.0 {
        ">"
    } else {
        "<"
    }
}

/// Every loop `rounds` times, interleaved, the starting one rotated (the
/// calibration among them, last): ns per call, by loop and round.
fn interleave(v: &[Variant], rounds: usize, n: u64) -> Vec<Vec<f64>> {
    let mut loops: Vec<Loop> = v.iter().flat_map(|(_, all)| all.iter().copied()).collect();
    loops.push(c_calib);
    let mut s = vec![vec![0.0; rounds]; loops.len()];
    for r in -1..rounds as i64 {
        for k in 0..loops.len() {
            let i = (r + 1 + k as i64) as usize % loops.len();
            let t0 = Instant::now();
            black_box((loops[i])(black_box(r as u64 + 2), black_box(n)));
            let ns = t0.elapsed().as_nanos() as f64 / n as f64;
            if r >= 0 {
                s[i][r as usize] = ns;
            }
        }
    }
    s
}

/// Per variant: how many of the 16 placements ran at each whole number of
/// cycles per call (the medians, rounded); then over the 16 (per round,
/// their mean) against the direct call's.
fn report(title: &str, v: &[Variant], s: &[Vec<f64>], rounds: usize) {
    let cycle = summarize(&s[s.len() - 1]).median / 4.0;
    println!("== {title}: placements of the loop (of {NP}) at 3 4 5 6 7 8 cycles per call,");
    println!("   then over the {NP}: median ns [95% CI], cycles, against the direct call");
    println!("   (Mann-Whitney; the per-round ratio's median [95% CI]); 1 cycle = {cycle:.4} ns");
    let mean = |j: usize| -> Vec<f64> {
        (0..rounds)
            .map(|r| (0..NP).map(|p| s[NP * j + p][r]).sum::<f64>() / NP as f64)
            .collect()
    };
    let base = mean(0);
    let mb = summarize(&base).median;
    for (j, (name, _)) in v.iter().enumerate() {
        let mut hist = [0usize; 6];
        for p in 0..NP {
            let c = (summarize(&s[NP * j + p]).median / cycle).round() as usize;
            hist[c.clamp(3, 8) - 3] += 1;
        }
        let h: Vec<String> = hist.iter().map(|n| format!("{n:2}")).collect();
        let m4 = mean(j);
        let m = summarize(&m4);
        print!(
            "  {name:<44} {}  | {:6.3} ns [{:.3}, {:.3}] {:5.2} cycles",
            h.join(" "),
            m.median,
            m.lo,
            m.hi,
            m.median / cycle
        );
        if j > 0 {
            let z = mann_whitney_z(&m4, &base);
            let ratio: Vec<f64> = m4.iter().zip(&base).map(|(a, b)| a / b).collect();
            let q = summarize(&ratio);
            print!(
                "  {} {:+.2} cycles, ratio {:.3} [{:.3}, {:.3}]",
                verdict(z),
                (m.median - mb) / cycle,
                q.median,
                q.lo,
                q.hi
            );
        }
        println!();
    }
}

/// The CPU, as /proc/cpuinfo names it.
fn cpu() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |k: &str| {
        info.lines()
            .find(|l| l.starts_with(k))
            .and_then(|l| l.split(':').nth(1))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| "?".into())
    };
    format!(
        "{} (family {}, model {}), {} CPUs",
        field("model name"),
        field("cpu family"),
        field("model\t"),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    )
}

fn main() {
    let mut rounds = 21usize;
    let mut n = 1_000_000u64;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match (a.as_str(), args.next().and_then(|v| v.parse::<u64>().ok())) {
            ("--rounds", Some(v)) if v >= 3 => rounds = v as usize,
            ("--n", Some(v)) if v >= 1 => n = v,
            _ => {
                eprintln!("usage: static_call_bench [--rounds R (>= 3)] [--n N]");
                std::process::exit(2);
            }
        }
    }
    println!("CPU: {}", cpu());
    println!(
        "SWITCHYARD_STATIC_CALL={}; patched sites: {}",
        std::env::var("SWITCHYARD_STATIC_CALL").unwrap_or_else(|_| "(unset)".into()),
        switchyard::PATCHING
    );
    let sc = interleave(&CHAIN, rounds, n);
    let st = interleave(&THRU, rounds, n);
    println!("{rounds} rounds of {n} calls per loop, interleaved\n");
    report("x = f(x)", &CHAIN, &sc, rounds);
    println!();
    report("s += f(i)", &THRU, &st, rounds);
    for c in switchyard::static_call::static_calls() {
        println!("{}: {} site(s), target {}", c.name, c.sites, c.target);
    }
}
