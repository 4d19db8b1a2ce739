# SPDX-License-Identifier: MIT
"""E1 (seed 001): disabled tracepoints as none, flag checks, static keys."""
import os

from .lanes import PERF_NOTE, callgrind_run, cg_note, cg_said, nm_rows, \
    pool, raw_lines, seed_rows
from .stats import compare, find, median, median_ci, row, said

PROGRAMS = ["e1_pipe", "e1_dense"]
# e1_dense's configurations: extra arguments (FUNCS [DATA_MIB]), and what
# they stress
DENSE = ((["512"], "512 functions (text > L1I)"),
         (["32"], "32 functions (warm: text and flags fit L1)"),
         (["512", "64"], "512 functions + a random 64 MiB data line "
                         "per call"))
# The pipe test: processes, and each one's ROUNDS and M (round trips per
# round). With both threads on one CPU a round trip takes ~4 us; rounds of
# 125 round trips (half a millisecond) interleave the variants closely
# enough that their per-round differences resolve ~1 ns within a process.
# Between processes the difference moves by more (a few ns, for reasons
# not established), so the test runs several and an effect counts as seen
# only when every process sees it on the same side.
PIPE = {True: (3, ["401", "125"]), False: (6, ["801", "125"])}
# the per-round differences reported: (variant, minus variant, short)
PIPE_DIFFS = (("8 flag checks per side", "no tracepoint", "flags - none"),
              ("8 static keys per side", "no tracepoint", "keys - none"),
              ("8 static keys per side", "8 flag checks per side",
               "keys - flags"))


def pipe_diffs(runs):
    """Per-round comparisons PIPE_DIFFS over the pooled runs (rounds are
    paired within a process: the variants of a round ran within a
    millisecond of each other): a row each of the per-round ratios (a
    ratio, so that every row stays positive and plots), and a sentence
    each in ns: the median per-round difference and its CI, each
    process's median, and whether every process's interval excludes 0 on
    the same side (seen) or not."""
    rows, said_ = [], []
    loop = runs[0][0]["loop"]
    for a, b, short in PIPE_DIFFS:
        per, pooled, ratios = [], [], []
        for recs in runs:
            got = {r["variant"]: r["samples"] for r in recs}
            d = [x - y for x, y in zip(got[a], got[b])]
            pooled += d
            ratios += [x / y for x, y in zip(got[a], got[b]) if y > 0]
            per.append((median(d), *median_ci(d)))
        rows.append(row(f"{loop}: {a} / {b}, per round", "ratio (paired "
                        "per round)", ratios, "clock"))
        lo, hi = median_ci(pooled)
        above = all(p[1] > 0 for p in per)
        below = all(p[2] < 0 for p in per)
        verdict = ("seen in every process" if above or below else
                   "not resolved: the processes disagree" if
                   any(p[1] > 0 for p in per) and any(p[2] < 0 for p in per)
                   else "not seen in every process")
        said_.append(f"{short} {median(pooled):+.1f} ns [{lo:+.1f}, "
                     f"{hi:+.1f}] (per process "
                     f"{', '.join(f'{p[0]:+.1f}' for p in per)}: {verdict})")
    return rows, said_


def run(bindir, quick, tmp):
    """Seed 001: a pipe ping-pong between two threads on one CPU (as
    the seed's taskset) with 8 disabled tracepoints on each side of every
    message, as none / flag checks / static keys (bench/e1_pipe.c), in
    PIPE's processes, each variant's per-round difference from the others
    (pipe_diffs); and the bytes the 8 tracepoints take
    in a function of their own (nm -S: the seed's text-size figure).
    And the workload where it matters (bench/e1_dense.c): functions dense
    in disabled tracepoints (each its own key or flag), called in a random
    order, caches swept before each round, in the configurations of
    DENSE: text larger than the L1I, the warm control where all fits, and
    the same under the application's own data traffic."""
    prog = os.path.join(bindir, "e1_pipe")
    nproc, pargs = PIPE[bool(quick)]
    runs = [raw_lines(bindir, "e1_pipe", tmp, pargs) for _ in range(nproc)]
    recs = pool(runs)
    ploop = recs[0]["loop"]
    rows, comps, aa = seed_rows(recs)
    drows, pipe_said = pipe_diffs(runs)
    rows += drows
    dverdict, any_perf = [], bool(recs.perf)
    for args, what in DENSE:
        dense = raw_lines(bindir, "e1_dense", tmp, (
            ["31", "100000"] if quick else ["101", "200000"]) + args)
        drows, dcomps, _ = seed_rows(dense)
        any_perf = any_perf or bool(dense.perf)
        rows += drows
        comps += dcomps
        loop = dense[0]["loop"]
        dgot = {r["variant"]: r["samples"] for r in dense}
        dkf = compare(f"{loop}: 4 static keys per function",
                      dgot["4 static keys per function"],
                      f"{loop}: 4 flag checks per function",
                      dgot["4 flag checks per function"])
        comps.append(dkf)
        dverdict.append(f"{what}: flags vs none "
                        f"{said(find(dcomps, 'flag checks', 'no tracepoint'))}"
                        f", keys vs none "
                        f"{said(find(dcomps, 'static keys', 'no tracepoint'))}"
                        f", keys vs flags {said(dkf)}")
    # the deterministic lane: the same calls, counted by valgrind's
    # simulated I1 and branch predictor (e1_dense's callgrind mode)
    cgn = {"v_none": "dense tracepoints, steady state: no tracepoint",
           "v_flags": "dense tracepoints, steady state: 4 flag checks per "
                      "function",
           "v_keys": "dense tracepoints, steady state: 4 static keys per "
                     "function"}
    cg = callgrind_run(bindir, "e1_dense", tmp, ["callgrind", "20000"],
                       names=cgn, per="call")
    rows += cg["rows"]
    short = dict(zip(cgn, ("none", "flags", "keys")))
    cgn_short = {cgn[k]: v for k, v in short.items()}
    rows += nm_rows(os.path.join(bindir, "e1_dense"), {
        "vn_000": "hot bytes of one dense function, no tracepoint",
        "vf_000": "hot bytes of one dense function, 4 flag checks",
        "vk_000": "hot bytes of one dense function, 4 static keys"})
    sizes = nm_rows(prog, {
        "e1_tp_flags": "bytes of a function with 8 flag checks",
        "e1_tp_keys": "bytes of a function with 8 static keys"})
    rows += sizes
    ppid = nm_rows(prog, {
        "e1_getppid_none": "bytes of getppid(), no tracepoint",
        "e1_getppid_flag": "bytes of getppid(), a flag check",
        "e1_getppid_key": "bytes of getppid(), a static key"})
    rows += ppid
    ppid_of = {r["name"].rsplit(", ", 1)[1]: int(r["median"]) for r in ppid}
    size_of = {("keys" if "static keys" in r["name"] else "flags"):
               int(r["median"]) for r in sizes}
    got = {r["variant"]: r["samples"] for r in recs}
    kf = compare(f"{ploop}: 8 static keys per side",
                 got["8 static keys per side"],
                 f"{ploop}: 8 flag checks per side",
                 got["8 flag checks per side"])
    comps.append(kf)
    rt = median(got["no tracepoint"])
    cg_said_ = ("" if cg["skipped"] else
                "; per call in a steady state (callgrind): I1 misses "
                f"{cg_said(cg['rows'], 'I1 misses', cgn_short, '{:.3f}')}, "
                "cond. branch mispredicts "
                f"{cg_said(cg['rows'], 'cond. branch mispredicts', cgn_short, '{:.3f}')}, "
                "indirect mispredicts "
                f"{cg_said(cg['rows'], 'indirect branch mispredicts', cgn_short, '{:.3f}')}, "
                "instructions "
                f"{cg_said(cg['rows'], 'instructions', cgn_short, '{:.1f}')}")
    verdict = (f"dense tracepoints, per call: {'; '.join(dverdict)}; pipe "
               f"test ({ploop}, {rt / 1000:.2f} us a round trip with no "
               f"tracepoint; {nproc} processes of {pargs[0]} rounds), per "
               f"round, what 16 tracepoints add to a round trip: "
               f"{'; '.join(pipe_said)}; function bytes: keys "
               f"{size_of.get('keys', '?')} vs flags "
               f"{size_of.get('flags', '?')}; getppid(): "
               f"{ppid_of.get('a flag check', '?')} bytes with a flag check, "
               f"{ppid_of.get('a static key', '?')} with a static key, "
               f"{ppid_of.get('no tracepoint', '?')} without (seed 001: 80 "
               "and 64; its pipe test, pinned: 0.2% fewer instructions "
               "and 0.7% fewer branches with keys, 1.4% less time)"
               + cg_said_)
    return {"id": "E1", "seed": "001",
            "title": "disabled tracepoints: none, flags, static keys (dense "
                     "under pressure; pipe ping-pong on one CPU)",
            "rows": rows, "comparisons": comps, "aa": aa,
            "lane_note": f"pipe rows: {nproc} processes of e1_pipe pooled "
                         f"({ploop}: both threads pinned to the CPU the "
                         "harness pins its programs to), each "
                         f"{pargs[0]} rounds of {pargs[1]} round trips; the "
                         "paired rows are per round, one variant over "
                         "another of the same round; "
                         "static rows: nm -S of the built program; " + cg_note(
                cg, "callgrind rows (dense tracepoints, steady state): "
                f"{cg['n']} calls per variant through its driver (v_none, "
                "v_flags, v_keys; inclusive counts / calls) after a "
                "warm-up outside it, no 16 MiB sweep (the flags' loads "
                "hit D1 here), under valgrind --tool=callgrind "
                "--smc-check=all --cache-sim=yes --branch-sim=yes: "
                "instructions, I1 misses, simulated conditional and "
                "indirect branch mispredicts per call") +
                (PERF_NOTE if any_perf else ""),
            "verdict": verdict}
