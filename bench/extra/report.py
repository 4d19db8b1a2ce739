#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""report.py - compare raw latency samples of switchyard and a peer.

Reads JSON records {"impl", "threads", "sites", "samples_ns": [...]}: a JSON
array per file or one object per line. For every (threads, sites) prints the
median with a distribution-free 95% CI per implementation, the ratio of
medians against switchyard, and a two-sided Mann-Whitney U verdict ("~"
when not significant at 5%).
"""
import json
import math
import sys


def load(path):
    with open(path) as f:
        text = f.read().strip()
    if text.startswith("["):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def median_ci(v):
    v = sorted(v)
    n = len(v)
    med = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    lo = max(0, math.floor(n / 2 - 0.98 * math.sqrt(n)))
    hi = min(n - 1, math.ceil(n / 2 + 1 + 0.98 * math.sqrt(n)) - 1)
    return med, v[lo], v[hi]


def mann_whitney_z(a, b):
    u = sum(1.0 if x > y else 0.5 if x == y else 0.0 for x in a for y in b)
    na, nb = len(a), len(b)
    sigma = math.sqrt(na * nb * (na + nb + 1) / 12.0)
    return (u - na * nb / 2) / sigma if sigma else 0.0


def main(paths):
    recs = [r for p in paths for r in load(p)]
    keys = sorted({(r.get("threads", 0), r["sites"]) for r in recs})
    print("%-8s %-6s %-28s %12s %24s %10s" % ("threads", "sites", "implementation",
                                              "median us", "95% CI us", "vs sy"))
    for threads, sites in keys:
        group = [r for r in recs if r.get("threads", 0) == threads and r["sites"] == sites]
        base = next((r for r in group if r["impl"] == "switchyard"), None)
        for r in group:
            med, lo, hi = median_ci(r["samples_ns"])
            cmp = ""
            if base is not None and r is not base:
                bmed = median_ci(base["samples_ns"])[0]
                z = mann_whitney_z(r["samples_ns"], base["samples_ns"])
                verdict = "~" if abs(z) < 1.96 else (">" if z > 0 else "<")
                cmp = "%s %.0fx" % (verdict, med / bmed)
            print("%-8d %-6d %-28s %12.2f %11.2f..%-11.2f %10s" % (
                threads, sites, r["impl"][:28], med / 1e3, lo / 1e3, hi / 1e3, cmp))


if __name__ == "__main__":
    main(sys.argv[1:])
