#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sybench.py - the benchmark suite's harness (issue [9/10]); run as
`switchyard bench [--quick] [--json FILE] [--md FILE] [EXPERIMENT...]`
(tools/switchyard.c execs it from a build tree) or directly:

    python3 bench/sybench.py --bindir build/bench [--quick] [E2 ...]

Each experiment runs a benchmark program of bench/ that interleaves its
variants round by round (A B C ... A B C ...: slow drifts of the machine
hit every variant alike) after a warm-up, and writes every raw sample.
The harness turns the samples into rows (median, distribution-free 95%
confidence interval, n, outliers counted by Tukey's 1.5 IQR fences and
kept), comparisons against the experiment's baseline (ratio of medians,
two-sided Mann-Whitney U p-value, "~" when p >= 0.05), and an A/A row:
the baseline's odd rounds against its even rounds, interleaved in time
like the rest, as the noise floor a difference has to clear.

Lanes: "clock" (CLOCK_MONOTONIC in the program); "perf" (hardware
counters through perf_event_open, where the machine has them: these KVM
guests do not, and the machine record says so) and "callgrind"
(valgrind's instruction counts, deterministic) are the format's other
values.

Output: the JSON document below (--json FILE, default
bench-results.json) and a Markdown report (--md FILE, default
bench-report.md), with the machine in both:

    {"format": "switchyard-bench/1",
     "machine": {"cpu", "flags", "cores", "kernel", "libc", "compiler",
                 "governor", "turbo", "perf_counters"},
     "command": "...",
     "experiments": [{"id", "title", "seed", "lane_note",
        "rows": [{"name", "unit", "median", "ci_low", "ci_high", "n",
                  "outliers", "lane"}],
        "comparisons": [{"a", "b", "ratio", "p_value", "verdict"}],
        "aa": {"ratio", "p_value"},
        "verdict": "..."}]}

Built so far: E1 (dense tracepoints under pressure, the pipe test,
function bytes), E2, E3, E4, E5 in the clock lane, E3 and E5 in
the callgrind lane too (--quick: E1-E4; E5 takes about 4 minutes). Not
yet (see the issue's note): the callgrind lane of E1, E2 and E4, the peers beyond those E2 measures, plots.
"""
import argparse
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

FORMAT = "switchyard-bench/1"


# ---- statistics ------------------------------------------------------------

def median(x):
    x = sorted(x)
    n = len(x)
    return (x[(n - 1) // 2] + x[n // 2]) / 2


def median_ci(x):
    """95% CI of the median from order statistics (binomial(n, 1/2),
    normal approximation), as bench/stats.h computes it."""
    x = sorted(x)
    n = len(x)
    lo = max(0, math.floor(n / 2 - 0.98 * math.sqrt(n)))
    hi = min(n - 1, math.ceil(n / 2 + 1 + 0.98 * math.sqrt(n)) - 1)
    return x[lo], x[hi]


def outliers(x):
    """Samples beyond Tukey's fences (1.5 IQR): counted, not dropped."""
    x = sorted(x)
    n = len(x)
    if n < 4:
        return 0
    q1, q3 = x[n // 4], x[(3 * n) // 4]
    lo, hi = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
    return sum(1 for v in x if v < lo or v > hi)


def mann_whitney_p(a, b):
    """Two-sided Mann-Whitney U p-value (normal approximation with the
    tie correction; fine from ~8 samples a side)."""
    n1, n2 = len(a), len(b)
    if not n1 or not n2:
        return 1.0
    allv = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    ranks, ties, i = {0: 0.0, 1: 0.0}, 0.0, 0
    while i < len(allv):
        j = i
        while j + 1 < len(allv) and allv[j + 1][0] == allv[i][0]:
            j += 1
        r = (i + j) / 2 + 1
        t = j - i + 1
        ties += t ** 3 - t
        for k in range(i, j + 1):
            ranks[allv[k][1]] += r
        i = j + 1
    u = ranks[0] - n1 * (n1 + 1) / 2
    n = n1 + n2
    sd = math.sqrt(n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1))))
    if sd == 0:
        return 1.0
    z = (u - n1 * n2 / 2) / sd
    return math.erfc(abs(z) / math.sqrt(2))


def row(name, unit, samples, lane):
    lo, hi = median_ci(samples)
    return {"name": name, "unit": unit, "median": median(samples),
            "ci_low": lo, "ci_high": hi, "n": len(samples),
            "outliers": outliers(samples), "lane": lane}


def compare(a_name, a, b_name, b):
    p = mann_whitney_p(a, b)
    r = median(a) / median(b)
    return {"a": a_name, "b": b_name, "ratio": r, "p_value": p,
            "verdict": "~" if p >= 0.05 else ("<" if r < 1 else ">")}


# ---- the machine -----------------------------------------------------------

def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True,
                              timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def perf_counters():
    """Whether perf_event_open gives hardware counters here."""
    if not shutil.which("perf"):
        return "no perf tool"
    out = run(["perf", "stat", "-x,", "-e", "cycles,instructions", "true"])
    out += run(["sh", "-c", "perf stat -x, -e cycles true 2>&1 >/dev/null"])
    if "not supported" in out or "<not" in out or not re.search(r"^\d+,", out, re.M):
        return "not available (cycles not supported: a VM without a PMU)"
    return "available"


def machine(bindir):
    cpu = flags = None
    cores = 0
    for line in (read("/proc/cpuinfo") or "").splitlines():
        if line.startswith("model name") and cpu is None:
            cpu = line.split(":", 1)[1].strip()
        if line.startswith("flags") and flags is None:
            flags = line.split(":", 1)[1].split()
        if line.startswith("processor"):
            cores += 1
    fam = re.search(r"cpu family\s*:\s*(\d+)", read("/proc/cpuinfo") or "")
    mod = re.search(r"^model\s*:\s*(\d+)", read("/proc/cpuinfo") or "", re.M)
    cache = os.path.join(bindir, "..", "CMakeCache.txt")
    cc, cflags = None, None
    for line in (read(cache) or "").splitlines():
        if line.startswith("CMAKE_C_COMPILER:"):
            cc = line.split("=", 1)[1]
        if line.startswith("CMAKE_C_FLAGS_RELEASE:") or \
           (line.startswith("CMAKE_BUILD_TYPE:") and cflags is None):
            cflags = line.split("=", 1)[1]
    return {
        "cpu": f"{cpu} (family {fam.group(1) if fam else '?'}, "
               f"model {mod.group(1) if mod else '?'})",
        "flags": flags or [],
        "cores": cores,
        "kernel": platform.release(),
        "libc": " ".join(platform.libc_ver()),
        "compiler": (run([cc or "cc", "--version"]).splitlines() or ["?"])[0],
        "build": cflags,
        "governor": read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
                    or "not readable (no cpufreq: a VM)",
        "turbo": read("/sys/devices/system/cpu/intel_pstate/no_turbo")
                 or "not readable",
        "perf_counters": perf_counters(),
    }


# ---- experiments -----------------------------------------------------------

def nm_rows(prog, labels):
    """Rows of the sizes (nm -S) of the symbols named in labels (symbol ->
    row name): the "static" lane, read from the built program."""
    rows = []
    for line in run(["nm", "-S", prog]).splitlines():
        f = line.split()
        if len(f) == 4 and f[3] in labels:
            v = float(int(f[1], 16))
            rows.append({"name": labels[f[3]], "unit": "bytes", "median": v,
                         "ci_low": v, "ci_high": v, "n": 1, "outliers": 0,
                         "lane": "static"})
    return rows


def e1(bindir, quick, tmp):
    """Seed 001: a pipe ping-pong between two threads with 8 disabled
    tracepoints on each side of every message, as none / flag checks /
    static keys (bench/e1_pipe.c), and the bytes the 8 tracepoints take
    in a function of their own (nm -S: the seed's text-size figure).
    And the workload where it matters (bench/e1_dense.c): 512 functions
    dense in disabled tracepoints, called in a random order, caches swept
    before each round."""
    prog = os.path.join(bindir, "e1_pipe")
    recs = raw_lines(bindir, "e1_pipe", tmp,
                     ["15", "1000"] if quick else ["41", "2000"])
    rows, comps, aa = seed_rows(recs)
    dense = raw_lines(bindir, "e1_dense", tmp,
                      ["15", "100000"] if quick else ["41", "200000"])
    drows, dcomps, _ = seed_rows(dense)
    rows += drows
    comps += dcomps
    dgot = {r["variant"]: r["samples"] for r in dense}
    dkf = compare("dense tracepoints, cold: 4 static keys per function",
                  dgot["4 static keys per function"],
                  "dense tracepoints, cold: 4 flag checks per function",
                  dgot["4 flag checks per function"])
    comps.append(dkf)
    rows += nm_rows(os.path.join(bindir, "e1_dense"), {
        "vn_000": "hot bytes of one dense function, no tracepoint",
        "vf_000": "hot bytes of one dense function, 4 flag checks",
        "vk_000": "hot bytes of one dense function, 4 static keys"})
    sizes = nm_rows(prog, {
        "e1_tp_flags": "bytes of a function with 8 flag checks",
        "e1_tp_keys": "bytes of a function with 8 static keys"})
    rows += sizes
    size_of = {("keys" if "static keys" in r["name"] else "flags"):
               int(r["median"]) for r in sizes}
    f = find(comps, "pipe round trip: 8 flag checks", "pipe round trip: no")
    k = find(comps, "pipe round trip: 8 static keys", "pipe round trip: no")
    got = {r["variant"]: r["samples"] for r in recs}
    kf = compare("pipe round trip: 8 static keys per side",
                 got["8 static keys per side"],
                 "pipe round trip: 8 flag checks per side",
                 got["8 flag checks per side"])
    comps.append(kf)
    df_ = find(dcomps, "4 flag checks", "no tracepoint")
    dk_ = find(dcomps, "4 static keys", "no tracepoint")
    verdict = (f"under cache and predictor pressure, per call: flags vs none "
               f"{said(df_)}, keys vs none {said(dk_)}, keys vs flags "
               f"{said(dkf)}; pipe test, "
               f"per round trip, flags vs none {said(f)}, keys vs none "
               f"{said(k)}, keys vs flags {said(kf)}; function bytes: keys "
               f"{size_of.get('keys', '?')} vs flags "
               f"{size_of.get('flags', '?')} (seed 001's pipe test: a few "
               "percent fewer instructions and branches, time within "
               "noise; the dense workload is where time differs)")
    return {"id": "E1", "seed": "001",
            "title": "disabled tracepoints: none, flags, static keys (dense "
                     "under pressure; pipe ping-pong)",
            "rows": rows, "comparisons": comps, "aa": aa,
            "lane_note": "static rows: nm -S of the built program",
            "verdict": verdict}


def e2(bindir, quick, tmp):
    """Seed 002's question at the call level: a direct call, a static
    call, and what users call through instead (a function pointer, a PLT
    call, a GNU ifunc, target_clones), in a chain x = f(x) (each call
    depends on the last). bench_sc_call interleaves them round by round."""
    out = os.path.join(tmp, "e2.json")
    rounds = "31" if quick else "201"
    subprocess.run([os.path.join(bindir, "bench_sc_call"), "--rounds", rounds,
                    "--json", out], check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        recs = [r for r in json.load(f) if r["loop"] == "x = f(x)"]
    base = next(r for r in recs if r["variant"] == "c_direct")
    rows, comps = [], []
    for r in recs:
        if r["variant"] == "c_calib":
            continue
        rows.append(row(r["name"], "ns/call", r["ns_per_call"], "clock"))
        if r is not base:
            comps.append(compare(r["name"], r["ns_per_call"], base["name"],
                                 base["ns_per_call"]))
    b = base["ns_per_call"]
    aa = compare("direct call (odd rounds)", b[1::2],
                 "direct call (even rounds)", b[0::2])
    sc = next(c for c in comps if c["a"].startswith("static_call, target in reach"))
    ptr = next(c for c in comps if c["a"].startswith("function pointer (indirect"))
    verdict = (f"static call {sc['ratio']:.2f}x a direct call "
               f"({'~' if sc['verdict'] == '~' else 'p=%.3g' % sc['p_value']}), "
               f"function pointer {ptr['ratio']:.2f}x "
               f"({'~' if ptr['verdict'] == '~' else 'p=%.3g' % ptr['p_value']}); "
               "seed 002 claims direct-call cost for static calls")
    return {"id": "E2", "seed": "002",
            "title": "indirect vs direct vs static call (x = f(x) chain)",
            "rows": rows, "comparisons": comps,
            "aa": {"ratio": aa["ratio"], "p_value": aa["p_value"]},
            "verdict": verdict}


def raw_lines(bindir, prog, tmp, args=()):
    """Run a seed program with SY_BENCH_RAW (bench/seeds.h): its
    {"loop", "variant", "unit", "samples"} lines, in the order measured.
    The program's own self-checks still apply: a failed one fails here."""
    out = os.path.join(tmp, prog + ".jsonl")
    env = dict(os.environ, SY_BENCH_RAW=out)
    subprocess.run([os.path.join(bindir, prog), *args], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    with open(out) as f:
        return [json.loads(l) for l in f if l.startswith("{")]


def by_loop(recs):
    loops = {}
    for r in recs:
        loops.setdefault(r["loop"], []).append(r)
    return loops


def seed_rows(recs, lane="clock"):
    """Rows for every (loop, variant); comparisons of each variant with
    its loop's first; A/A from the first variant of the first loop."""
    rows, comps = [], []
    loops = by_loop(recs)
    for loop, rs in loops.items():
        base = rs[0]
        for r in rs:
            rows.append(row(f"{loop}: {r['variant']}", r["unit"],
                            r["samples"], lane))
            if r is not base:
                comps.append(compare(f"{loop}: {r['variant']}", r["samples"],
                                     f"{loop}: {base['variant']}",
                                     base["samples"]))
    b = next(iter(loops.values()))[0]["samples"]
    aa = compare("odd rounds", b[1::2], "even rounds", b[0::2])
    return rows, comps, {"ratio": aa["ratio"], "p_value": aa["p_value"]}


def find(comps, a, b):
    return next((c for c in comps if a in c["a"] and b in c["b"]), None)


def said(c):
    if not c:
        return "not measured"
    return f"{c['ratio']:.3f}x ({'~' if c['verdict'] == '~' else 'p=%.2g' % c['p_value']})"


CG_NOTE = ("callgrind rows: instructions per iteration of each loop (v_*); "
           "valgrind has no rseq, so its static call sites run their "
           "detour: those rows count the detour path")


def callgrind_rows(bindir, prog, tmp):
    """The deterministic lane: instructions per iteration of each measured
    loop (the functions v_*), one run of the program's "callgrind" mode
    under valgrind --tool=callgrind --smc-check=all. Valgrind has no rseq:
    static call sites run their detour there, so those rows count the
    detour path (as bench/run_seeds.sh says). None without valgrind."""
    if not (shutil.which("valgrind") and shutil.which("callgrind_annotate")):
        return []
    cg = os.path.join(tmp, prog + ".cg")
    res = subprocess.run(["valgrind", "--tool=callgrind", "--smc-check=all",
                          f"--callgrind-out-file={cg}",
                          os.path.join(bindir, prog), "callgrind"],
                         capture_output=True, text=True, timeout=600)
    m = re.search(r"ran each loop (\d+) times", res.stdout)
    if res.returncode or not m:
        return []
    n = int(m.group(1))
    ann = run(["callgrind_annotate", "--inclusive=yes", cg])
    rows, seen = [], set()
    for line in ann.splitlines():
        mm = re.match(r"\s*([\d,]+) .*:(v_\w+)", line)
        if not mm or mm.group(2) in seen:
            continue
        seen.add(mm.group(2))
        v = int(mm.group(1).replace(",", "")) / n
        rows.append({"name": mm.group(2), "unit": "instructions/iter",
                     "median": v, "ci_low": v, "ci_high": v, "n": 1,
                     "outliers": 0, "lane": "callgrind"})
    return rows


def e3(bindir, quick, tmp):
    """Seed 000: restoring the flags with push; popf against test; jz
    (stc), as inline natives at static call sites, with the carry flag set
    and clear, and the plain call they replace (bench/seed000_popf.c)."""
    recs = raw_lines(bindir, "seed000_popf", tmp)
    rows, comps, aa = seed_rows(recs)
    rows += callgrind_rows(bindir, "seed000_popf", tmp)
    out = []
    for loop in ("CF set", "CF clear"):
        rs = {r["variant"]: r["samples"] for r in recs if r["loop"] == loop}
        popf = next((v for k, v in rs.items() if k.startswith("native push")), None)
        test = next((v for k, v in rs.items() if k.startswith("native testw")), None)
        if popf and test:
            c = compare("test", test, "popf", popf)
            comps.append(dict(c, a=f"{loop}: native testw; jz; stc",
                              b=f"{loop}: native push %rdi; popfq"))
            out.append(f"{loop}: test/jz vs popf {said(c)}")
    return {"id": "E3", "seed": "000",
            "title": "push; popf vs test; jz to restore the flags",
            "rows": rows, "comparisons": comps, "aa": aa,
            "lane_note": CG_NOTE,
            "verdict": "; ".join(out) + " (seed 000: the test form is the "
                       "cheaper one)"}


def e5(bindir, quick, tmp):
    """Seed 004: a lock/unlock loop with 1-4 threads where the unlock is a
    static call to an ordinary function (full save), a callee-save thunk,
    or a hand-written callee-save function (bench/seed004_unlock.c)."""
    recs = raw_lines(bindir, "seed004_unlock", tmp)
    rows, comps, aa = seed_rows(recs)
    rows += callgrind_rows(bindir, "seed004_unlock", tmp)
    c1 = find(comps, "1, CPU time: thunk", "1, CPU time: full")
    c2 = find(comps, "1, CPU time: fast", "1, CPU time: full")
    return {"id": "E5", "seed": "004",
            "title": "lock/unlock with 1-4 threads: full save vs callee-save",
            "rows": rows, "comparisons": comps, "aa": aa,
            "lane_note": CG_NOTE,
            "verdict": f"1 thread: thunk vs full {said(c1)}, hand-written "
                       f"callee-save vs full {said(c2)} (seed 004: callee-"
                       "save calls save the caller's register spills)"}


def e4(bindir, quick, tmp):
    """Seed 003: switchyard_memcpy (its strategies chosen by size, with
    thresholds measured per CPU) against glibc's memcpy, at sizes 1..64
    and 16 an octave to 8192, aligned or not, fixed or random sizes
    (bench/bench_memcpy.c; each point's contenders interleaved). Every
    point's rows go to the JSON; the verdict counts the points."""
    recs = raw_lines(bindir, "memcpy_bench", tmp, ["--quick"] if quick else [])
    rows, comps, per = [], [], {}
    loops = by_loop(recs)
    for loop, rs in loops.items():
        got = {r["variant"]: r["samples"] for r in rs}
        if "sy_memcpy" not in got or "glibc" not in got:
            continue
        for v in ("sy_memcpy", "glibc"):
            rows.append(row(f"{loop}: {v}", "ns/copy", got[v], "clock"))
        c = compare(f"{loop}: sy_memcpy", got["sy_memcpy"], f"{loop}: glibc",
                    got["glibc"])
        comps.append(c)
        cond = loop.split(" ", 1)[1]
        per.setdefault(cond, {"<": 0, "~": 0, ">": 0, "worst": 1.0})
        per[cond][c["verdict"]] += 1
        if c["verdict"] == ">":
            per[cond]["worst"] = max(per[cond]["worst"], c["ratio"])
    # the break-evens, from the calibration (src/calibrate.c): size, and
    # as its interval the sizes between which the two strategies are
    # within the noise (Mann-Whitney at 5%: lo and hi of
    # struct switchyard_memcpy_breakeven)
    cal = run([os.path.join(bindir, "memcpy_bench"), "--calibrate"])
    bes = []
    for line in cal.splitlines():
        m = re.match(r"(\S+)\s+short->loop (\d+) (\d+) (\d+)\s+"
                     r"loop->rep (\d+) (\d+) (\d+)", line)
        if not m:
            continue
        v = [None if int(x) == 4294967295 else float(x) for x in m.groups()[1:]]
        for what, (lo, size, hi) in (("short moves -> vector loop", v[0:3]),
                                     ("vector loop -> rep movsb", v[3:6])):
            rows.append({"name": f"break-even {what}, {m.group(1)}",
                         "unit": "bytes", "median": size, "ci_low": lo,
                         "ci_high": hi, "n": 1, "outliers": 0,
                         "lane": "clock"})
            if what.endswith("rep movsb"):
                bes.append(f"{m.group(1)} {size and int(size) or 'none'}")
    first = next(iter(loops.values()))[0]["samples"]
    aa = compare("odd rounds", first[1::2], "even rounds", first[0::2])
    verdict = ("loop -> rep movsb break-even: " + ", ".join(bes) + "; " if bes
               else "") + "; ".join(
        f"{cond}: faster at {v['<']}, ~ at {v['~']}, slower at {v['>']} "
        f"(worst {v['worst']:.2f}x)" for cond, v in per.items())
    return {"id": "E4", "seed": "003",
            "title": "switchyard_memcpy vs glibc memcpy per size and alignment",
            "rows": rows, "comparisons": comps,
            "lane_note": "break-even rows: the calibration's size, and as "
                         "its interval the sizes where the two strategies "
                         "are within the noise (none: not on the grid)",
            "aa": {"ratio": aa["ratio"], "p_value": aa["p_value"]},
            "verdict": verdict + " (points of sizes 1..8192; seed 003: no "
                       "single strategy wins everywhere, thresholds must be "
                       "measured)"}


EXPERIMENTS = {"E1": e1, "E2": e2, "E3": e3, "E4": e4, "E5": e5}
# --quick: under 3 minutes (E5 alone takes about 4 minutes: asked by name)
QUICK = ("E1", "E2", "E3", "E4")


# ---- reports ---------------------------------------------------------------

def fmt(v):
    return "-" if v is None else f"{v:.3f}"


def markdown(doc):
    m = doc["machine"]
    out = [f"# switchyard benchmarks", "",
           f"Command: `{doc['command']}`", "",
           f"Machine: {m['cpu']}, {m['cores']} CPUs; kernel {m['kernel']}; "
           f"{m['libc']}; {m['compiler']}; governor: {m['governor']}; "
           f"hardware counters: {m['perf_counters']}.", ""]
    for e in doc["experiments"]:
        out += [f"## {e['id']} (seed {e['seed']}): {e['title']}", "",
                "| | median | 95% CI | n | outliers | lane |",
                "|---|---|---|---|---|---|"]
        shown = e["rows"] if len(e["rows"]) <= 40 else []
        if not shown:
            out.append(f"| ({len(e['rows'])} rows: in the JSON) | | | | | |")
        for r in shown:
            out.append(f"| {r['name']} | {fmt(r['median'])} {r['unit']} | "
                       f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}] | {r['n']} | "
                       f"{r['outliers']} | {r['lane']} |")
        out += ["", "| A vs B | ratio | p | |", "|---|---|---|---|"]
        for c in (e["comparisons"] if len(e["comparisons"]) <= 40 else []):
            out.append(f"| {c['a']} vs {c['b']} | {c['ratio']:.3f} | "
                       f"{c['p_value']:.3g} | {c['verdict']} |")
        if e.get("lane_note"):
            out += ["", e["lane_note"] + "."]
        out += ["", f"A/A (noise floor): {e['aa']['ratio']:.3f}, "
                    f"p = {e['aa']['p_value']:.3g}.", "",
                f"Verdict: {e['verdict']}", ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(prog="switchyard bench")
    ap.add_argument("--bindir", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default="bench-results.json")
    ap.add_argument("--md", default="bench-report.md")
    ap.add_argument("experiments", nargs="*")
    a = ap.parse_args()
    ids = a.experiments or (list(QUICK) if a.quick else sorted(EXPERIMENTS))
    unknown = [i for i in ids if i not in EXPERIMENTS]
    if unknown:
        print(f"switchyard bench: unknown experiment {', '.join(unknown)} "
              f"(built so far: {', '.join(sorted(EXPERIMENTS))})",
              file=sys.stderr)
        return 2
    progs = {"E1": "e1_pipe", "E1d": "e1_dense", "E2": "bench_sc_call", "E3": "seed000_popf",
             "E4": "memcpy_bench", "E5": "seed004_unlock"}
    need = [progs[i] for i in ids] + (["e1_dense"] if "E1" in ids else [])
    missing = [p for p in need
               if not os.path.exists(os.path.join(a.bindir, p))]
    build = os.path.normpath(os.path.join(a.bindir, ".."))
    if missing and os.path.exists(os.path.join(build, "CMakeCache.txt")):
        # the programs are not built by default: build what is needed
        print(f"== building {' '.join(missing)}", file=sys.stderr, flush=True)
        subprocess.run(["cmake", "--build", build, "--target", *missing],
                       stdout=sys.stderr)
        missing = [p for p in missing
                   if not os.path.exists(os.path.join(a.bindir, p))]
    if missing:
        print(f"switchyard bench: not built in {a.bindir}: "
              f"{', '.join(missing)} (cmake --build build --target "
              f"{' '.join(missing)})", file=sys.stderr)
        return 1
    doc = {"format": FORMAT, "machine": machine(a.bindir),
           "command": " ".join(["switchyard", "bench"] + sys.argv[1:]),
           "experiments": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in ids:
            print(f"== {i} ...", file=sys.stderr, flush=True)
            doc["experiments"].append(EXPERIMENTS[i](a.bindir, a.quick, tmp))
    with open(a.json, "w") as f:
        json.dump(doc, f, indent=1)
    md = markdown(doc)
    with open(a.md, "w") as f:
        f.write(md + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
