#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sybench.py - the benchmark suite's harness (issue [9/10]); run as
`switchyard bench [--quick] [--json FILE] [--md FILE] [EXPERIMENT...]`
(tools/switchyard.c execs it, installed in <libexecdir>/switchyard/bench
with the programs, or from a build tree) or directly:

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

Lanes: "clock" (CLOCK_MONOTONIC in the program); "perf" (the measuring
thread's counters through perf_event_open, user space, read once per
batch beside the clock, per iteration: bench/common/perfctr.h; hardware events
where the machine has them: these KVM guests do not, and the machine
record says which events open; SY_BENCH_PERF=sw gives software events
instead, their rows named as such, SY_BENCH_PERF=off none); "callgrind" (the
deterministic lane: one run of a program's callgrind mode under valgrind
--tool=callgrind --smc-check=all --cache-sim=yes --branch-sim=yes, each
measured function's inclusive counts divided by the iterations it ran;
one row per function and event, units "instructions/ITER", "I1
misses/ITER", "cond. branch mispredicts/ITER", "indirect branch
mispredicts/ITER" with ITER iter, call or copy; n = 1, the interval the
value itself; valgrind's simulated caches are the host's geometry, named
in the lane note; no rseq under valgrind: static call sites run their
detour there); "static" (sizes read from the built program, nm -S).
Comparisons stay within a lane (and an event).

Output: the JSON document below (--json FILE, default
bench-results.json) and a Markdown report (--md FILE, default
bench-report.md), with the machine in both, and the report's plots
beside it (suite/plot.py: PNGs drawn by gnuplot, named after the report,
bench-report-E1.png ...; none with --no-plots or without gnuplot, which
the report then says):

    {"format": "switchyard-bench/1",
     "machine": {"cpu", "flags", "cores", "kernel", "libc", "compiler",
                 "build", "governor", "turbo", "perf_counters",
                 "perf_events": {event: "opened" or errno name}, "pinning"},
     "command": "...",
     "experiments": [{"id", "title", "seed", "lane_note",
        "rows": [{"name", "unit", "median", "ci_low", "ci_high", "n",
                  "outliers", "lane", "samples": [...]}],
        "comparisons": [{"a", "b", "ratio", "p_value", "verdict",
                         "lane"}],
        "aa": {"ratio", "p_value"},
        "summary": [row names the Markdown tables when there are
                    more than 100 rows (E4)],
        "error": "..." (only when a program failed; then no rows),
        "verdict": "..."}]}

Experiments (each a module of suite/): E1 (seed 001: dense tracepoints
in three configurations, the pipe test, function bytes incl. getppid()),
E2 (seed 002: the x = f(x) call chain, the seed's lock/unlock chain), E3
(seed 000), E4 (seed 003: 704 points against glibc, rep movsb against
the vector loop, the calibration's break-evens, cold calls), E5 (seed
004), PEERS (the Rust crate static-keys: flip cost and disabled-site
cost, next to plain flags; cargo builds it; not in --quick). All have the
callgrind lane, and the perf lane in every program but the Rust peer's
(E2's x = f(x) chain and the lock/unlock pairs of one thread, E4's grid
and cold calls, E5's workers, each measuring thread its own counters). --quick: E1-E4, about a minute and a half here; the full run
about 7.5 minutes (doc/BENCHMARKS.md).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

# the suite's modules live next to this file (bench/suite/, copied into
# the build tree with it)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# the statistics, re-exported for tests/bench/test_bench_harness.py
from suite.stats import (median, median_ci, outliers,  # noqa: E402,F401
                         mann_whitney_p, row, compare)  # noqa: F401
from suite.machine import machine  # noqa: E402
from suite.report import markdown, to_json  # noqa: E402
from suite.plot import render  # noqa: E402
from suite.lanes import BenchFailed  # noqa: E402
from suite import (e1_tracepoints, e2_calls, e3_flags,  # noqa: E402
                   e4_memcpy, e5_callee_save, e6_nginx, peers)

FORMAT = "switchyard-bench/1"

# Each experiment is a module of suite/ with run(bindir, quick, tmp) ->
# the experiment's record, and PROGRAMS: the bench/ programs it runs.
EXPERIMENTS = {"E1": e1_tracepoints, "E2": e2_calls, "E3": e3_flags,
               "E4": e4_memcpy, "E5": e5_callee_save, "E6": e6_nginx,
               "PEERS": peers}
# --quick: under 3 minutes (E5 alone takes about 4 minutes, PEERS a
# cargo build and up to a minute: asked by name)
QUICK = ("E1", "E2", "E3", "E4")
# run only when named, not by a run that names none: E6 downloads and
# builds nginx and takes about 5 minutes (suite/e6_nginx.py)
BY_NAME = ("E6",)


def main():
    ap = argparse.ArgumentParser(prog="switchyard bench")
    ap.add_argument("--bindir", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default="bench-results.json")
    ap.add_argument("--md", default="bench-report.md")
    ap.add_argument("--no-plots", action="store_true",
                    help="no PNGs (they need gnuplot)")
    ap.add_argument("experiments", nargs="*")
    a = ap.parse_args()
    ids = a.experiments or (list(QUICK) if a.quick else
                            sorted(set(EXPERIMENTS) - set(BY_NAME)))
    unknown = [i for i in ids if i not in EXPERIMENTS]
    if unknown:
        print(f"switchyard bench: unknown experiment {', '.join(unknown)} "
              f"(experiments: {', '.join(sorted(EXPERIMENTS))})",
              file=sys.stderr)
        return 2
    need = [p for i in ids for p in EXPERIMENTS[i].PROGRAMS]
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
    if missing and os.path.exists(os.path.join(build, "CMakeCache.txt")):
        print(f"switchyard bench: not built in {a.bindir}: "
              f"{', '.join(missing)} (cmake --build build --target "
              f"{' '.join(missing)})", file=sys.stderr)
        return 1
    if missing:     # an install (<libexecdir>/switchyard/bench)
        print(f"switchyard bench: not installed in {a.bindir}: "
              f"{', '.join(missing)} (install a build configured with "
              "-DSWITCHYARD_INSTALL_BENCH=ON)", file=sys.stderr)
        return 1
    # the command as typed (the tool adds --bindir: not the user's)
    argv = sys.argv[1:]
    if "--bindir" in argv and argv.index("--bindir") + 1 < len(argv):
        k = argv.index("--bindir")
        argv = argv[:k] + argv[k + 2:]
    doc = {"format": FORMAT, "machine": machine(a.bindir),
           "command": " ".join(["switchyard", "bench"] + argv),
           "experiments": []}
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in ids:
            print(f"== {i} ...", file=sys.stderr, flush=True)
            try:
                doc["experiments"].append(
                    EXPERIMENTS[i].run(a.bindir, a.quick, tmp))
            except Exception as e:  # noqa: BLE001 (any, by design)
                # a program's self-check failed (BenchFailed), it could
                # not run, or its output lacked what the experiment reads:
                # the experiment says so, the others still run and their
                # reports are written, and the exit status says it
                if not isinstance(e, (BenchFailed, subprocess.SubprocessError,
                                      OSError)):
                    e = f"{type(e).__name__}: {e} (in the experiment's " \
                        "harness code: a program's output it did not expect)"
                print(f"switchyard bench: {i} FAILED: {e}", file=sys.stderr)
                failed.append(i)
                doc["experiments"].append({
                    "id": i, "seed": "".join(re.findall(
                        r"seed (\d+)", EXPERIMENTS[i].__doc__ or "")[:1])
                    or "-",
                    "title": (EXPERIMENTS[i].__doc__ or i).strip(),
                    "rows": [], "comparisons": [], "error": str(e),
                    "verdict": f"FAILED: {e}"})
    with open(a.json, "w") as f:
        f.write(to_json(doc) + "\n")
    plots, note = None, "left out (--no-plots)"
    if not a.no_plots:
        plots = render(doc, a.md)
        note = None if plots is not None else "gnuplot not installed"
        for cap, _, err in [f for fs in (plots or {}).values() for f in fs]:
            if err:
                print(f"switchyard bench: {cap}: plot failed: {err}",
                      file=sys.stderr)
    md = markdown(doc, plots, note)
    with open(a.md, "w") as f:
        f.write(md + "\n")
    print(md)
    if failed:
        print(f"switchyard bench: FAILED: {', '.join(failed)} (the reports "
              "say why)", file=sys.stderr)
        return 1
    # an experiment asked for by name that measured nothing (a tool
    # missing): what was asked did not happen
    skipped = [e["id"] for e in doc["experiments"]
               if e["id"] in (a.experiments or [])
               and str(e.get("verdict", "")).startswith("SKIP")]
    if skipped:
        print(f"switchyard bench: SKIPPED: {', '.join(skipped)} (named, "
              "but not measured: the reports say why)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
