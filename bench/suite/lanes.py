# SPDX-License-Identifier: MIT
"""The lanes a figure comes from: "clock" (raw samples the programs
write with SY_BENCH_RAW), "perf" (the measuring thread's counters, read
per batch beside the clock: bench/perfctr.h; hardware events where the
machine has them, software ones with SY_BENCH_PERF=sw), "callgrind"
(valgrind's instruction counts, deterministic), "static" (sizes read
from the built programs)."""
import json
import os
import re
import shutil
import subprocess

from .machine import run
from .stats import compare, median, row


class Raw(list):
    """A program's clock records, in the order measured (what every
    consumer indexes by variant), with its perf lane's records beside
    them in .perf (seed_rows makes their rows)."""
    perf = ()


def raw_lines(bindir, prog, tmp, args=()):
    """Run a seed program with SY_BENCH_RAW (bench/stats.h): its
    {"loop", "variant", "unit", "samples"} lines, in the order measured;
    the lines of another lane ({"lane": "perf", "event", ...}, from
    bench/perfctr.h) in .perf. SY_BENCH_PERF passes through (unset: the
    hardware counters, where they open). The program's own self-checks
    still apply: a failed one fails here."""
    out = os.path.join(tmp, prog + ".jsonl")
    env = dict(os.environ, SY_BENCH_RAW=out)
    if os.path.exists(out):
        os.unlink(out)
    subprocess.run([os.path.join(bindir, prog), *args], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    with open(out) as f:
        recs = [json.loads(l) for l in f if l.startswith("{")]
    raw = Raw(r for r in recs if r.get("lane", "clock") == "clock")
    raw.perf = [r for r in recs if r.get("lane", "clock") != "clock"]
    return raw


PERF_NOTE = ("; perf rows: the measuring thread's own counters, user "
             "space, per iteration (the pipe test's: the main thread's "
             "half of a round trip, not the echo thread's nor the "
             "kernel's pipe work)")


def by_loop(recs):
    loops = {}
    for r in recs:
        loops.setdefault(r["loop"], []).append(r)
    return loops


def seed_rows(recs, lane="clock"):
    """Rows for every (loop, variant) of every lane; comparisons of each
    variant with its loop's first, within a lane and an event (a clock
    ns is never set against an instruction count); A/A from the first
    variant of the first loop of the clock lane. A record's own "lane"
    wins over lane; the perf lane's rows are named with their event and
    its kind ("[task-clock, software event]": never a hardware name for
    a software count), and come after the clock lane's rows and
    comparisons (find() meets the clock's first)."""
    rows, comps = [], []
    recs = list(recs) + list(getattr(recs, "perf", ()))
    groups = {}
    for r in recs:
        key = (r.get("lane", lane), r.get("event"), r["loop"])
        groups.setdefault(key, []).append(r)
    # the default lane first, in the order measured
    order = sorted(groups, key=lambda k: k[0] != lane)
    for key in order:
        rlane, event, loop = key
        rs = groups[key]
        tag = (f" [{event}, {rs[0].get('type', '?')} event]" if event
               else "")
        base = rs[0]
        for r in rs:
            rows.append(row(f"{loop}: {r['variant']}{tag}", r["unit"],
                            r["samples"], rlane))
            # a count that is 0 in the base (no page faults in the
            # loop) has no ratio: its rows say it, no comparison
            if r is not base and median(base["samples"]) > 0:
                c = compare(f"{loop}: {r['variant']}{tag}", r["samples"],
                            f"{loop}: {base['variant']}{tag}",
                            base["samples"])
                c["lane"] = rlane
                comps.append(c)
    first = next((k for k in order if k[0] == lane), order[0])
    b = groups[first][0]["samples"]
    aa = compare("odd rounds", b[1::2], "even rounds", b[0::2])
    return rows, comps, {"ratio": aa["ratio"], "p_value": aa["p_value"]}


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
