# SPDX-License-Identifier: MIT
"""The lanes a figure comes from: "clock" (raw samples the programs
write with SY_BENCH_RAW), "callgrind" (valgrind's instruction counts,
deterministic), "static" (sizes read from the built programs)."""
import json
import os
import re
import shutil
import subprocess

from .machine import run
from .stats import compare, row


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


def pool(runs):
    """Pool process-interleaved runs (A B A B ...: a list, in the order
    run, of record lists as raw_lines() returns them): one record per
    (loop, variant) in first-seen order, its samples every run's samples
    concatenated in run order. Drift of the machine between runs then
    hits every program alike, and a (loop, variant) missing from a run
    simply has fewer samples: nothing is filled in."""
    out, at = [], {}
    for recs in runs:
        for r in recs:
            k = (r["loop"], r["variant"])
            if k not in at:
                at[k] = dict(r, samples=[])
                out.append(at[k])
            if at[k]["unit"] != r["unit"]:
                raise ValueError(f"{k}: unit {r['unit']} after "
                                 f"{at[k]['unit']}")
            at[k]["samples"] += r["samples"]
    return out
