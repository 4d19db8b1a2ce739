# SPDX-License-Identifier: MIT
"""The suite's statistics: medians, their distribution-free 95% CI,
Tukey outliers (counted, kept), two-sided Mann-Whitney U, comparisons."""
import math


def median(x):
    x = sorted(x)
    n = len(x)
    return (x[(n - 1) // 2] + x[n // 2]) / 2


def median_ci(x):
    """95% CI of the median from order statistics (binomial(n, 1/2),
    normal approximation), as bench/common/stats.h computes it."""
    x = sorted(x)
    n = len(x)
    lo = max(0, math.floor(n / 2 - 0.98 * math.sqrt(n)))
    hi = min(n - 1, math.ceil(n / 2 + 1 + 0.98 * math.sqrt(n)) - 1)
    return x[lo], x[hi]


def outliers(x):
    """Samples beyond Tukey's fences (1.5 IQR): counted, not dropped."""
    x = sorted(x)
    n = len(x)
    if n < 4:
        return 0
    q1, q3 = x[n // 4], x[(3 * n) // 4]
    lo, hi = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
    return sum(1 for v in x if v < lo or v > hi)


def mann_whitney_p(a, b):
    """Two-sided Mann-Whitney U p-value (normal approximation with the
    tie correction; fine from ~8 samples a side)."""
    n1, n2 = len(a), len(b)
    if not n1 or not n2:
        return 1.0
    allv = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    ranks, ties, i = {0: 0.0, 1: 0.0}, 0.0, 0
    while i < len(allv):
        j = i
        while j + 1 < len(allv) and allv[j + 1][0] == allv[i][0]:
            j += 1
        r = (i + j) / 2 + 1
        t = j - i + 1
        ties += t ** 3 - t
        for k in range(i, j + 1):
            ranks[allv[k][1]] += r
        i = j + 1
    u = ranks[0] - n1 * (n1 + 1) / 2
    n = n1 + n2
    sd = math.sqrt(n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1))))
    if sd == 0:
        return 1.0
    z = (u - n1 * n2 / 2) / sd
    return math.erfc(abs(z) / math.sqrt(2))


def row(name, unit, samples, lane):
    """A row of the report, its raw samples kept (in the order measured:
    the interleaved rounds)."""
    lo, hi = median_ci(samples)
    return {"name": name, "unit": unit, "median": median(samples),
            "ci_low": lo, "ci_high": hi, "n": len(samples),
            "outliers": outliers(samples), "lane": lane,
            "samples": list(samples)}


def compare(a_name, a, b_name, b):
    """a against b: ratio of medians, Mann-Whitney p, verdict. Refuses
    (ValueError) an empty side or a base whose median is 0: no ratio
    (callers skip counts that are 0, as a perf event can be)."""
    if not a or not b or median(b) == 0:
        raise ValueError(f"no ratio of {a_name} to {b_name}: "
                         f"{len(a)} and {len(b)} samples, base median "
                         f"{median(b) if b else None}")
    p = mann_whitney_p(a, b)
    r = median(a) / median(b)
    return {"a": a_name, "b": b_name, "ratio": r, "p_value": p,
            "verdict": "~" if p >= 0.05 else ("<" if r < 1 else ">")}


def find(comps, a, b):
    return next((c for c in comps if a in c["a"] and b in c["b"]), None)


def said(c):
    if not c:
        return "not measured"
    return f"{c['ratio']:.3f}x ({'~' if c['verdict'] == '~' else 'p=%.2g' % c['p_value']})"
