# SPDX-License-Identifier: MIT
"""E2 (seed 002): direct, static and indirect calls."""
import os
import json
import re

from .lanes import (CG_NOTE, Raw, callgrind_rows, callgrind_run,
                    cg_note, cg_said, raw_lines, run_checked, seed_rows)
from .machine import pin_cpu, pinned
from .stats import compare, find, row, said

DETOUR = " [detour path: no rseq under valgrind]"

PROGRAMS = ["e2_calls", "e2_pvlock"]


def run(bindir, quick, tmp):
    """Seed 002's question at the call level: a direct call, a static
    call, and what users call through instead (a function pointer, a PLT
    call, a GNU ifunc, target_clones), in a chain x = f(x) (each call
    depends on the last). e2_calls interleaves them round by round.
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
                            short, "{:.3f}")))
    return {"id": "E2", "seed": "002",
            "title": "indirect vs direct vs static call (x = f(x) chain; "
                     "the seed's lock/unlock chain)",
            "rows": rows, "comparisons": comps,
            "aa": {"ratio": aa["ratio"], "p_value": aa["p_value"]},
            "lane_note": note + (
                "; perf rows of the x = f(x) chain: e2_calls' "
                "measuring thread's counters (hardware: user space), per "
                "call, over the clock rows' batches (bench/common/perfctr.h)"
                if prows else "")
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
