#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ab_flip.py PEERS_FLIP LIBDIR_A LIBDIR_B [RUNS] - one peers_flip binary
run against two builds of the library (LD_LIBRARY_PATH picks one), A and B
alternating, RUNS times each (default 6). Each run gives a median per row
(threads x sites); the table compares the RUNS medians of A with those of
B: medians of the run medians, B/A, and the exact two-sided Mann-Whitney p
over the 2 x RUNS run medians ("~" where p > 0.05: not significant).
"""
import itertools
import os
import re
import subprocess
import sys

ROW = re.compile(r"enable\+disable,\s+(\d+) sites\s+median\s+([\d.]+) us")
HDR = re.compile(r"== (\d+) other thread")


def run(bench, libdir):
    env = dict(os.environ, LD_LIBRARY_PATH=libdir)
    out = subprocess.run([bench], env=env, text=True, capture_output=True,
                         check=True).stdout
    rows, threads = {}, None
    for line in out.splitlines():
        m = HDR.match(line)
        if m:
            threads = int(m.group(1))
        m = ROW.match(line)
        if m:
            rows[(threads, int(m.group(1)))] = float(m.group(2))
    return rows


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def mann_whitney_p(a, b):
    """Exact two-sided p of the rank-sum statistic (no ties expected)."""
    pooled = sorted(a + b)
    rank = {x: i + 1 for i, x in enumerate(pooled)}
    u_obs = sum(rank[x] for x in a)
    n = len(a) + len(b)
    sums = [sum(c) for c in itertools.combinations(range(1, n + 1), len(a))]
    mean = len(a) * (n + 1) / 2
    dev = abs(u_obs - mean)
    return sum(1 for s in sums if abs(s - mean) >= dev - 1e-9) / len(sums)


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    bench, la, lb = sys.argv[1:4]
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 6
    a, b = [], []
    for i in range(runs):
        a.append(run(bench, la))
        b.append(run(bench, lb))
        print(f"run {i + 1}/{runs} done", file=sys.stderr)
    print("| threads running the sites | sites | A (us) | B (us) | B/A | p |")
    print("| --- | --- | --- | --- | --- | --- |")
    for key in sorted(a[0]):
        va, vb = [r[key] for r in a], [r[key] for r in b]
        ma, mb = median(va), median(vb)
        p = mann_whitney_p(va, vb)
        tag = "" if p <= 0.05 else "~ "
        print(f"| {key[0]} | {key[1]:,} | {ma:.3g} | {mb:.3g} | "
              f"{tag}{mb / ma:.2f} | {p:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
