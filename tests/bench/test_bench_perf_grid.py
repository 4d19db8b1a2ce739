#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_bench_perf_grid.py E4_MEMCPY E2_CALLS BENCHDIR - the perf
lane of the two programs that measure more than one loop per slot set:
e4_memcpy (the same contenders' slots reused at every point of its
grid, bench_perf_reset() between points) and e2_calls (its x = f(x)
chain, beside its own JSON). With SY_BENCH_PERF=sw each must write, for
every clock sample set the suite reads, one line per software event with
as many samples, and none for what the suite does not read
(e4_memcpy's short moves, e2_calls' calibration and other
loops); E4's and E2's code must make perf rows and comparisons of them,
within an event. By default, on a machine without a PMU, no perf lines.
Exit 77 (SKIP) when perf_event_open is refused outright."""
import json
import os
import subprocess
import sys
import tempfile
from statistics import median

memcpy, sc_call, benchdir = sys.argv[1:4]
sys.path.insert(0, benchdir)
from suite.e2_calls import chain_perf  # noqa: E402
from suite.e4_memcpy import perf_points  # noqa: E402
from suite.lanes import raw_lines  # noqa: E402
from suite.machine import PERF_EVENTS, perf_probe  # noqa: E402

HW = {n for n, _, _, hw in PERF_EVENTS if hw}
SW = {n for n, _, _, hw in PERF_EVENTS if not hw}
ROUNDS = 5
bad = []


def check(cond, what):
    if not cond:
        bad.append(what)


def env_perf(perf):
    os.environ.pop("SY_BENCH_PERF", None)
    if perf is not None:
        os.environ["SY_BENCH_PERF"] = perf


def grid(tmp, perf, name):
    """e4_memcpy's records over its whole grid (704 points), 5 rounds
    (about a second)."""
    env_perf(perf)
    out = os.path.join(tmp, name)
    os.makedirs(out)
    return raw_lines(os.path.dirname(memcpy), os.path.basename(memcpy), out,
                     ["--rounds", str(ROUNDS)])


def chain(tmp, perf, name):
    """e2_calls' JSON records of the chain and its perf lines."""
    env_perf(perf)
    js = os.path.join(tmp, name + ".json")
    raw = os.path.join(tmp, name + ".jsonl")
    res = subprocess.run([sc_call, "--rounds", str(ROUNDS), "--n", "20000",
                          "--json", js], capture_output=True, text=True,
                         env=dict(os.environ, SY_BENCH_RAW=raw))
    check(res.returncode == 0, f"{name}: e2_calls exit "
                               f"{res.returncode}: {res.stderr[-200:]}")
    with open(js) as f:
        recs = [r for r in json.load(f) if r["loop"] == "x = f(x)"]
    lines = []
    if os.path.exists(raw):
        with open(raw) as f:
            lines = [json.loads(l) for l in f if l.startswith("{")]
    return recs, lines, raw


# Under an emulator (a cross build: SY_TEST_EMULATOR, CMakeLists.txt) the
# probe above asks this machine's kernel, not the emulator, which passes
# no perf_event_open on (qemu-user implements none).
if os.environ.get("SY_TEST_EMULATOR"):
    print("SKIP: the programs run under an emulator (SY_TEST_EMULATOR); "
          "qemu-user implements no perf_event_open")
    sys.exit(77)
probe = perf_probe()
if probe is None:
    print("SKIP: perf_event_open cannot be probed on this architecture")
    sys.exit(77)
if not any(probe.get(n) == "opened" for n in SW):
    print(f"SKIP: perf_event_open refused here ({probe})")
    sys.exit(77)
hw_here = {n for n in HW if probe.get(n) == "opened"}
want_sw = {n for n in SW if probe.get(n) == "opened"}

with tempfile.TemporaryDirectory() as tmp:
    # 1. e4_memcpy, software events: per point, a line per event for
    # every contender but the short moves, of the point's own batches
    recs = grid(tmp, "sw", "grid-sw")
    check(len({r["loop"] for r in recs}) == 704,
          f"grid: {len({r['loop'] for r in recs})} points")
    perf, ratios, slowest = {}, [], {}
    for p in recs.perf:
        perf.setdefault((p["loop"], p["variant"]), []).append(p)
    for c in recs:
        mine = perf.pop((c["loop"], c["variant"]), [])
        if c["variant"] == "short":
            check(not mine, f"grid: perf lines for the short moves "
                            f"({c['loop']})")
            continue
        check({p["event"] for p in mine} == want_sw and
              len(mine) == len(want_sw),
              f"grid: {c['loop']}: {c['variant']}: events "
              f"{[p['event'] for p in mine]}")
        for p in mine:
            check(p["type"] == "software" and p["unit"].endswith("/copy"),
                  f"grid: named {p['event']} {p['type']} {p['unit']}")
            check(len(p["samples"]) == len(c["samples"]) == ROUNDS,
                  f"grid: {c['loop']}: {c['variant']}: {p['event']}: "
                  f"{len(p['samples'])} samples, clock "
                  f"{len(c['samples'])}")
            # never more multiplexed batches than the point has: a
            # count carried over from the last point (no
            # bench_perf_reset) would exceed it on a busy PMU
            check(0 <= p["scaled"] <= ROUNDS,
                  f"grid: {c['loop']}: scaled {p['scaled']}")
            if p["event"] == "task-clock":
                check(all(t > 0 for t in p["samples"]),
                      f"grid: {c['loop']}: {c['variant']}: task-clock 0")
                ratios += [t / w for t, w in zip(p["samples"], c["samples"])]
                slow = slowest.setdefault(c["loop"], {})
                slow[c["variant"]] = (median(c["samples"]),
                                      median(p["samples"]))
    # per copy, of the batch the clock timed: a batch is ~10 us here,
    # and the task clock also runs in the enable and disable ioctl()s
    # (exclude_kernel does not filter it; this KVM guest: ~1.2x at the
    # median, some batches several times): a sanity bound only
    ratios.sort()
    mid = ratios[len(ratios) // 2] if ratios else 0
    check(0.8 < mid < 3, f"grid: task-clock / clock median {mid:.3f}")
    # each contender's counts are its own batches': at a point, the
    # slowest contender by the clock is the slowest by the task clock
    # (here 703 of 704 points; counts filed under the wrong contender's
    # slot, 126)
    agree = sum(max(v, key=lambda k: v[k][0]) == max(v, key=lambda k: v[k][1])
                for v in slowest.values())
    check(agree > len(slowest) // 2, f"grid: the slowest contender by "
          f"task-clock is the clock's at {agree} of {len(slowest)} points")
    check(not perf, f"grid: perf lines without a clock line: "
                    f"{list(perf)[:3]}")
    # E4's rows: per point sy_memcpy, glibc, rep and a vector loop per
    # event; sy_memcpy vs glibc within an event; the verdict's sentence
    rows, comps, said = perf_points(recs)
    check(len(rows) == 704 * 4 * len(want_sw),
          f"E4: {len(rows)} perf rows, want {704 * 4 * len(want_sw)}")
    check(all(r["lane"] == "perf" and "software event]" in r["name"]
              for r in rows), "E4: a perf row not of a software event")
    check(comps and all(c["lane"] == "perf" and
                        c["a"].split(": ")[0] == c["b"].split(": ")[0] and
                        c["a"][c["a"].find(" ["):] ==
                        c["b"][c["b"].find(" ["):] for c in comps),
          "E4: a comparison across points or events")
    check(any("[task-clock," in c["a"] for c in comps),
          "E4: no comparison of task-clock")
    check(said.startswith("; perf (software events") and
          all(k in said for k in ("aligned fixed:", "misaligned random:",
                                  "task-clock")), f"E4: verdict {said!r}")

    # 2. e2_calls, software events: the chain's variants, named by
    # the JSON's "name", the calibration left out; nothing else
    recs, lines, raw = chain(tmp, "sw", "chain-sw")
    names = [r["name"] for r in recs if r["variant"] != "c_calib"]
    check(len(names) >= 7, f"chain: {len(names)} variants")
    for r in recs:
        mine = [p for p in lines if p["variant"] == r["name"]]
        if r["variant"] == "c_calib":
            check(not mine, "chain: perf lines for the calibration")
            continue
        check({p["event"] for p in mine} == want_sw and
              len(mine) == len(want_sw),
              f"chain: {r['name']}: events {[p['event'] for p in mine]}")
        for p in mine:
            check(len(p["samples"]) == len(r["ns_per_call"]) == ROUNDS,
                  f"chain: {r['name']}: {p['event']}: "
                  f"{len(p['samples'])} samples, clock "
                  f"{len(r['ns_per_call'])}")
    check(all(p["loop"] == "x = f(x)" for p in lines),
          "chain: perf lines of another loop")
    check(len(lines) == len(names) * len(want_sw),
          f"chain: {len(lines)} perf lines")
    prows, pcomps = chain_perf(recs, raw)
    check(len(prows) == len(names) * len(want_sw),
          f"E2: {len(prows)} perf rows")
    check(pcomps and all(c["b"].startswith("x = f(x): direct call [") and
                         c["a"][c["a"].find(" ["):] ==
                         c["b"][c["b"].find(" ["):] for c in pcomps),
          "E2: a comparison not against the direct call of its event")

    # 3. the default: no perf lines where no hardware counter opens
    recs = grid(tmp, None, "grid-default")
    crecs, lines, raw = chain(tmp, None, "chain-default")
    if not hw_here:
        check(not recs.perf, f"default: e4_memcpy perf lines "
                             f"{recs.perf[:1]}")
        check(not lines and chain_perf(crecs, raw) == ([], []),
              f"default: e2_calls perf lines {lines[:1]}")
    else:
        check(all(p["type"] == "hardware" for p in recs.perf + lines),
              "default: a software event")

for b in bad[:20]:
    print("FAIL:", b)
print("test_bench_perf_grid:",
      f"hardware events here: {sorted(hw_here) or 'none'};",
      "all checks passed" if not bad else f"{len(bad)} failed")
sys.exit(1 if bad else 0)
