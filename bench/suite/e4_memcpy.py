# SPDX-License-Identifier: MIT
"""E4 (seed 003): switchyard_memcpy against glibc's memcpy."""
import os
import re

from .lanes import by_loop, callgrind_rows, callgrind_run, cg_callees, \
    cg_get, cg_note, raw_lines, seed_rows
from .machine import run as sh
from .stats import compare, median, median_ci, row

PROGRAMS = ["e4_memcpy", "e4_cold"]
CALIBRATIONS = (3, 9)     # runs of the calibration: --quick, full
VECTOR = ("avx512", "avx2", "sse2")   # e4_memcpy's loops, widest first
LIBC_MARGIN = 1.02    # "slower than glibc": p < 0.05 and a ratio above


def run(bindir, quick, tmp):
    """Seed 003: switchyard_memcpy (its strategies chosen by size, with
    thresholds measured per CPU) against glibc's memcpy, at sizes 1..64
    and 16 an octave to 8192, aligned or not, fixed or random sizes
    (bench/e4_memcpy.c; each point's contenders interleaved). Every
    point's rows go to the JSON; the verdict counts the points."""
    recs = raw_lines(bindir, "e4_memcpy", tmp, ["--quick"] if quick else [])
    rows, comps, per, rep_vs = [], [], {}, {}
    loops = by_loop(recs)
    for loop, rs in loops.items():
        got = {r["variant"]: r["samples"] for r in rs}
        if "sy_memcpy" not in got or "glibc" not in got:
            continue
        for v in ("sy_memcpy", "glibc"):
            rows.append(row(f"{loop}: {v}", "ns/copy", got[v], "clock"))
        c = compare(f"{loop}: sy_memcpy", got["sy_memcpy"], f"{loop}: glibc",
                    got["glibc"])
        # slower than glibc: significant AND the medians over 2% apart
        # (with enough rounds a shift of a fraction of a cycle is
        # significant); a significant shift within 2% says "~"
        if c["verdict"] == ">" and c["ratio"] <= LIBC_MARGIN:
            c["verdict"] = "~"
            c["note"] = "significant, within 2%"
        comps.append(c)
        cond = loop.split(" ", 1)[1]
        per.setdefault(cond, {"<": 0, "~": 0, ">": 0, "worst": 1.0})
        per[cond][c["verdict"]] += 1
        if c["verdict"] == ">":
            per[cond]["worst"] = max(per[cond]["worst"], c["ratio"])
        # seed 003's own question: rep movsb against the widest vector
        # loop this CPU runs (switchyard's strategies called alone)
        vec = next((v for v in VECTOR if v in got), None)
        if vec and "rep" in got:
            for v in ("rep", vec):
                rows.append(row(f"{loop}: {v}", "ns/copy", got[v], "clock"))
            rc = compare(f"{loop}: rep", got["rep"], f"{loop}: {vec}",
                         got[vec])
            comps.append(rc)
            rep_vs.setdefault((cond, vec), []).append(
                (int(loop.split(" ", 1)[0]), rc["verdict"]))
    prows, pcomps, psaid = perf_points(recs)
    rows += prows
    comps += pcomps
    bes, brows = breakevens(bindir, CALIBRATIONS[0 if quick else 1])
    rows += brows
    crows, ccomps, cold = cold_calls(bindir, quick, tmp)
    ctl = control_lane(bindir, quick, tmp)
    rows += crows
    comps += ccomps
    # the deterministic lane: a few sizes, fixed and random (aligned), by
    # each, counted under callgrind (e4_memcpy's callgrind mode); rows
    # named as the clock rows
    sizes = (8, 64, 256, 2048, 8192)
    names = {f"v_{who}_{n}_{c}": f"{n} aligned {c}: {v}"
             for n in sizes for c in ("fixed", "random")
             for who, v in (("sy", "sy_memcpy"), ("glibc", "glibc"))}
    cg = callgrind_run(bindir, "e4_memcpy", tmp, ["callgrind"],
                       names=names, per="copy")
    rows += cg["rows"]
    cgv = flav = ""
    if not cg["skipped"]:
        sy = re.search(r"switchyard_memcpy: (.*)", cg["stdout"])
        gl = cg_callees(cg["file"], r"v_glibc_.*")
        # and outside valgrind (the clock lane's): the same mode, natively
        nat = re.search(r"switchyard_memcpy: (.*)", sh(
            [os.path.join(bindir, "e4_memcpy"), "callgrind"]))
        flav = (f"; under valgrind's CPUID switchyard_memcpy ran "
                f"{sy.group(1) if sy else '?'}; glibc's IFUNC chose "
                f"{', '.join(gl) or '?'} (natively, as in the clock rows, "
                f"switchyard_memcpy runs {nat.group(1) if nat else '?'})")
        rep = re.search(r"rep_min (\d+)", cg["stdout"])
        rep_min = int(rep.group(1)) if rep else 1 << 32
        def two(n, c, ev, fmt):
            v = [cg_get(cg["rows"], f"{n} aligned {c}: {w}", ev)
                 for w in ("sy_memcpy", "glibc")]
            return " / ".join("?" if x is None else fmt.format(x) for x in v)
        cgv = ("; callgrind, per copy, sy_memcpy / glibc: instructions at "
               "fixed sizes " + ", ".join(
                   f"{n}: {two(n, 'fixed', 'instructions', '{:.1f}')}"
                   for n in sizes)
               + "; cond. mispredicts at random sizes " + ", ".join(
                   f"{n}: {two(n, 'random', 'cond. branch mispredicts', '{:.2f}')}"
                   for n in sizes))
        big = [str(n) for n in sizes if n >= rep_min]
        if big:
            cgv += (f" (sy_memcpy at {', '.join(big)}: rep movsb, which "
                    "valgrind counts as one instruction a byte)")
    reps = []
    for (cond, vec), pts in rep_vs.items():
        # the grid's break-even: the smallest size from which rep movsb
        # is never significantly slower than the loop
        pts.sort()
        slow = [n for n, v in pts if v == ">"]
        start = next((n for n, _ in pts if not slow or n > slow[-1]), None)
        reps.append(f"{cond} {start if start is not None else 'none'} "
                    f"(faster at {sum(v == '<' for _, v in pts)}, ~ at "
                    f"{sum(v == '~' for _, v in pts)}, slower at "
                    f"{len(slow)})")
    first = next(iter(loops.values()))[0]["samples"]
    aa = compare("odd rounds", first[1::2], "even rounds", first[0::2])
    verdict = ("loop -> rep movsb break-even (calibration): " +
               ", ".join(bes) + "; " if bes else "") + (
        f"rep movsb vs the {rep_vs and next(iter(rep_vs))[1]} loop, "
        "never slower from (grid): " + ", ".join(reps) + "; " if reps
        else "") + cold + "; sy_memcpy vs glibc: " + "; ".join(
        f"{cond}: faster at {v['<']}, ~ at {v['~']}, slower at {v['>']} "
        f"(worst {v['worst']:.2f}x)" for cond, v in per.items()) + ctl + \
        psaid
    return {"id": "E4", "seed": "003",
            "title": "switchyard_memcpy vs glibc memcpy, rep movsb vs vector "
                     "loops, per size and alignment; cold calls",
            "rows": rows, "comparisons": comps,
            # the report's table: all but the grid's per-point rows of
            # the clock and perf lanes (the callgrind lane's 5 sizes stay)
            "summary": [r["name"] for r in rows
                        if r["lane"] not in ("clock", "perf") or
                        not re.match(r"\d+ (mis)?aligned ", r["name"])],
            "lane_note": f"break-even rows: the median of "
                         f"{CALIBRATIONS[0 if quick else 1]} calibrations' "
                         "sizes with its 95% CI (n: the calibrations that "
                         "found one on their grid, to 16 KiB); cold "
                         "rows: ns per 64 KiB code walk + copy "
                         "(bench/e4_cold.c): over the walk, a copy adds the "
                         "fetch of its own code, its execution overlapping "
                         "the next walk's fetch; "
                         + cg_note(cg, f"callgrind rows: {cg['n']} copies "
                                   "per point (aligned), each point in a "
                                   "function of its own, after a warm-up, "
                                   "under valgrind --tool=callgrind "
                                   "--smc-check=all --cache-sim=yes "
                                   "--branch-sim=yes: instructions, I1 "
                                   "misses, simulated conditional and "
                                   "indirect branch mispredicts per copy, "
                                   "the call through a volatile pointer "
                                   "included; valgrind counts every "
                                   "iteration of rep movsb as an "
                                   "instruction" + flav) + (
                             PERF_NOTE if prows else "") + (
                             "; " + CG_COLD if any(r["name"].startswith("v_")
                                                   for r in rows) else ""),
            "aa": {"ratio": aa["ratio"], "p_value": aa["p_value"]},
            "verdict": verdict + " (points of sizes 1..8192; seed 003: no "
                       "single strategy wins everywhere, thresholds must be "
                       "measured)" + cgv}

PERF_NOTE = ("; perf rows (per point, in the JSON): the measuring "
             "thread's own counters, user space, per copy, over the same "
             "batches as the clock rows (bench/common/perfctr.h)")

# the events the verdict sums up, where the machine counts them; else
# (software events) every event the run has
PERF_SAID = ("instructions", "branch-misses")


def perf_points(recs):
    """The perf lane's records of e4_memcpy (recs.perf): per point a
    row of each event for the contenders the clock rows show (sy_memcpy,
    glibc; rep and the widest vector loop), named as those with the
    event and its kind, and sy_memcpy against glibc within the event
    (not where glibc's median count is 0: no ratio). And the verdict's
    sentence: per condition and event, the median over the points of the
    per-copy medians, sy_memcpy / glibc ("" without perf records)."""
    got = {}
    for r in getattr(recs, "perf", ()):
        got.setdefault((r["loop"], r["event"]), {})[r["variant"]] = r
    rows, comps, over = [], [], {}
    for (loop, event), vs in got.items():
        if "sy_memcpy" not in vs or "glibc" not in vs:
            continue
        tag = f" [{event}, {vs['glibc'].get('type', '?')} event]"
        vec = next((v for v in VECTOR if v in vs), None)
        for v in ("sy_memcpy", "glibc") + (("rep", vec) if vec and "rep"
                                           in vs else ()):
            rows.append(row(f"{loop}: {v}{tag}", vs[v]["unit"],
                            vs[v]["samples"], "perf"))
        sy, gl = vs["sy_memcpy"]["samples"], vs["glibc"]["samples"]
        if median(gl) > 0:
            c = compare(f"{loop}: sy_memcpy{tag}", sy, f"{loop}: glibc{tag}",
                        gl)
            c["lane"] = "perf"
            comps.append(c)
        o = over.setdefault((loop.split(" ", 1)[1], event),
                            {"sy": [], "gl": [], "tag": tag})
        o["sy"].append(median(sy))
        o["gl"].append(median(gl))
    if not over:
        return rows, comps, ""
    events = [e for e in PERF_SAID if any(k[1] == e for k in over)] or \
        list(dict.fromkeys(k[1] for k in over))
    conds = list(dict.fromkeys(k[0] for k in over))
    kind = next(iter(over.values()))["tag"].split(", ")[-1].rstrip("]")
    return rows, comps, (
        f"; perf ({kind}s, per copy, sy_memcpy / glibc, the median over "
        f"the points): " + "; ".join(
            f"{cond}: " + ", ".join(
                f"{e} {median(over[cond, e]['sy']):.3g} / "
                f"{median(over[cond, e]['gl']):.3g}"
                for e in events if (cond, e) in over)
            for cond in conds))


CG_COLD = ("callgrind rows: per walk + copy (the walk alone: v_evict), "
           "under valgrind, whose CPUID is its own: glibc's IFUNC and "
           "switchyard's flavour may pick other variants than on the "
           "host")


def breakevens(bindir, runs):
    """The break-even sizes of the calibration (src/calibrate.c), run
    `runs` times: a calibration on a busy machine moves (seen since
    [7/10]: 8192 / 8192 / 16384 in three runs), so one run is not a
    figure. Per condition and threshold a row: the median of the sizes
    found with its 95% CI (order statistics, as every clock row's: with 9
    runs the 2nd smallest and the largest), n the runs that found one (the
    others found none on the grid: the strategies never crossed within 16
    KiB)."""
    found = {}
    for _ in range(runs):
        cal = sh([os.path.join(bindir, "e4_memcpy"), "--calibrate"])
        for line in cal.splitlines():
            m = re.match(r"(\S+)\s+short->loop (\d+) (\d+) (\d+)\s+"
                         r"loop->rep (\d+) (\d+) (\d+)", line)
            if not m:
                continue
            g = [int(x) for x in m.groups()[1:]]
            for what, size in (("short moves -> vector loop", g[1]),
                               ("vector loop -> rep movsb", g[4])):
                found.setdefault((what, m.group(1)), []).append(
                    None if size == 4294967295 else float(size))
    rows, bes = [], []
    for (what, cond), sizes in found.items():
        got = sorted(s for s in sizes if s is not None)
        med = median(got) if got else None
        lo, hi = median_ci(got) if got else (None, None)
        rows.append({"name": f"break-even {what}, {cond}", "unit": "bytes",
                     "median": med, "ci_low": lo, "ci_high": hi,
                     "n": len(got), "outliers": 0, "lane": "clock",
                     "samples": got})
        if what.endswith("rep movsb"):
            bes.append(f"{cond} {int(med) if got else 'none'}"
                       f" ({len(got)} of {len(sizes)} runs)")
    return bes, rows


def cold_calls(bindir, quick, tmp):
    """Copies with a cold instruction cache (bench/e4_cold.c): ns per 64
    KiB code walk + copy, the walk alone as the floor; comparisons of
    switchyard_memcpy with glibc and with rep movsb alone at each size;
    the copies' cold cost (median minus the walk's) for the verdict. And
    the callgrind lane: instructions (and what else the lane counts) per
    walk + copy."""
    recs = raw_lines(bindir, "e4_cold", tmp, ["21" if quick else "101"])
    # rows of every lane the program wrote, each contender against the
    # walk alone (its loop's first variant)
    rows, comps, _ = seed_rows(recs)
    cost = []
    for loop, rs in by_loop(recs).items():
        got = {r["variant"]: r["samples"] for r in rs}
        for other in ("glibc", "rep"):
            comps.append(compare(f"{loop}: sy_memcpy", got["sy_memcpy"],
                                 f"{loop}: {other}", got[other]))
        walk = median(got["evict"])
        cost.append(f"{loop.split()[-1]} B " + "/".join(
            f"{median(got[v]) - walk:+.0f}"
            for v in ("sy_memcpy", "glibc", "rep")))
        c = comps[-2]
        cost[-1] += f" ({'~' if c['verdict'] == '~' else c['verdict']})"
    cg = callgrind_rows(bindir, "e4_cold", tmp)
    rows += cg
    said = ("cold calls, ns over the code walk (sy_memcpy/glibc/rep; sy vs "
            "glibc): " + ", ".join(cost))
    # the deterministic lane's answer to the same question: the I-cache
    # lines each copy brings back after the walk (its I1 misses per walk
    # + copy, less the walk's own with an empty call)
    lines = []
    for n in (16, 64, 256, 1024, 4096):
        walk = cg_get(cg, f"v_evict_{n}", "I1 misses")
        got = [cg_get(cg, f"v_{c}_{n}", "I1 misses")
               for c in ("sy_memcpy", "glibc", "rep")]
        if walk is not None and None not in got:
            lines.append(f"{n} B " + "/".join(f"{g - walk:+.0f}" for g in got))
    if lines:
        said += ("; I1 misses per cold call over the walk's (callgrind, "
                 "sy_memcpy/glibc/rep): " + ", ".join(lines))
    return rows, comps, said


def control_lane(bindir, quick, tmp):
    """The A/A' control (e4_memcpy --control): glibc's memcpy against the
    same code at another address (its own objects from libc.a linked
    again, e4_glibc_copy.so in the build tree), counted by this module's
    rule (significant and over 2%) at the same points: the floor that
    placement alone gives "slower than glibc"; and glibc against itself
    through a second pointer (A/A), the harness's sanity check. The
    verdict's sentence; "" when the lane skipped (an install, no libc.a,
    a glibc whose memcpy is not among the objects: the program says
    why)."""
    try:
        recs = raw_lines(bindir, "e4_memcpy", tmp, ["--control"] +
                         (["--quick"] if quick else []))
    except FileNotFoundError:   # skipped: it wrote no samples
        return ""
    return control_said(recs)


def control_said(recs):
    """control_lane's sentence from e4_memcpy --control's records: per
    point loop "<n> <condition>" with glibc and "glibc copy", and loop
    "<n> <condition>, A/A" with glibc and "glibc again"."""
    got = {}
    for loop, rs in by_loop(recs).items():
        v = {r["variant"]: r["samples"] for r in rs}
        aa = loop.endswith(", A/A")
        other = "glibc again" if aa else "glibc copy"
        if "glibc" not in v or other not in v:
            continue
        c = compare(f"{loop}: {other}", v[other], f"{loop}: glibc",
                    v["glibc"])
        g = got.setdefault(aa, [0, 0, 0.0, 0])
        g[1] += 1
        if c["verdict"] == ">" and c["ratio"] > LIBC_MARGIN:
            g[0] += 1
            g[2] = max(g[2], c["ratio"])
        # the other way, by the same rule: placement cuts both ways
        if c["verdict"] == "<" and c["ratio"] < 1 / LIBC_MARGIN:
            g[3] += 1
    if False not in got or True not in got:
        return ""
    return "; " + "; ".join(
        f"{what}: slower at {got[aa][0]} of {got[aa][1]} points (worst "
        + (f"{got[aa][2]:.2f}x)" if got[aa][0] else "-)")
        + f", faster at {got[aa][3]}"
        for aa, what in ((False, "A/A' control: glibc's memcpy against the "
                          "same code at another address"),
                         (True, "A/A: glibc's memcpy against itself "
                          "through two pointers")))
