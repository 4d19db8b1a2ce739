#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_bench_e4_control.py E4_MEMCPY BENCHDIR - E4's A/A' control lane
in a short run (e4_memcpy --control --quick): glibc's memcpy against the
same code linked a second time at another address (e4_glibc_copy.so),
and against itself through two pointers (A/A).

What it asserts is what cannot depend on timing: the lane runs; the copy
is another address than glibc's memcpy and copies right (the program
checks it at 107 sizes and 4 alignments before it times anything, and
exits non-zero with FAIL when a byte is wrong); every one of the 704
points has its two pairs of samples, as the suite's module reads them;
both summary lines count within the 704 points, a worst ratio above the
2% margin exactly where the count is not 0. Not that A/A counts 0: two
pointers to one function are the same code at the same address, but the
rule (Mann-Whitney p < 0.05 and medians more than 2% apart) still has a
false-positive rate per point, and 704 points at 31 rounds on a shared
2-vCPU guest counted 0 to 4 in runs of this lane; a test asserting 0
would fail on noise.

Exit 77 (SKIP) when the lane skips (no libc.a, its objects unusable,
glibc's memcpy not among them: the program says why)."""
import json
import os
import re
import subprocess
import sys
import tempfile

memcpy, benchdir = sys.argv[1:3]
sys.path.insert(0, benchdir)
from suite.e4_memcpy import control_said  # noqa: E402

POINTS, ROUNDS = 704, 31
bad = []


def check(cond, what):
    if not cond:
        bad.append(what)


with tempfile.TemporaryDirectory() as tmp:
    raw = os.path.join(tmp, "control.jsonl")
    p = subprocess.run([memcpy, "--control", "--quick"], capture_output=True,
                       text=True, timeout=300,
                       env=dict(os.environ, SY_BENCH_RAW=raw))
    out = p.stdout
    skip = re.search(r"^SKIP: .*", out, re.M)
    if skip and p.returncode == 0:
        print(skip.group(0))
        sys.exit(77)
    if p.returncode:
        print(f"FAIL: e4_memcpy --control --quick: exit {p.returncode}: "
              f"{(out + p.stderr)[-600:]}")
        sys.exit(1)
    recs = []
    if os.path.exists(raw):
        with open(raw) as f:
            recs = [json.loads(l) for l in f if l.startswith("{")]

m = re.search(r"^# glibc's memcpy: (__memcpy_\w+) \(\d+ bytes of code "
              r"compared\), at (0x[0-9a-f]+); the copy at (0x[0-9a-f]+)",
              out, re.M)
check(m, "no line naming glibc's variant and the copy's address")
if m:
    check(m.group(2) != m.group(3), f"the copy is at glibc's address "
                                    f"{m.group(2)}")
check(re.search(r"^# the copy copied right: \d+ sizes", out, re.M),
      "no line of the copy's self-check")
check(re.search(r"^# model name", out, re.M), "the CPU is not named")
check(re.search(r"^# faster by the same rule .*: the copy at \d+, glibc "
                r"again at \d+ of 704 points$", out, re.M),
      "no line of the points where the copy was faster")
lines = {}
for what in ("A/A' control: glibc's memcpy against the same code at "
             "another address", "A/A control: glibc's memcpy against "
             "itself through two pointers"):
    lm = re.search(r"^" + re.escape(what) + r": slower at (\d+) of (\d+) "
                   r"points \(worst ([0-9.]+|-)\)$", out, re.M)
    check(lm, f"no line {what!r}")
    if not lm:
        continue
    n, of, worst = int(lm.group(1)), int(lm.group(2)), lm.group(3)
    lines[what] = n
    check(of == POINTS and 0 <= n <= of, f"{what}: {n} of {of}")
    check((worst == "-") == (n == 0) and
          (worst == "-" or float(worst) > 1.02),
          f"{what}: {n} points, worst {worst}")

# the records: per point the A/A' pair and the A/A pair, ROUNDS samples
# each, none 0
pairs = {}
for r in recs:
    pairs.setdefault(r["loop"], {})[r["variant"]] = r["samples"]
aa = [l for l in pairs if l.endswith(", A/A")]
check(len(pairs) == 2 * POINTS and len(aa) == POINTS,
      f"{len(pairs)} loops in the raw file, {len(aa)} of them A/A")
for loop, v in pairs.items():
    want = {"glibc", "glibc again" if loop.endswith(", A/A") else
            "glibc copy"}
    check(set(v) == want, f"{loop}: variants {sorted(v)}")
    check(all(len(s) == ROUNDS and min(s) > 0 for s in v.values()),
          f"{loop}: samples {[len(s) for s in v.values()]}")
said = control_said(recs)
check(said.count(f" of {POINTS} points") == 2 and
      said.count(", faster at ") == 2, f"the suite's line: {said!r}")

if bad:
    for b in bad[:20]:
        print("FAIL:", b)
    sys.exit(1)
print(f"ok: {m.group(1) if m else '?'}; A/A' and A/A slower at "
      f"{' and '.join(str(v) for v in lines.values())} of {POINTS} points "
      f"(timing: not asserted)")
