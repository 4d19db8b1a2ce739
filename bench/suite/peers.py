# SPDX-License-Identifier: MIT
"""PEERS: switchyard side by side with the Rust crate static-keys 0.8.2
(bench/peers/rust-static-keys, built here with cargo), with switchyard's
own Rust crate (the same programs built against it; its static calls in
the E2 chain) and with the plain flag users would reach for instead.

Not in --quick, measured: PEERS --quick took 26 s here (2 busy vCPUs)
with an empty cargo target directory and the crates already in cargo's
cache, a minute with 15 samples a side in full (the crate's flips of the
10,000-site key take a third to half a second each); E1-E4 --quick took
about 100 s with their programs built cold. 2 minutes and more is not
"well under" the quick run's 3 minutes on a shared machine, and a first
cargo build that also downloads the crates is slower still. Ask for it
by name: `switchyard bench PEERS`."""
import json
import os
import re
import shutil
import subprocess
import sys

from .lanes import BenchFailed, nm_rows, pool, seed_rows
from .stats import compare, find, median, said

PROGRAMS = ["peers_flip", "peers_sites"]
CRATE = "static-keys 0.8.2"
SY_FLIP = "switchyard (no other thread)"
SY_FLIP2 = "switchyard (2 threads running the sites)"
RS_FLIP = f"Rust {CRATE} (single-threaded)"
# switchyard's Rust crate (bindings/rust), the same program built with
# --features switchyard: its flips against the C library's own, in the
# same run (the goal: at most 1.05x), with and without threads
RSY_FLIP = "Rust switchyard (no other thread)"
RSY_FLIP2 = "Rust switchyard (2 threads running the sites)"
RSY_KEY = "8 switchyard (Rust) static_branch_unlikely!"
# peers_sites.c's and src/sites.rs's loops and variants
MODES = ("dependent calls", "independent calls")
C_FLAG = "8 flag checks (volatile int, own cache line)"
C_KEY = "8 switchyard static_branch_unlikely"
RS_FLAG = "8 flag checks (AtomicBool Relaxed, own cache line)"
RS_KEY = "8 static-keys static_branch_unlikely!"
NOTE = (
    "What a flip does. switchyard, per enable and per disable: one batch "
    "(the site bytes verified, the changed bytes written through "
    "pwrite(2) to /proc/self/mem, {writes} write calls per batch "
    "measured, then {syncs} membarrier(PRIVATE_EXPEDITED_SYNC_CORE) per "
    "batch so every thread of the process runs the new code): safe with "
    "other threads running the sites, though here none does. The crate, "
    "per site and per direction: mmap an anonymous page, copy the 4 KiB "
    "text page into it, write the 5-byte JMP or NOP, mprotect it R-X, "
    "mremap it over the text page (clear_cache is a no-op on x86): three "
    "system calls and a page copy per site, no synchronisation of other "
    "cores (its enable/disable are documented unsafe with other threads "
    "running), and every patched text page becomes an anonymous mapping. "
    "Flips are interleaved per process (switchyard, Rust, switchyard, "
    "Rust ...; samples pooled); one sample is one enable plus one "
    "disable (the crate's program times the two calls apart and adds "
    "them, checking the sites between). Disabled sites: warm loops "
    "calling one non-inlined function with 8 disabled sites between "
    "steps of dependent work (bench/peers_sites.c and its twin "
    "src/sites.rs), the C and Rust programs interleaved per process too: "
    "dependent calls (x = f(x), latency-bound: an out-of-order core runs "
    "the sites in the shadow of the chain, so expect ~) and independent "
    "calls (sum += f(i), throughput-bound: the sites' instructions take "
    "issue slots). Every branch is predicted and every flag is in L1: "
    "the best case for a flag (E1's dense workload is the one under "
    "pressure). gcc and LLVM schedule the same work differently: the "
    "C-against-Rust comparisons (no site vs no site, flag vs flag, key vs "
    "key) are given, but the sites' cost is what each adds over its own "
    "language's no-site loop (the verdict's figures). Perf rows (where counters "
    "open: bench/common/perfctr.h): the C side's only, peers_sites' own "
    "thread, user space, per call, each batch counted as the clock times it "
    "and pooled over the process rounds as its clock samples are; the Rust "
    "program reads no counters, so it has no perf rows and no count is "
    "set against it. Static rows: nm -S of the built programs; gcc moves the "
    "enabled paths of C functions to a .cold part, counted apart, LLVM "
    "keeps them in the function")


def _cargo():
    c = shutil.which("cargo")
    if c:
        return c
    c = os.path.expanduser("~/.cargo/bin/cargo")
    return c if os.access(c, os.X_OK) else None


def _project(bindir):
    """The Cargo project: beside this module in a source tree, or under
    the source directory a build tree's CMakeCache.txt names."""
    cands = [os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "peers", "rust-static-keys")]
    try:
        with open(os.path.join(bindir, "..", "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("CMAKE_HOME_DIRECTORY:"):
                    cands.append(os.path.join(line.split("=", 1)[1].strip(),
                                              "bench", "peers",
                                              "rust-static-keys"))
    except OSError:
        pass
    return next((c for c in cands
                 if os.path.exists(os.path.join(c, "Cargo.toml"))), None)


def _why(res):
    """The first error line of a failed command, else its last line."""
    lines = [l.strip() for l in (res.stderr or "").splitlines() if l.strip()]
    err = next((l for l in lines if l.startswith(("error", "thread"))),
               lines[-1] if lines else "")
    return f"exit {res.returncode}" + (f": {err[:200]}" if err else "")


def build_rust(bindir, switchyard=False):
    """Build the crate's programs (release; the target directory kept in
    the build tree, so only the first run is cold; for an install the
    user cannot write to, in $XDG_CACHE_HOME/switchyard): (their
    directory, None), or (None, why not). switchyard: the same programs
    against switchyard's Rust crate (bindings/rust: a source tree only;
    its -sys crate builds the C library with cmake the first time)."""
    feats = (["--no-default-features", "--features", "switchyard"]
             if switchyard else [])
    tdir = "rust-switchyard-target" if switchyard else \
        "rust-static-keys-target"
    cargo = _cargo()
    if not cargo:
        return None, "cargo not installed"
    proj = _project(bindir)
    if not proj:
        return None, "bench/peers/rust-static-keys not found"
    target = os.path.join(os.path.abspath(bindir), tdir)
    if not os.access(target if os.path.isdir(target) else bindir, os.W_OK):
        target = os.path.join(
            os.environ.get("XDG_CACHE_HOME") or
            os.path.join(os.path.expanduser("~"), ".cache"),
            "switchyard", tdir)
    print(f"== PEERS: cargo build --release {' '.join(feats)} ({proj})",
          file=sys.stderr, flush=True)
    try:
        res = subprocess.run(
            [cargo, "build", "--release", *feats, "--manifest-path",
             os.path.join(proj, "Cargo.toml")],
            env=dict(os.environ, CARGO_TARGET_DIR=target),
            capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.SubprocessError) as e:
        return None, f"cargo build failed: {e}"
    if res.returncode:
        return None, f"cargo build failed ({_why(res)})"
    return os.path.join(target, "release"), None


class PeerFailed(BenchFailed):
    """A peer's program failed: the Rust side's failure is reported as
    "not measured"; switchyard's fails the experiment (sybench.py)."""


def _run(cmd, raw=None):
    env = dict(os.environ)
    if raw:
        env["SY_BENCH_RAW"] = raw
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, env=env,
                             timeout=900)
    except (OSError, subprocess.SubprocessError) as e:
        raise PeerFailed(f"{os.path.basename(cmd[0])}: {e}")
    if res.returncode:
        raise PeerFailed(f"{os.path.basename(cmd[0])} failed ({_why(res)})")
    return res.stdout


def _lines(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.startswith("{")]


def _flips(objs, who):
    """peers_flip's and the Rust programs' {"impl", "threads", "sites",
    "samples_ns"} as raw_lines() records, in us; who: the variant's name
    by thread count (records of other counts are left out)."""
    return [{"loop": f"flip, {o['sites']:,} site{'s' if o['sites'] > 1 else ''}",
             "variant": who[o.get("threads", 0)],
             "unit": "us", "samples": [v / 1e3 for v in o["samples_ns"]]}
            for o in objs if o.get("threads", 0) in who]


def run(bindir, quick, tmp):
    """Flip cost: one enable + one disable of a key with 1, 100, 1,000 and
    10,000 sites, switchyard (peers_flip, no other thread) against the
    crate (single-threaded, the only way it is safe), in process rounds
    switchyard, Rust, switchyard, Rust ... with the samples pooled.
    Disabled-site cost: ns per call of a function with 8 disabled sites,
    as none / flag / static key, in C (bench/peers_sites.c, switchyard's
    keys) and in Rust (the crate's keys), the programs interleaved per
    process the same way. Code bytes of those functions from nm -S."""
    rounds = 2 if quick else 4
    sy_n, rs_n = (31, 7) if quick else (51, 15)
    site_args = ["11", "500000"] if quick else ["21", "1000000"]
    rdir, why = build_rust(bindir)
    ydir, ywhy = build_rust(bindir, switchyard=True)
    flip_runs, site_runs, cost = [], [], {"writes": "?", "syncs": "?"}

    for i in range(rounds):
        # 0 and 2 threads running the sites (peers_flip's third argument:
        # the most threads), for the Rust crate's same two
        js = os.path.join(tmp, f"peers-flip-{i}.json")
        out = _run([os.path.join(bindir, "peers_flip"), js, str(sy_n), "2"])
        m = re.search(r"([\d.]+) sync calls and ([\d.]+) write calls", out)
        if m:
            cost = {"syncs": m.group(1), "writes": m.group(2)}
        with open(js) as f:
            flip_runs.append(_flips(json.load(f),
                                    {0: SY_FLIP, 2: SY_FLIP2}))
        raw = os.path.join(tmp, f"peers-sites-c-{i}.jsonl")
        _run([os.path.join(bindir, "peers_sites"), *site_args], raw)
        site_runs.append(_lines(raw))
        for d, tag, flips_of in (
                (rdir, "rust", [(0, RS_FLIP)]),
                (ydir, "rust-sy", [(0, RSY_FLIP), (2, RSY_FLIP2)])):
            if d is None:
                continue
            try:
                for threads, who in flips_of:
                    out = _run([os.path.join(d, "sy-bench-rust-static-keys"),
                                str(rs_n if tag == "rust" else sy_n),
                                str(threads)])
                    flip_runs.append(_flips(
                        [json.loads(l) for l in out.splitlines()
                         if l.startswith("{")], {threads: who}))
                raw = os.path.join(tmp, f"peers-sites-{tag}-{i}.jsonl")
                _run([os.path.join(d, "sy-bench-rust-sites"), *site_args],
                     raw)
                site_runs.append(_lines(raw))
            except PeerFailed as e:
                mine = {w for _, w in flips_of}
                flip_runs = [r for r in flip_runs
                             if not any(x["variant"] in mine for x in r)]
                key = RS_KEY if tag == "rust" else RSY_KEY
                site_runs = [r for r in site_runs
                             if not any(x["variant"] == key for x in r)]
                if tag == "rust":
                    rdir, why = None, str(e)
                else:
                    ydir, ywhy = None, str(e)
    flips = pool(flip_runs)
    sites = pool(site_runs)
    rows, comps, _ = seed_rows(flips)
    srows, scomps, aa = seed_rows(sites)
    rows += srows
    comps += scomps
    got = {f"{r['loop']}: {r['variant']}": r["samples"] for r in sites}
    for mode in MODES:
        for a, b in ((f"{mode}, Rust: {RS_KEY}", f"{mode}, C: {C_KEY}"),
                     (f"{mode}, Rust: {RS_FLAG}", f"{mode}, C: {C_FLAG}"),
                     (f"{mode}, Rust: no site", f"{mode}, C: no site"),
                     (f"{mode}, C: {C_KEY}", f"{mode}, C: {C_FLAG}"),
                     (f"{mode}, Rust: {RS_KEY}", f"{mode}, Rust: {RS_FLAG}")):
            if a in got and b in got:
                comps.append(compare(a, got[a], b, got[b]))
        ry = f"{mode}, Rust (switchyard build)"
        for a, b in ((f"{ry}: {RSY_KEY}", f"{mode}, Rust: {RS_KEY}"),
                     (f"{ry}: {RSY_KEY}", f"{mode}, C: {C_KEY}"),
                     (f"{ry}: {RSY_KEY}", f"{ry}: {RS_FLAG}")):
            if a in got and b in got:
                comps.append(compare(a, got[a], b, got[b]))
    # the Rust crate's flips against the C library's, same run, and the
    # other crate's against them
    for r in flips:
        if r["variant"] not in (RSY_FLIP, RSY_FLIP2):
            continue
        c_who = SY_FLIP if r["variant"] == RSY_FLIP else SY_FLIP2
        base = next((x for x in flips if x["loop"] == r["loop"] and
                     x["variant"] == c_who), None)
        if base:
            comps.append(compare(f"{r['loop']}: {r['variant']}",
                                 r["samples"], f"{r['loop']}: {c_who}",
                                 base["samples"]))
    # the C side's counts (the Rust side has none): keys against flags,
    # per event, as the clock's (against no site: seed_rows)
    pgot = {(r["loop"], r["variant"], r["event"]): r for r in sites.perf}
    for (loop, v, ev), r in pgot.items():
        f = pgot.get((loop, C_FLAG, ev))
        if v == C_KEY and f and median(f["samples"]) > 0:
            tag = f" [{ev}, {r.get('type', '?')} event]"
            c = compare(f"{loop}: {v}{tag}", r["samples"],
                        f"{loop}: {C_FLAG}{tag}", f["samples"])
            c["lane"] = "perf"
            comps.append(c)
    rows += nm_rows(os.path.join(bindir, "peers_sites"), {
        "peer_sites_none": "bytes of the function, C: no site",
        "peer_sites_flags": "hot bytes of the function, C: 8 flag checks",
        "peer_sites_flags.cold": "cold bytes (.cold), C: 8 flag checks",
        "peer_sites_keys": "hot bytes of the function, C: 8 switchyard keys",
        "peer_sites_keys.cold": "cold bytes (.cold), C: 8 switchyard keys"})
    if rdir:
        rows += nm_rows(os.path.join(rdir, "sy-bench-rust-sites"), {
            "sy_peer_sites_none": "bytes of the function, Rust: no site",
            "sy_peer_sites_flags": "bytes of the function, Rust: 8 flag "
                                   "checks",
            "sy_peer_sites_keys": "bytes of the function, Rust: 8 "
                                  "static-keys sites"})
    if ydir:
        rows += nm_rows(os.path.join(ydir, "sy-bench-rust-sites"), {
            "sy_peer_sites_none": "bytes of the function, Rust (switchyard "
                                  "build): no site",
            "sy_peer_sites_keys": "bytes of the function, Rust: 8 "
                                  "switchyard sites"})
    verdict = _verdict(flips, got, comps, why if not rdir else None)
    verdict += " " + _rust_sy(flips, got, comps, ywhy if not ydir else None)
    verdict += " " + rust_calls(bindir, quick)
    return {"id": "PEERS", "seed": "-",
            "title": f"peers: switchyard vs the Rust crate {CRATE} and "
                     "plain flags (flip cost; disabled-site cost)",
            "rows": rows, "comparisons": comps, "aa": aa,
            "lane_note": NOTE.format(**cost),
            "verdict": verdict}


def rust_calls(bindir, quick):
    """Rust static calls in the E2 chain, in this run: switchyard's crate's
    example bindings/rust/switchyard/examples/static_call_bench.rs (a
    source tree only), which times a direct call, the crate's static call,
    a function pointer and a `&dyn Fn` (and sites with no stack step and
    with the C site's) in x = f(x) and s += f(i) loops, each at 16 code
    placements, interleaved. Its summary lines as a sentence, or why
    not."""
    cargo = _cargo()
    proj = _project(bindir)
    if not cargo or not proj:
        return "Rust static calls not measured: no cargo or no source tree."
    ws = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        proj))), "bindings", "rust")
    if not os.path.exists(os.path.join(ws, "Cargo.toml")):
        return "Rust static calls not measured: no bindings/rust."
    target = os.path.join(os.path.abspath(bindir), "rust-crates-target")
    try:
        res = subprocess.run(
            [cargo, "run", "--release", "--locked", "-p", "switchyard",
             "--example", "static_call_bench", "--manifest-path",
             os.path.join(ws, "Cargo.toml"), "--", "--rounds",
             "11" if quick else "31"],
            env=dict(os.environ, CARGO_TARGET_DIR=target),
            capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.SubprocessError) as e:
        return f"Rust static calls not measured: {e}."
    if res.returncode:
        return f"Rust static calls not measured ({_why(res)})."
    out, loop = [], None
    want = ("static_call!", "function pointer", "&dyn Fn",
            "through the key")
    for line in res.stdout.splitlines():
        if line.startswith("== "):
            loop = line[3:].split(":")[0]
            out.append(f"{loop}:")
            continue
        m = re.match(r"\s+(.+?)\s{2,}[\d ]+\|\s+([\d.]+) ns .*?"
                     r"([\d.]+) cycles(?:\s+(\S+) ([+-][\d.]+) cycles, "
                     r"ratio ([\d.]+))?", line)
        if m and loop:
            name = m.group(1).split(" (")[0]
            if name == "direct call":
                out.append(f"direct {m.group(3)} cycles;")
            elif name.startswith(want):
                v = m.group(4)
                out.append(f"{name} {m.group(6)}x"
                           f"{' (~)' if v == '~' else ''};")
    return ("Rust static calls in the E2 chain (same run, "
            "static_call_bench, ratios to the direct call): " +
            " ".join(out).rstrip(";") + ".")


def _rust_sy(flips, got, comps, missing):
    """switchyard's Rust crate: its flips against the C library's in the
    same run (0 and 2 threads running the sites), and its disabled sites
    against the other crate's."""
    if missing:
        return f"switchyard's Rust crate not measured: {missing}."
    out = []
    for who, c_who in ((RSY_FLIP, SY_FLIP), (RSY_FLIP2, SY_FLIP2)):
        parts = []
        for r in flips:
            if r["variant"] != who:
                continue
            c = find(comps, f"{r['loop']}: {who}", f"{r['loop']}: {c_who}")
            if c:
                parts.append(f"{r['loop'][6:]}: {c['ratio']:.2f}x"
                             f"{' (~)' if c['verdict'] == '~' else ''}")
        if parts:
            out.append(f"{who} against the C library's flips ({c_who}): "
                       + ", ".join(parts))
    ry = "independent calls, Rust (switchyard build)"
    kk = find(comps, f"{ry}: {RSY_KEY}", f"independent calls, Rust: {RS_KEY}")
    base = f"{ry}: no site"
    out.append(f"its 8 disabled sites add {_extra(got, f'{ry}: {RSY_KEY}', base)}"
               f" a call over its no-site loop (independent calls); against "
               f"the static-keys crate's sites {said(kk)}")
    return "Rust: " + "; ".join(out) + "."


def _extra(got, v, base):
    """ns per call a variant adds over its language's no-site loop."""
    if v not in got or base not in got:
        return "not measured"
    return f"{median(got[v]) - median(got[base]):+.2f} ns"


def _sites(got, comps, lang, flag, key, what):
    """Per loop: the ns per call the flags and keys of one language add."""
    out = []
    for mode in MODES:
        p = f"{mode}, {lang}: "
        kf = find(comps, p + key, p + flag)
        out.append(f"{mode}: flags {_extra(got, p + flag, p + 'no site')}, "
                   f"{what} {_extra(got, p + key, p + 'no site')} (keys vs "
                   f"flags {said(kf)})")
    return "; ".join(out)


def _verdict(flips, got, comps, missing):
    sy = {r["loop"]: median(r["samples"]) for r in flips
          if r["variant"] == SY_FLIP}
    fl = ", ".join(f"{l[6:]}: {v:.1f} us" for l, v in sy.items())
    c_side = ("8 disabled sites per call, over none, in C: " +
              _sites(got, comps, "C", C_FLAG, C_KEY, "switchyard keys"))
    if missing:
        return (f"Rust peer not measured: {missing}. switchyard alone: "
                f"enable+disable with no other thread, by sites, {fl}; "
                f"{c_side}")
    ratios = []
    for loop in sy:
        c = find(comps, f"{loop}: {RS_FLIP}", f"{loop}: {SY_FLIP}")
        if c:
            ratios.append(f"{loop[6:]}: {c['ratio']:.0f}x"
                          f"{' (~)' if c['verdict'] == '~' else ''}")
    kk = find(comps, f"independent calls, Rust: {RS_KEY}",
              f"independent calls, C: {C_KEY}")
    return (f"Against a flag (what users reach for instead): {c_side}; in "
            "Rust: " + _sites(got, comps, "Rust", RS_FLAG, RS_KEY,
                              "the crate's keys") +
            f" (independent calls, the crate's keys vs switchyard's "
            f"{said(kk)}). The crate's enable+disable takes "
            f"{', '.join(ratios)} as long as switchyard's ({fl}) and is "
            "unsafe with other threads running, where switchyard's is not")
