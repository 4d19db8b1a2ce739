#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_bench_harness.py SYBENCH - the suite's statistics against values
computed by hand, and the report format on fabricated samples: the
harness's own figures must be right before any benchmark's are."""
import importlib.util
import json
import sys

spec = importlib.util.spec_from_file_location("sybench", sys.argv[1])
sb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sb)
bad = []


def check(cond, what):
    if not cond:
        bad.append(what)


# Mann-Whitney: complete separation of 5 + 5, U = 0:
# z = (0 - 12.5) / sqrt(5 * 5 * 11 / 12) = -2.6112, p = 0.009023
p = sb.mann_whitney_p([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
check(abs(p - 0.009023) < 1e-4, f"MWU separated: {p}")
# the same samples: p = 1; ties everywhere: no division by zero
check(abs(sb.mann_whitney_p([1, 2, 3], [1, 2, 3]) - 1) < 1e-9, "MWU equal")
check(sb.mann_whitney_p([5, 5, 5], [5, 5, 5]) == 1.0, "MWU all tied")
# median and its CI by order statistics: n = 25, 0-based ranks 7 and 18
# (floor(12.5 - 4.9) = 7, ceil(13.5 + 4.9) - 1 = 18): values 8 and 19
x = list(range(1, 26))
check(sb.median(x) == 13, "median odd")
check(sb.median([1, 2, 3, 4]) == 2.5, "median even")
check(sb.median_ci(x) == (8, 19), f"CI {sb.median_ci(x)}")
# outliers: Tukey fences, counted
check(sb.outliers([10] * 20 + [1000, -1000]) == 2, "outliers")
check(sb.outliers([1, 2, 3, 4, 5, 6, 7, 8]) == 0, "no outliers")
# a comparison says "~" when not significant, < or > otherwise
c = sb.compare("a", [1.0, 1.1, 0.9, 1.05] * 5, "b", [1.0, 1.1, 0.9, 1.05] * 5)
check(c["verdict"] == "~" and abs(c["ratio"] - 1) < 1e-9, f"A/A {c}")
c = sb.compare("a", [2.0 + i / 100 for i in range(20)], "b",
               [1.0 + i / 100 for i in range(20)])
check(c["verdict"] == ">" and c["p_value"] < 1e-6, f"A>B {c}")
# the report: every row field the format promises
r = sb.row("x", "ns", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], "clock")
for k in ("name", "unit", "median", "ci_low", "ci_high", "n", "outliers",
          "lane"):
    check(k in r, f"row field {k}")
doc = {"format": sb.FORMAT, "machine": {"cpu": "c", "cores": 2, "kernel": "k",
       "libc": "l", "compiler": "cc", "governor": "g", "perf_counters": "no"},
       "command": "switchyard bench", "experiments": [
           {"id": "E0", "seed": "000", "title": "t", "rows": [r],
            "comparisons": [c], "aa": {"ratio": 1.0, "p_value": 0.9},
            "verdict": "v"}]}
md = sb.markdown(doc)
check("| x | 4.500 ns |" in md and "A/A (noise floor)" in md and
      "| a vs b |" in md, "markdown")
json.loads(json.dumps(doc))

# the callgrind lane: callgrind_annotate --inclusive=yes output (the shape
# of valgrind 3.19's, cut down) into rows per (function, event), each
# count / iterations; "." is a zero; columns found by "Events shown:"
from suite.lanes import cg_geometry, parse_annotate  # noqa: E402
ann = """\
I1 cache: 32768 B, 64 B, 8-way associative
D1 cache: 49152 B, 64 B, 12-way associative
LL cache: 276824064 B, 64 B, 33-way associative
Events recorded:  Ir Dr I1mr Bc Bcm Bi Bim
Events shown:     Ir Dr I1mr Bc Bcm Bi Bim
--------------------------------------------------------------------------------
Ir                 Dr              I1mr          Bc             Bcm          Bi             Bim
--------------------------------------------------------------------------------
3,000,000 (100.0%) 500,000 (100.0%) 9,000 (100.0%) 400,000 (100.0%) 2,500 (100.0%) 20,000 (100.0%) 19,000 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                 Dr              I1mr          Bc             Bcm          Bi             Bim             file:function
--------------------------------------------------------------------------------
2,900,000 (96.67%) 480,000 (96.00%) 8,000 (88.89%) 390,000 (97.50%) 2,400 (96.00%) 20,000 (100.0%) 19,000 (100.0%)  ./csu/../sysdeps/nptl/libc_start_call_main.h:(below main) [/lib/libc.so.6]
  580,000 (19.33%) 140,000 (28.00%) 15,000 (99.99%) 100,000 (25.00%)     5 ( 0.00%) 20,000 (100.0%) 19,970 (99.99%)  /src/e1_dense.c:v_flags [/build/e1_dense]
  320,000 (10.67%)  60,000 (12.00%)      .           20,000 ( 5.00%)    10 ( 0.00%) 20,000 (100.0%) 19,970 (99.99%)  /src/e1_dense.c:v_none [/build/e1_dense]
   12,000 ( 0.40%)       .                1 ( 0.01%)       .                .               .               .            ???:v_none'2 [/build/e1_dense]
    4,000 ( 0.13%)   1,000 ( 0.20%)      .                .                .               .               .            /src/e1_dense.c:vn_000 [/build/e1_dense]
"""
got = {(r["name"], r["unit"]): r for r in parse_annotate(ann, 20000, per="call")}
check(set(n for n, _ in got) == {"v_flags", "v_none"},
      f"cg functions: {sorted(set(n for n, _ in got))}")
check(len(got) == 8, f"cg rows: {len(got)} (2 functions x 4 events)")
r = got.get(("v_flags", "instructions/call"), {})
check(r.get("median") == 29.0 and r.get("ci_low") == 29.0 and
      r.get("ci_high") == 29.0 and r.get("n") == 1 and
      r.get("lane") == "callgrind", f"cg Ir: {r}")
check(got.get(("v_flags", "I1 misses/call"), {}).get("median") == 0.75,
      "cg I1mr")
check(got.get(("v_flags", "cond. branch mispredicts/call"), {})
      .get("median") == 5 / 20000, "cg Bcm")
check(got.get(("v_flags", "indirect branch mispredicts/call"), {})
      .get("median") == 0.9985, "cg Bim")
check(got.get(("v_none", "I1 misses/call"), {}).get("median") == 0,
      "cg '.' is 0")
check(got.get(("v_none", "instructions/call"), {}).get("median") == 16,
      "cg v_none Ir")
# a names map picks the functions and names their rows; other events
# selections parse by their header
named = parse_annotate(ann, 10,
                       names={"vn_000": "one function"})
check([(r["name"], r["unit"], r["median"]) for r in named] ==
      [("one function", "instructions/iter", 400.0),
       ("one function", "I1 misses/iter", 0.0),
       ("one function", "cond. branch mispredicts/iter", 0.0),
       ("one function", "indirect branch mispredicts/iter", 0.0)],
      f"cg names map: {named}")
only = parse_annotate("Events shown: Ir Bim\n 50 (1%) 7 (2%)  f.c:v_x [a]\n",
                      5)
check([(r["unit"], r["median"]) for r in only] ==
      [("instructions/iter", 10.0), ("indirect branch mispredicts/iter", 1.4)],
      f"cg two events: {only}")
check(cg_geometry(ann).startswith("I1 32768 B, 64 B, 8-way associative; D1"),
      f"cg geometry: {cg_geometry(ann)}")
# pooling process-interleaved runs (PEERS): samples concatenated per
# (loop, variant) in run order, first-seen order kept, loops never mixed,
# a variant missing from a run not filled in, a unit clash refused
from suite.lanes import pool  # noqa: E402 (sybench put suite/ on the path)
runs = [[{"loop": "L", "variant": "a", "unit": "ns", "samples": [1, 2]},
         {"loop": "M", "variant": "a", "unit": "ns", "samples": [9]}],
        [{"loop": "L", "variant": "b", "unit": "ns", "samples": [5]}],
        [{"loop": "L", "variant": "a", "unit": "ns", "samples": [3]},
         {"loop": "L", "variant": "b", "unit": "ns", "samples": [6, 7]}]]
p_ = pool(runs)
check([(r["loop"], r["variant"], r["samples"]) for r in p_] ==
      [("L", "a", [1, 2, 3]), ("M", "a", [9]), ("L", "b", [5, 6, 7])],
      f"pool {p_}")
check(runs[0][0]["samples"] == [1, 2], "pool left its input alone")
try:
    pool([[{"loop": "L", "variant": "a", "unit": "ns", "samples": [1]}],
          [{"loop": "L", "variant": "a", "unit": "us", "samples": [1]}]])
    check(False, "pool mixed units")
except ValueError:
    pass
# the perf lane pooled beside the clock (PEERS' C side): per (loop,
# variant, event), into .perf, whether a run carries them in .perf
# (raw_lines) or mixed into its list (a raw file read whole); the clock
# records stay the list, and seed_rows() makes the perf rows
from suite.lanes import Raw, seed_rows  # noqa: E402


def _pf(v, ev, s, scaled=0):
    return {"loop": "L", "variant": v, "unit": ev + "/call", "lane": "perf",
            "event": ev, "type": "software", "scaled": scaled, "samples": s}


r1 = Raw([{"loop": "L", "variant": "a", "unit": "ns", "samples": [1]},
          {"loop": "L", "variant": "b", "unit": "ns", "samples": [2]}])
r1.perf = [_pf("a", "task-clock", [10]), _pf("a", "page-faults", [0]),
           _pf("b", "task-clock", [20], 1)]
r2 = [{"loop": "L", "variant": "a", "unit": "ns", "samples": [3]},
      _pf("a", "task-clock", [30]), _pf("a", "page-faults", [0]),
      {"loop": "L", "variant": "b", "unit": "ns", "samples": [4]},
      _pf("b", "task-clock", [40], 2)]
pp = pool([r1, r2])
check([(r["variant"], r["samples"]) for r in pp] ==
      [("a", [1, 3]), ("b", [2, 4])], f"pool perf: clock {list(pp)}")
check([(r["variant"], r["event"], r["samples"], r["scaled"])
       for r in pp.perf] ==
      [("a", "task-clock", [10, 30], 0), ("a", "page-faults", [0, 0], 0),
       ("b", "task-clock", [20, 40], 3)], f"pool perf: {pp.perf}")
check(r1.perf[0]["samples"] == [10], "pool left the perf input alone")
prow, pcmp, _ = seed_rows(pp)
check([r["name"] for r in prow if r["lane"] == "perf"] ==
      ["L: a [task-clock, software event]",
       "L: b [task-clock, software event]",
       "L: a [page-faults, software event]"], f"pool perf rows: {prow}")
check([c["a"] for c in pcmp if c["lane"] == "perf"] ==
      ["L: b [task-clock, software event]"], f"pool perf comps: {pcmp}")
# the JSON document: what json.loads reads back is the document, rows
# keep their samples, and each row is a line of its own
from suite.report import to_json  # noqa: E402
jd = {"format": "f", "machine": {"cpu": "c", "flags": ["a", "b"],
                                 "perf_events": {"cycles": "ENOENT"}},
      "experiments": [{"id": "E9", "rows": [sb.row("r1", "ns", [3, 1, 2],
                                                   "clock"),
                                            sb.row("r2", "ns", [5], "clock")],
                       "comparisons": [], "verdict": "v"}]}
txt = to_json(jd)
check(json.loads(txt) == jd, "to_json round trip")
check(jd["experiments"][0]["rows"][0]["samples"] == [3, 1, 2],
      "row keeps its samples in order")
check(sum(1 for l in txt.splitlines() if '"name": "r' in l) == 2 and
      all(l.count('"name"') <= 1 for l in txt.splitlines()),
      f"one row to a line: {txt}")
# a benchmark program that fails its self-check: BenchFailed, carrying
# its FAIL lines (the harness reports them and runs the rest)
from suite.lanes import BenchFailed, run_checked  # noqa: E402
try:
    run_checked(["sh", "-c", "echo ok; echo 'FAIL: CF lost'; exit 1"])
    check(False, "run_checked let a failure pass")
except BenchFailed as e:
    check("FAIL: CF lost" in str(e) and "exit 1" in str(e), f"BenchFailed: {e}")
check(run_checked(["sh", "-c", "echo fine"]).stdout == "fine\n",
      "run_checked output")
# no ratio to a zero or empty base: refused, not a ZeroDivisionError;
# an A/A is given only where the default lane has a usable baseline
for a_, b_ in (([1, 2], [0, 0, 0]), ([1], [])):
    try:
        sb.compare("a", a_, "b", b_)
        check(False, f"compare accepted base {b_}")
    except ValueError:
        pass
from suite.lanes import seed_rows  # noqa: E402
perf_only = [{"loop": "L", "variant": "v", "unit": "page-faults/call",
              "lane": "perf", "event": "page-faults", "type": "software",
              "samples": [0, 0, 0, 0, 0, 0]}]
_, _, aa_ = seed_rows(perf_only)
check(aa_ is None, f"A/A from a perf-only input: {aa_}")
_, _, aa_ = seed_rows([{"loop": "L", "variant": "v", "unit": "ns",
                        "samples": [5, 6, 5, 6, 5, 6]}])
check(aa_ is not None and abs(aa_["ratio"] - 1.2) < 1e-9,
      f"A/A odd vs even rounds: {aa_}")
for b in bad:
    print("FAIL:", b)
print("test_bench_harness:", "all checks passed" if not bad else f"{len(bad)} failed")
sys.exit(1 if bad else 0)
