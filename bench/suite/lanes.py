# SPDX-License-Identifier: MIT
"""The lanes a figure comes from: "clock" (raw samples the programs
write with SY_BENCH_RAW), "perf" (the measuring thread's counters, read
per batch beside the clock: bench/common/perfctr.h; hardware events where the
machine has them, software ones with SY_BENCH_PERF=sw), "callgrind"
(valgrind's instruction counts, deterministic), "static" (sizes read
from the built programs)."""
import json
import os
import re
import shutil
import subprocess

from .machine import pin_cpu, pinned, run
from .stats import compare, median, row


class BenchFailed(Exception):
    """A benchmark program exited non-zero: its own self-check failed
    (the message carries its FAIL lines), or it could not run."""


def run_checked(cmd, **kw):
    """subprocess.run(cmd) with stdout captured; BenchFailed, with the
    program's FAIL lines (or its last lines), when it exits non-zero."""
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode:
        out = (p.stdout + p.stderr).splitlines()
        why = [l for l in out if "FAIL" in l] or out[-3:]
        raise BenchFailed(f"{os.path.basename(cmd[0])} "
                          f"{' '.join(cmd[1:])}: exit {p.returncode}: "
                          + " / ".join(why))
    return p


class Raw(list):
    """A program's clock records, in the order measured (what every
    consumer indexes by variant), with its perf lane's records beside
    them in .perf (seed_rows makes their rows)."""
    perf = ()


def raw_lines(bindir, prog, tmp, args=(), pin=True):
    """Run a seed program with SY_BENCH_RAW (bench/common/stats.h): its
    {"loop", "variant", "unit", "samples"} lines, in the order measured;
    the lines of another lane ({"lane": "perf", "event", ...}, from
    bench/common/perfctr.h) in .perf. SY_BENCH_PERF passes through (unset: the
    hardware counters, where they open). The program's own self-checks
    still apply: a failed one fails here. pin: run it on one CPU
    (machine.pin_cpu), for single-threaded programs; the multi-threaded
    ones pass False."""
    out = os.path.join(tmp, prog + ".jsonl")
    if os.path.exists(out):     # the program appends: one run's lines only
        os.unlink(out)
    env = dict(os.environ, SY_BENCH_RAW=out)
    run_checked([os.path.join(bindir, prog), *args], env=env,
                preexec_fn=pinned(pin_cpu() if pin else None))
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
    # the A/A of the default lane's first variant; none without one (a
    # perf-only input) or with too few samples or a zero median
    first = next((k for k in order if k[0] == lane), None)
    b = groups[first][0]["samples"] if first else []
    if len(b) < 4 or median(b[1::2]) == 0 or median(b[0::2]) == 0:
        return rows, comps, None
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


# The events of the deterministic lane: callgrind's names (--cache-sim=yes
# --branch-sim=yes) and the unit a row gives them, per iteration
CG_EVENTS = (("Ir", "instructions"), ("I1mr", "I1 misses"),
             ("Bcm", "cond. branch mispredicts"),
             ("Bim", "indirect branch mispredicts"))

CG_NOTE = ("callgrind rows: valgrind --tool=callgrind --smc-check=all "
           "--cache-sim=yes --branch-sim=yes, one run: instructions, I1 "
           "misses, simulated conditional and indirect branch mispredicts "
           "per iteration of each loop (v_*, inclusive of what it calls); "
           "valgrind has no rseq, so its static call sites run their "
           "detour: those rows count the detour path")


def parse_annotate(text, n, names=None, per="iter", lane="callgrind"):
    """Rows from `callgrind_annotate --inclusive=yes` output: one per
    (function, event of CG_EVENTS), the function's inclusive count
    divided by n (the iterations the program says it ran). names maps a
    function to its row name; without it, every function named v_* is
    a row under its own name. The columns are read from the "Events
    shown:" line, so any event selection parses; "." is a zero."""
    events, rows, seen = None, [], set()
    for line in text.splitlines():
        if line.startswith("Events shown:"):
            events = line.split(":", 1)[1].split()
            continue
        if events is None:
            continue
        # counts are "1,234 (12.34%)" or "." (zero): drop the percentages
        f = re.sub(r"\(\s*[\d.]+%\)", " ", line).split()
        if len(f) <= len(events) or \
           not all(re.fullmatch(r"[\d,]+|\.", x) for x in f[:len(events)]):
            continue
        where = " ".join(f[len(events):])
        fn = re.sub(r"\s+\[.*\]$", "", where).rsplit(":", 1)[-1]
        name = (names.get(fn) if names is not None
                else (fn if re.fullmatch(r"v_\w+", fn) else None))
        if name is None or fn in seen:
            continue	# a function is listed once inclusive: keep the first
        seen.add(fn)
        got = {e: (0 if x == "." else int(x.replace(",", "")))
               for e, x in zip(events, f)}
        for ev, label in CG_EVENTS:
            if ev not in got:
                continue
            v = got[ev] / n
            rows.append({"name": name, "unit": f"{label}/{per}",
                         "median": v, "ci_low": v, "ci_high": v, "n": 1,
                         "outliers": 0, "lane": lane})
    return rows


def cg_geometry(text):
    """The simulated caches, from the annotate (or callgrind.out) header:
    valgrind takes them from the host's CPUID unless told otherwise."""
    g = re.findall(r"^(?:desc: )?(I1|D1|LL) cache:\s*(.+)$", text, re.M)
    return "; ".join(f"{c} {d.strip()}" for c, d in g)


def callgrind_run(bindir, prog, tmp, args=("callgrind",), names=None,
                  per="iter"):
    """The deterministic lane: one run of the program's callgrind mode
    (it prints "ran each loop N times") under valgrind --tool=callgrind
    --smc-check=all (the library rewrites code: valgrind must translate
    it again) --cache-sim=yes --branch-sim=yes; rows per parse_annotate.
    Valgrind has no rseq: static call sites run their detour there, so
    those rows count the detour path (as bench/extra/run_seeds.sh says).
    Returns {"rows", "n", "geometry", "stdout", "skipped"}: skipped is
    why there are no rows (no valgrind, or the run failed), else None."""
    res = {"rows": [], "n": 0, "geometry": "", "stdout": "", "file": None,
           "skipped": None}
    if not (shutil.which("valgrind") and shutil.which("callgrind_annotate")):
        res["skipped"] = "valgrind not installed"
        return res
    cg = os.path.join(tmp, prog + ".cg")
    try:
        p = subprocess.run(["valgrind", "--tool=callgrind", "--smc-check=all",
                            "--cache-sim=yes", "--branch-sim=yes",
                            f"--callgrind-out-file={cg}",
                            os.path.join(bindir, prog), *args],
                           capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        res["skipped"] = "the run under valgrind timed out"
        return res
    res["stdout"] = p.stdout
    m = re.search(r"ran each loop (\d+) times", p.stdout)
    if p.returncode or not m:
        err = [l for l in p.stderr.splitlines() if not l.startswith("==")]
        res["skipped"] = (f"{prog} failed under valgrind (exit "
                          f"{p.returncode}{': ' + err[-1] if err else ''})")
        return res
    res["n"] = int(m.group(1))
    res["file"] = cg
    ann = run(["callgrind_annotate", "--inclusive=yes", "--threshold=100",
               "--auto=no",
               cg])
    res["geometry"] = cg_geometry(ann)
    res["rows"] = parse_annotate(ann, res["n"], names, per)
    if not res["rows"]:
        res["skipped"] = "no measured function in callgrind_annotate's output"
    return res


def callgrind_rows(bindir, prog, tmp):
    """callgrind_run's rows alone ([] when skipped)."""
    return callgrind_run(bindir, prog, tmp)["rows"]


def cg_said(rows, label, names, fmt="{:.2f}"):
    """ "a X, b Y, ..." for the lane's rows of one event: names maps a row
    name to what the sentence calls it."""
    return ", ".join(f"{short} {fmt.format(v)}" for name, short in
                     names.items()
                     if (v := cg_get(rows, name, label)) is not None)


def cg_note(res, what=CG_NOTE):
    """The lane note: what the rows are, with the simulated caches; or
    why the lane was skipped."""
    if res["skipped"]:
        return f"callgrind lane skipped: {res['skipped']}"
    return f"{what}; simulated caches (valgrind's, from the host's " \
           f"CPUID): {res['geometry']}"


def cg_note_instructions(res):
    """cg_note() with each measured function's instructions per
    iteration (the seeds' loops v_*, E3 and E5)."""
    if res["skipped"]:
        return cg_note(res)
    return cg_note(res) + "; instructions/iter: " + cg_said(
        res["rows"], "instructions",
        {r["name"]: r["name"] for r in res["rows"]}, "{:.1f}")


def cg_callees(path, caller):
    """The functions that functions whose names match the regex caller
    call, read from a callgrind.out file (names compressed as "(id)
    name" at first use, "(id)" after)."""
    names, cur, out = {}, None, set()
    with open(path) as f:
        for line in f:
            m = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
            if not m:
                continue
            kind, i, nm = m.groups()
            if nm:
                names[i] = nm
            nm = names.get(i, i)
            if kind == "fn":
                cur = nm
            elif cur and re.fullmatch(caller, cur):
                out.add(nm)
    return sorted(out)


def cg_get(rows, name, label):
    """The value of the lane's row (name, event label), or None."""
    return next((r["median"] for r in rows if r["name"] == name and
                 r["unit"].startswith(label + "/")), None)


def pool(runs):
    """Pool process-interleaved runs (A B A B ...: a list, in the order
    run, of record lists as raw_lines() returns them): one record per
    (loop, variant) in first-seen order, its samples every run's samples
    concatenated in run order. Drift of the machine between runs then
    hits every program alike, and a (loop, variant) missing from a run
    simply has fewer samples: nothing is filled in. The perf lane's
    records (a run's .perf, or records of another lane in the list
    itself, as a raw file read whole gives them) are pooled the same
    way per (loop, variant, event), into the result's .perf: a Raw, as
    raw_lines() returns, for seed_rows()."""
    out, at = Raw(), {}
    out.perf = []
    for recs in runs:
        for r in list(recs) + list(getattr(recs, "perf", ())):
            lane = r.get("lane", "clock")
            k = (r["loop"], r["variant"], lane, r.get("event"))
            if k not in at:
                at[k] = dict(r, samples=[])
                if "scaled" in r:
                    at[k]["scaled"] = 0
                (out if lane == "clock" else out.perf).append(at[k])
            if at[k]["unit"] != r["unit"]:
                raise ValueError(f"{k}: unit {r['unit']} after "
                                 f"{at[k]['unit']}")
            at[k]["samples"] += r["samples"]
            # the batches multiplexed (and scaled), over every run
            if "scaled" in r:
                at[k]["scaled"] += r["scaled"]
    return out
