# SPDX-License-Identifier: MIT
"""E2 (seed 002): direct, static and indirect calls."""
import os
import json
import re
import subprocess

from .lanes import (CG_NOTE, Raw, callgrind_rows, callgrind_run,
                    cg_note, cg_said, nm_rows, raw_lines, run_checked,
                    seed_rows)
from .machine import pin_cpu, pinned
from .stats import compare, find, median, median_ci, row, said

DETOUR = " [detour path: no rseq under valgrind]"

# e2_calls_poly_cfi (clang -fsanitize=cfi-icall) is built with
# e2_calls_poly where the toolchain can, and measured when it is there
PROGRAMS = ["e2_calls", "e2_calls_poly", "e2_pvlock"]
POLY_CFI = "e2_calls_poly_cfi"
# e2_calls_poly's configurations: FUNCS, and what they stress
POLY = (("512", "512 functions"), ("32", "32 functions (warm)"))
# its variants as the program names them, and the verdict's short names
POLY_SHORT = {"inline (no call)": "inline",
              "direct call": "direct",
              "static call": "static",
              "pointer (ops table, one implementation)": "pointer",
              "pointer, retpoline": "retpoline",
              "pointer, cfi-icall": "cfi-icall",
              "polymorphic pointer (4 implementations)": "polymorphic",
              "polymorphic pointer, retpoline": "polymorphic retpoline",
              "polymorphic pointer, cfi-icall": "polymorphic cfi-icall"}
POLY_CG = {"v_inline": "inline (no call)", "v_direct": "direct call",
           "v_static": "static call", "v_pointer":
           "pointer (ops table, one implementation)",
           "v_retpoline": "pointer, retpoline",
           "v_pointer_cfi": "pointer, cfi-icall",
           "v_poly": "polymorphic pointer (4 implementations)",
           "v_poly_retpoline": "polymorphic pointer, retpoline",
           "v_poly_cfi": "polymorphic pointer, cfi-icall"}
POLY_FN = {"inline (no call)": "vn_000", "direct call": "vd_000",
           "static call": "vs_000",
           "pointer (ops table, one implementation)": "vp_000",
           "pointer, retpoline": "vr_000", "pointer, cfi-icall": "vc_000"}


def poly_cost(got, v):
    """Per round, what variant v's calls cost over the inline floor
    against what direct calls cost over it: its median and 95% CI (the
    rounds are paired: the variants of a round ran within milliseconds)."""
    q = [(a - n) / (d - n) for a, d, n in
         zip(got[v], got["direct call"], got["inline (no call)"])
         if d > n]
    if len(q) < 3:
        return None
    return median(q), *median_ci(q)


def poly_rows(bindir, quick, tmp):
    """E2 where static calls are meant to pay (bench/e2_calls_poly.c): 512
    functions x 4 dependent calls over 64 targets, called in a random
    order, and the warm control (32 functions); in the gcc build and, if
    built, the clang -fsanitize=cfi-icall one. Per program and
    configuration: each variant's ns per call, compared with direct calls,
    and its calls' cost over the inline floor relative to direct calls'
    (per round); instructions per call on the patched path
    (single-stepped), callgrind's lane (static call sites on their detour
    there), bytes per function of 4 calls (nm -S). Returns rows,
    comparisons, verdict sentences and the lane note's part."""
    rows, comps, said_, notes = [], [], [], []
    progs = [("e2_calls_poly", "")]
    if os.path.exists(os.path.join(bindir, POLY_CFI)):
        progs.append((POLY_CFI, "clang -fsanitize=cfi-icall build, "))
    else:
        # an install has the programs but not this one (a build-tree
        # runpath); a build tree lacks it where clang could not build it
        where = ("not installed: run the suite from the build tree, "
                 "build/tools/switchyard bench E2"
                 if not os.path.exists(os.path.join(
                     os.path.dirname(os.path.abspath(bindir)),
                     "CMakeCache.txt"))
                 else "clang could not build -flto -fsanitize=cfi-icall "
                      "here, see bench/CMakeLists.txt")
        said_.append(f"cfi-icall: not measured (no e2_calls_poly_cfi: "
                     f"{where})")
    args = ["31", "100000"] if quick else ["101", "200000"]
    for prog, tag in progs:
        path = os.path.join(bindir, prog)
        sites = run_checked([path, "sites"], preexec_fn=pinned(pin_cpu()))
        patched = sites.stdout.count(" patched, calls its target")
        det = re.search(r"detour bytes per site: (\d+)", sites.stdout)
        for nf, what in POLY:
            recs = raw_lines(bindir, prog, tmp, args + [nf])
            for r in recs:
                r["loop"] = tag + r["loop"]
            loop = recs[0]["loop"]
            got = {r["variant"]: r["samples"] for r in recs}
            for r in recs:
                rows.append(row(f"{loop}: {r['variant']}", r["unit"],
                                r["samples"], "clock"))
            parts = []
            for v in got:
                if v in ("direct call", "inline (no call)"):
                    continue
                c = compare(f"{loop}: {v}", got[v], f"{loop}: direct call",
                            got["direct call"])
                comps.append(c)
                k = poly_cost(got, v)
                parts.append(f"{POLY_SHORT.get(v, v)} {said(c)}" + (
                    f" (its calls' cost over the floor {k[0]:.2f}x "
                    f"direct calls' [{k[1]:.2f}, {k[2]:.2f}])" if k else ""))
            said_.append(f"{tag}{what}: direct "
                         f"{median(got['direct call']):.2f} ns a call, "
                         "inline floor "
                         f"{median(got['inline (no call)']):.2f}; vs direct: "
                         + ", ".join(parts))
        # instructions per call on the patched path, single-stepped
        ic = subprocess.run([path, "icount", "100"], capture_output=True,
                            text=True, preexec_fn=pinned(pin_cpu()))
        icn = {m.group(1): float(m.group(2)) for m in re.finditer(
            r"icount (.+): ([\d.]+) instructions per call", ic.stdout)}
        for v, n in icn.items():
            rows.append({"name": f"{tag}e2_calls_poly: {v}", "unit":
                         "instructions/call (patched path, single-stepped)",
                         "median": n, "ci_low": n, "ci_high": n, "n": 1,
                         "outliers": 0, "lane": "single-step"})
        if icn:
            said_.append(f"{tag}instructions per call, single-stepped on "
                         "the patched path: " + ", ".join(
                             f"{POLY_SHORT.get(v, v)} {n:.2f}"
                             for v, n in icn.items()))
        else:
            said_.append(f"{tag}instructions per call not counted "
                         f"(single-stepping failed: exit {ic.returncode})")
        # callgrind: simulated I1 and predictors (static: the detour)
        names = {fn: f"{tag}e2_calls_poly: {v}" + (
            DETOUR if v == "static call" else "") for fn, v in POLY_CG.items()}
        cg = callgrind_run(bindir, prog, tmp, ["callgrind", "20000"],
                           names=names, per="call")
        rows += cg["rows"]
        if not cg["skipped"]:
            cgs = {names[fn]: POLY_SHORT[v] for fn, v in POLY_CG.items()}
            said_.append(f"{tag}callgrind per call (static: its detour): "
                         "instructions "
                         + cg_said(cg["rows"], "instructions", cgs, "{:.2f}")
                         + "; I1 misses "
                         + cg_said(cg["rows"], "I1 misses", cgs, "{:.3f}")
                         + "; simulated indirect mispredicts "
                         + cg_said(cg["rows"], "indirect branch mispredicts",
                                   cgs, "{:.3f}"))
        # bytes: a function of 4 call sites of each kind (nm -S; in the
        # cfi-icall build a function's body is <name>.cfi)
        sfx = ".cfi" if prog == POLY_CFI else ""
        sizes = nm_rows(path, {fn + sfx: f"{tag}bytes of a function of 4 "
                               f"calls: {v}" for v, fn in POLY_FN.items()})
        rows += sizes
        b = {r["name"].rsplit(": ", 1)[1]: r["median"] for r in sizes}
        if "direct call" in b:
            said_.append(f"{tag}bytes in line per call site (a function's "
                         "bytes over its 4 sites, a direct call's 5 as the "
                         "reference): " + ", ".join(
                             f"{POLY_SHORT[v]} "
                             f"{(n - b['direct call']) / 4 + 5:.1f}"
                             for v, n in b.items()
                             if v != "inline (no call)")
                         + (f"; out of line, a static call site's detour "
                            f"{det.group(1)} bytes" if det else ""))
        notes.append(f"{prog}: {patched} of 4 static call sites of vs_000 "
                     "patched to their target" + (
                         " (the rest on their detour: the static call rows "
                         "measure it)" if patched < 4 else "") + (
                         "; with cfi-icall a function's address is its "
                         "jump table entry (a jmp), so a static call site "
                         "calls that jmp" if prog == POLY_CFI else ""))
    return rows, comps, said_, notes


def run(bindir, quick, tmp):
    """Seed 002's question at the call level: a direct call, a static
    call, and what users call through instead (a function pointer, a PLT
    call, a GNU ifunc, target_clones), in a chain x = f(x) (each call
    depends on the last). e2_calls interleaves them round by round.
    Then the regime static calls exist for (poly_rows): many sites, many
    targets, a random order, the ops table with its implementations
    alive, retpoline and cfi-icall builds.
    And the seed's own chain, lock/unlock pairs through direct calls, an
    ops table, static calls, a native unlock (bench/e2_pvlock.c)."""
    out = os.path.join(tmp, "e2.json")
    # the perf lane of the chain (bench/common/perfctr.h), as raw_lines() reads
    # a seed program's: SY_BENCH_PERF passes through
    praw = os.path.join(tmp, "e2_calls.jsonl")
    if os.path.exists(praw):    # the program appends: this run's lines only
        os.unlink(praw)
    rounds = "31" if quick else "201"
    run_checked([os.path.join(bindir, "e2_calls"), "--rounds", rounds,
                 "--json", out], preexec_fn=pinned(pin_cpu()),
                env=dict(os.environ, SY_BENCH_RAW=praw))
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
    prows, pcomps = chain_perf(recs, praw)
    rows += prows
    comps += pcomps
    prow, pcomp, psaid, pnotes = poly_rows(bindir, quick, tmp)
    rows += prow
    comps += pcomp
    b = base["ns_per_call"]
    aa = compare("direct call (odd rounds)", b[1::2],
                 "direct call (even rounds)", b[0::2])
    # the seed's own chain: call -> call -> locked op -> return -> return
    lock = raw_lines(bindir, "e2_pvlock", tmp, ["11" if quick else "41"],
                     pin=False)
    lrows, lcomps, _ = seed_rows(lock)
    rows += lrows + callgrind_rows(bindir, "e2_pvlock", tmp)
    comps += lcomps
    chain = "; ".join(
        f"{n}: ops table {said(find(lcomps, n + ': (b)', n + ': (a)'))}, "
        f"static {said(find(lcomps, n + ': (c)', n + ': (a)'))}, static + "
        f"native unlock {said(find(lcomps, n + ': (d)', n + ': (a)'))}"
        for n in ("1 thread, ns/pair", "2 threads, ns/pair"))
    sc = next(c for c in comps if c["a"].startswith("static_call, target in reach"))
    ptr = next(c for c in comps if c["a"].startswith("function pointer (indirect"))
    # the deterministic lane: each chain loop once under callgrind (row
    # names as the clock rows'; static call sites are parked there)
    names = {r["variant"]: r["name"] + (DETOUR if "_static" in r["variant"]
                                        else "")
             for r in recs if r["variant"] != "c_calib"}
    cg = callgrind_run(bindir, "e2_calls", tmp, ["callgrind", "10000"],
                       names=names, per="call")
    rows += cg["rows"]
    short = {names["c_direct"]: "direct",
             names["c_static"]: "static call (detour)",
             names["c_pointer"]: "pointer",
             names["c_retpoline"]: "retpoline",
             names["c_plt"]: "PLT", names["c_ifunc"]: "ifunc"}
    if "c_clones" in names:
        short[names["c_clones"]] = "target_clones"
    clones = re.search(r"target_clones (.*)", cg["stdout"])
    sites = [" ".join(l.split(";")[0].split()[2:])
             for l in cg["stdout"].splitlines()
             if l.strip().startswith("site in")]
    note = cg_note(cg, "callgrind rows: e2_calls' callgrind mode, "
                   f"each x = f(x) loop once for {cg['n']} calls after a "
                   "warm-up, under valgrind --tool=callgrind "
                   "--smc-check=all --cache-sim=yes --branch-sim=yes: "
                   "instructions, I1 misses, simulated conditional and "
                   "indirect branch mispredicts per call, the loop's own "
                   "increment and compare included; valgrind has no rseq, "
                   "so the static call rows count the detour path, not "
                   "the patched call (sites as the run left them: "
                   + "; ".join(sites) + "); valgrind's branch simulation "
                   "counts indirect calls and jumps, not returns: a "
                   "retpoline (its indirect call made a return) has none"
                   + (f"; under valgrind's CPUID target_clones "
                      f"{clones.group(1)}" if clones else ""))
    verdict = (f"static call {said(sc)} a direct call, function pointer "
               f"{said(ptr)}"
               f" in the x = f(x) chain; lock/unlock pairs vs direct calls, {chain} "
               "(seed 002: patching the ops table's indirect calls into "
               "direct ones takes back its ~2%)"
               + ("" if cg["skipped"] else
                  "; instructions per call (callgrind): "
                  + cg_said(cg["rows"], "instructions", short, "{:.1f}")
                  + "; indirect mispredicts per call: "
                  + cg_said(cg["rows"], "indirect branch mispredicts",
                            short, "{:.3f}"))
               + "; many sites, many targets, a random order "
               "(e2_calls_poly), ns per call against direct calls: "
               + "; ".join(psaid))
    # the report's table (more than report.MAX_TABLE rows): every clock,
    # single-step and static row; the callgrind rows are in the JSON, the
    # plots and the verdict
    summary = [r["name"] for r in rows
               if r["lane"] in ("clock", "single-step", "static")]
    return {"id": "E2", "seed": "002", "summary": summary,
            "title": "indirect vs direct vs static call (x = f(x) chain; "
                     "many sites and targets in a random order, retpoline "
                     "and cfi-icall; the seed's lock/unlock chain)",
            "rows": rows, "comparisons": comps,
            "aa": {"ratio": aa["ratio"], "p_value": aa["p_value"]},
            "lane_note": note + (
                "; perf rows of the x = f(x) chain: e2_calls' "
                "measuring thread's counters (hardware: user space), per "
                "call, over the clock rows' batches (bench/common/perfctr.h)"
                if prows else "")
                         + "; e2_calls_poly rows: 512 (or 32) functions "
                         "of 4 dependent calls each over 64 targets, "
                         "called through a table in a random order, one "
                         "sample a batch's ns per call (a quarter of the "
                         "dispatch, a mispredicted indirect call, and of "
                         "the work between calls included: the inline "
                         "floor's time); single-step rows: instructions "
                         "per call on the patched path, ptrace "
                         "single-stepping a forked copy over 100 and 200 "
                         "random functions; " + "; ".join(pnotes)
                         + "; lock/unlock rows: bench/e2_pvlock.c "
                         "(1 thread: CPU time; 2 threads on one lock: wall "
                         "time), their callgrind rows (v_*): " + CG_NOTE,
            "verdict": verdict}


def chain_perf(recs, path):
    """The perf lane of e2_calls' chain: rows per event of the
    lines it wrote to path (SY_BENCH_RAW; none, or no file, without
    counters), each variant against the direct call (the loop's first)
    within its event. recs: the chain's records of the JSON, which the
    perf lines name by their "name"."""
    if not os.path.exists(path):
        return [], []
    # beside the clock records, named as the perf lines are, so that
    # seed_rows() has the clock lane's A/A to take (a perf-only set would
    # take it from a count that may be all 0: page-faults)
    perf = Raw({"loop": r["loop"], "variant": r["name"], "unit": "ns/call",
                "samples": r["ns_per_call"]} for r in recs
               if r["variant"] != "c_calib")
    with open(path) as f:
        perf.perf = [json.loads(l) for l in f if l.startswith("{")]
    if not perf.perf:
        return [], []
    # the clock rows E2 makes itself, named as the JSON's: left out here
    rows, comps, _ = seed_rows(perf)
    return ([r for r in rows if r["lane"] == "perf"],
            [c for c in comps if c["lane"] == "perf"])
