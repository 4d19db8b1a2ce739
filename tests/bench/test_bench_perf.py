#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_bench_perf.py E1_DENSE BENCHDIR - the suite's perf lane end to
end on any machine: e1_dense with SY_BENCH_PERF=sw (software events, the
same open / enable / disable / read / record path as the hardware
counters) must write, beside each clock line, one line per software event
with as many samples, named as the software event it is; the harness must
turn them into "perf" rows compared only within their lane and event; a
group whose leader cannot open must fall back to the events that can;
and the default run must not fail, with "perf" rows only if hardware
counters open here (none on a KVM guest without a PMU). Exit 77 (SKIP)
when perf_event_open is refused outright (perf_event_paranoid 3,
seccomp)."""
import os
import subprocess
import sys
import tempfile

prog, benchdir = sys.argv[1], sys.argv[2]
sys.path.insert(0, benchdir)
from suite.lanes import raw_lines, seed_rows  # noqa: E402
from suite.machine import PERF_EVENTS, perf_probe  # noqa: E402

HW = {n for n, _, _, hw in PERF_EVENTS if hw}
SW = {n for n, _, _, hw in PERF_EVENTS if not hw}
ROUNDS, CALLS = 5, 20000
bad = []


def check(cond, what):
    if not cond:
        bad.append(what)


def run(tmp, perf, name):
    """e1_dense's raw records, through the harness's raw_lines(), with
    SY_BENCH_PERF=perf (None: unset)."""
    os.environ.pop("SY_BENCH_PERF", None)
    if perf is not None:
        os.environ["SY_BENCH_PERF"] = perf
    out = os.path.join(tmp, name)
    os.makedirs(out)
    return raw_lines(os.path.dirname(prog), os.path.basename(prog), out,
                     [str(ROUNDS), str(CALLS)])

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
    print(f"SKIP: perf_event_open refused here ({probe}; "
          f"perf_event_paranoid "
          f"{open('/proc/sys/kernel/perf_event_paranoid').read().strip()})")
    sys.exit(77)
hw_here = {n for n in HW if probe.get(n) == "opened"}

with tempfile.TemporaryDirectory() as tmp:
    # 1. software events: one line per event beside every clock line
    recs = run(tmp, "sw", "sw")
    check(len(recs) == 3, f"sw: {len(recs)} clock lines, want 3")
    want_sw = {n for n in SW if probe.get(n) == "opened"}
    for c in recs:
        mine = [p for p in recs.perf if p["loop"] == c["loop"]
                and p["variant"] == c["variant"]]
        check({p["event"] for p in mine} == want_sw,
              f"sw: {c['variant']}: events {[p['event'] for p in mine]}")
        for p in mine:
            check(p["lane"] == "perf" and p["type"] == "software" and
                  p["event"] not in HW, f"sw: named {p}")
            check(len(p["samples"]) == len(c["samples"]) == ROUNDS,
                  f"sw: {p['event']}: {len(p['samples'])} samples, clock "
                  f"{len(c['samples'])}")
            check(p["unit"] == (("task-clock ns" if p["event"] ==
                                 "task-clock" else p["event"]) + "/call"),
                  f"sw: unit {p['unit']}")
            check(all(v >= 0 for v in p["samples"]), f"sw: negative {p}")
            if p["event"] == "task-clock":
                # per call, the same batch the clock timed: above 0, and
                # not above the wall clock's by more than the enable and
                # disable around it (under 1 ns a call over 20000 calls)
                for t, w in zip(p["samples"], c["samples"]):
                    check(0 < t <= w * 1.5 + 1.0,
                          f"sw: task-clock {t} ns/call against clock {w}")
    # the harness: rows of lane "perf" named as software events, and no
    # comparison across lanes or events
    rows, comps, aa = seed_rows(recs)
    perf_rows = [r for r in rows if r["lane"] == "perf"]
    check(len(perf_rows) == 3 * len(want_sw),
          f"rows: {len(perf_rows)} perf rows, want {3 * len(want_sw)}")
    check(all("software event]" in r["name"] for r in perf_rows),
          "rows: a perf row not named a software event")
    check(all(not any(f"[{h}," in r["name"] for h in HW) for r in rows),
          "rows: a software count under a hardware name")
    check(sum(r["lane"] == "clock" for r in rows) == 3, "rows: clock rows")
    check(any(c["lane"] == "perf" and "[task-clock," in c["a"]
              for c in comps), "comparisons: none of task-clock")
    for c in comps:
        tag = lambda s: s[s.find(" ["):] if " [" in s else ""  # noqa: E731
        check(tag(c["a"]) == tag(c["b"]),
              f"comparison across events: {c['a']} vs {c['b']}")
        check((c["lane"] == "perf") == bool(tag(c["a"])),
              f"comparison lane: {c}")
    check(comps and comps[0]["lane"] == "clock", "clock comparisons first")

    # 2. a group whose leader cannot open: the rest still counts
    mix = run(tmp, "cycles,task-clock,page-faults", "mix")
    got = {p["event"] for p in mix.perf}
    want = {"task-clock", "page-faults"} | ({"cycles"} & hw_here)
    check(got == want, f"fallback: events {got}, want {want}")
    check(all(len(p["samples"]) == ROUNDS for p in mix.perf),
          "fallback: samples")

    # 3. the default: nothing fails; perf rows only of hardware events,
    # and none where none opens (this VM)
    dflt = run(tmp, None, "default")
    check(len(dflt) == 3, "default: clock lines")
    if not hw_here:
        check(not dflt.perf, f"default: perf lines without a PMU: "
                             f"{dflt.perf[:1]}")
    else:
        check(all(p["type"] == "hardware" for p in dflt.perf),
              "default: a software event")
        ins = [p for p in dflt.perf if p["event"] == "instructions"]
        check(not ins or all(v > 0 for v in ins[0]["samples"]),
              "default: instructions per call")
    rows, _, _ = seed_rows(dflt)
    check(bool(hw_here) or all(r["lane"] == "clock" for r in rows),
          "default: a perf row without hardware counters")

    # 4. off: none
    off = run(tmp, "off", "off")
    check(not off.perf and len(off) == 3, "off: perf lines")

    # 5. without SY_BENCH_RAW the program runs as before (output, exit 0)
    res = subprocess.run([prog, "3", "1000"], capture_output=True, text=True,
                         env=dict(os.environ, SY_BENCH_PERF="sw"))
    check(res.returncode == 0 and "no tracepoint" in res.stdout,
          f"no raw file: {res.returncode} {res.stdout[:80]}")

for b in bad:
    print("FAIL:", b)
print("test_bench_perf:", f"hardware events here: {sorted(hw_here) or 'none'};",
      "all checks passed" if not bad else f"{len(bad)} failed")
sys.exit(1 if bad else 0)
