# SPDX-License-Identifier: MIT
"""E4 (seed 003): switchyard_memcpy against glibc's memcpy."""
import os
import re

from .lanes import by_loop, callgrind_run, cg_callees, cg_get, cg_note, \
    raw_lines
from .machine import run as run_cmd
from .stats import compare, row

PROGRAMS = ["memcpy_bench"]


def run(bindir, quick, tmp):
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
    cal = run_cmd([os.path.join(bindir, "memcpy_bench"), "--calibrate"])
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
    # the deterministic lane: a few sizes, fixed and random (aligned), by
    # each, counted under callgrind (memcpy_bench's callgrind mode); rows
    # named as the clock rows
    sizes = (8, 64, 256, 2048, 8192)
    names = {f"v_{who}_{n}_{c}": f"{n} aligned {c}: {v}"
             for n in sizes for c in ("fixed", "random")
             for who, v in (("sy", "sy_memcpy"), ("glibc", "glibc"))}
    cg = callgrind_run(bindir, "memcpy_bench", tmp, ["callgrind"],
                       names=names, per="copy")
    rows += cg["rows"]
    cgv = flav = ""
    if not cg["skipped"]:
        sy = re.search(r"switchyard_memcpy: (.*)", cg["stdout"])
        gl = cg_callees(cg["file"], r"v_glibc_.*")
        # and outside valgrind (the clock lane's): the same mode, natively
        nat = re.search(r"switchyard_memcpy: (.*)", run_cmd(
            [os.path.join(bindir, "memcpy_bench"), "callgrind"]))
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
                         "are within the noise (none: not on the grid); "
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
                                   "instruction" + flav),
            "aa": {"ratio": aa["ratio"], "p_value": aa["p_value"]},
            "verdict": verdict + " (points of sizes 1..8192; seed 003: no "
                       "single strategy wins everywhere, thresholds must be "
                       "measured)" + cgv}
