# SPDX-License-Identifier: MIT
"""E1 (seed 001): disabled tracepoints as none, flag checks, static keys."""
import os

from .lanes import PERF_NOTE, nm_rows, raw_lines, seed_rows
from .stats import compare, find, said

PROGRAMS = ["e1_pipe", "e1_dense"]


def run(bindir, quick, tmp):
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
            "lane_note": "static rows: nm -S of the built program" +
                         (PERF_NOTE if recs.perf or dense.perf else ""),
            "verdict": verdict}
