#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_bench_plots.py BENCHDIR - the report's plots (bench/suite/plot.py)
on a fabricated document: every figure drawn, each a valid PNG of a
plausible size next to the report, and the Markdown embedding each; the
report saying so when gnuplot is missing. Skips (77) when gnuplot is not
installed (scripts/deps.sh installs gnuplot-nox)."""
import os
import shutil
import struct
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
from suite import plot  # noqa: E402
from suite.report import markdown  # noqa: E402

bad = []


def check(cond, what):
    if not cond:
        bad.append(what)


def row(name, unit, m, lo, hi, lane="clock"):
    return {"name": name, "unit": unit, "median": m, "ci_low": lo,
            "ci_high": hi, "n": 31, "outliers": 0, "lane": lane}


def comp(a, b, ratio, p):
    return {"a": a, "b": b, "ratio": ratio, "p_value": p,
            "verdict": "~" if p >= 0.05 else ("<" if ratio < 1 else ">")}


# E0: dot panels; names with what gnuplot could take for syntax (quotes,
# a backslash, % of a format, enhanced-text _ ^ @ &), a long one, a
# repeated one, one without a median; and the other lanes
dots = [row("pipe: no tracepoint", "ns/round trip", 7000, 5000, 7300),
        row("pipe: 8 flags", "ns/round trip", 7100, 5100, 8400),
        row("dense: native push %rdi; popfq \"q\" a\\b x_1^2 @&", "ns/call",
            11.2, 10.9, 12.3),
        row("dense: a row with a rather long name that has to be wrapped "
            "onto more than one line of the axis", "ns/call", 1.5, 1.4, 1.7),
        row("dense: repeated", "ns/call", 13.5, 13.4, 14.2),
        row("dense: repeated", "ns/call", 13.9, 13.6, 54.1),
        row("break-even, none found", "bytes", None, None, None),
        row("break-even, found", "bytes", 16384, 8192, 16384),
        row("bytes of f", "bytes", 41, 41, 41, "static"),
        row("v_call", "instructions/iter", 37.0002, 37.0002, 37.0002,
            "callgrind")]
# E9: a series (E4's names), two conditions, two variants, ratios
series, comps = [], []
for cond in ("aligned fixed", "misaligned random"):
    for s in [1, 2, 3, 4, 8, 16, 64, 256, 1024, 4096, 8192]:
        sy, gl = 3 + s / 100, 3.2 + s / 90
        series += [row(f"{s} {cond}: sy_memcpy", "ns/copy", sy, sy * .97,
                       sy * 1.04),
                   row(f"{s} {cond}: glibc", "ns/copy", gl, gl * .98,
                       gl * 1.1)]
        comps.append(comp(f"{s} {cond}: sy_memcpy", f"{s} {cond}: glibc",
                          sy / gl, 0.01 if s > 8 else 0.5))
for s in (16, 64, 256, 1024):
    for v, x in (("evict", 2000), ("sy_memcpy", 2010), ("rep", 2030)):
        series.append(row(f"cold {s}: {v}", "ns/(walk+copy)", x, x - 50,
                          x + (9000 if s == 64 else 60)))
        series.append(row(f"v_{v}_{s}", "instructions/iter", 1000 + s * (
            v == "rep"), 1000 + s * (v == "rep"), 1000 + s * (v == "rep"),
            "callgrind"))
doc = {"format": "switchyard-bench/1",
       "machine": {"cpu": "Test CPU (family 6)", "cores": 2, "kernel": "k",
                   "libc": "l", "compiler": "cc", "governor": "g",
                   "perf_counters": "no"},
       "command": "switchyard bench",
       "experiments": [
           {"id": "E0", "seed": "000", "title": "dots", "rows": dots,
            "comparisons": [comp("pipe: 8 flags", "pipe: no tracepoint",
                                 1.01, 0.9)],
            "aa": {"ratio": 1.0, "p_value": 0.9}, "verdict": "v0"},
           {"id": "E9", "seed": "009", "title": "series", "rows": series,
            "comparisons": comps, "aa": {"ratio": 1.0, "p_value": 0.9},
            "verdict": "v9"}]}

# without gnuplot: no PNG, and the report says why
with tempfile.TemporaryDirectory() as tmp:
    path = os.environ.get("PATH", "")
    os.environ["PATH"] = tmp
    try:
        got = plot.render(doc, os.path.join(tmp, "r.md"))
    finally:
        os.environ["PATH"] = path
    check(got is None, f"no gnuplot: {got}")
    check(not [f for f in os.listdir(tmp) if f.endswith(".png")],
          "no gnuplot: PNGs written")
    md = markdown(doc, got, "gnuplot not installed")
    check("(plots: gnuplot not installed)" in md and "![" not in md,
          "no gnuplot: the report's note")

if not shutil.which("gnuplot"):
    for b in bad:
        print("FAIL:", b)
    if bad:
        sys.exit(1)
    print("SKIP: gnuplot not installed (scripts/deps.sh installs "
          "gnuplot-nox): the plots were not drawn")
    sys.exit(77)

with tempfile.TemporaryDirectory() as tmp:
    md_path = os.path.join(tmp, "bench-report.md")
    figs = plot.render(doc, md_path)
    md = markdown(doc, figs)
    names = [png for fs in figs.values() for _, png, _ in fs]
    for e in ("E0", "E9"):
        for cap, png, err in figs.get(e, []):
            check(err is None and png, f"{e} {cap}: {err}")
    want = {"bench-report-E0.png", "bench-report-E0-counts.png",
            "bench-report-E9-ns-copy.png", "bench-report-E9-ns-walk-copy.png",
            "bench-report-E9-instructions-iter-callgrind.png"}
    check(want <= set(names), f"figures {sorted(names)}")
    for png in names:
        if not png:
            continue
        p = os.path.join(tmp, png)
        check(os.path.exists(p), f"{png}: not written")
        if not os.path.exists(p):
            continue
        with open(p, "rb") as f:
            head = f.read(24)
        check(os.path.getsize(p) > 1000, f"{png}: {os.path.getsize(p)} bytes")
        check(head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR",
              f"{png}: not a PNG")
        w, h = struct.unpack(">II", head[16:24])
        check(400 <= w <= 3000 and 150 <= h <= 4000, f"{png}: {w}x{h}")
        check(f"]({png})" in md, f"{png}: not in the Markdown")
    # the data files and scripts are not left beside the report
    left = [f for f in os.listdir(tmp) if not f.endswith(".png")]
    check(not left, f"left beside the report: {left}")
    # each image under its experiment's heading
    check(md.index("![E0") < md.index("## E9") < md.index("![E9"),
          "images under their experiments")
for b in bad:
    print("FAIL:", b)
print("test_bench_plots:", "all checks passed" if not bad
      else f"{len(bad)} failed")
sys.exit(1 if bad else 0)
