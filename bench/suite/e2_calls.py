# SPDX-License-Identifier: MIT
"""E2 (seed 002): direct, static and indirect calls."""
import os
import json
import subprocess

from .stats import compare, row

PROGRAMS = ["bench_sc_call"]


def run(bindir, quick, tmp):
    """Seed 002's question at the call level: a direct call, a static
    call, and what users call through instead (a function pointer, a PLT
    call, a GNU ifunc, target_clones), in a chain x = f(x) (each call
    depends on the last). bench_sc_call interleaves them round by round."""
    out = os.path.join(tmp, "e2.json")
    rounds = "31" if quick else "201"
    subprocess.run([os.path.join(bindir, "bench_sc_call"), "--rounds", rounds,
                    "--json", out], check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        recs = [r for r in json.load(f) if r["loop"] == "x = f(x)"]
    base = next(r for r in recs if r["variant"] == "c_direct")
    rows, comps = [], []
    for r in recs:
        if r["variant"] == "c_calib":
            continue
        rows.append(row(r["name"], "ns/call", r["ns_per_call"], "clock"))
        if r is not base:
            comps.append(compare(r["name"], r["ns_per_call"], base["name"],
                                 base["ns_per_call"]))
    b = base["ns_per_call"]
    aa = compare("direct call (odd rounds)", b[1::2],
                 "direct call (even rounds)", b[0::2])
    sc = next(c for c in comps if c["a"].startswith("static_call, target in reach"))
    ptr = next(c for c in comps if c["a"].startswith("function pointer (indirect"))
    verdict = (f"static call {sc['ratio']:.2f}x a direct call "
               f"({'~' if sc['verdict'] == '~' else 'p=%.3g' % sc['p_value']}), "
               f"function pointer {ptr['ratio']:.2f}x "
               f"({'~' if ptr['verdict'] == '~' else 'p=%.3g' % ptr['p_value']}); "
               "seed 002 claims direct-call cost for static calls")
    return {"id": "E2", "seed": "002",
            "title": "indirect vs direct vs static call (x = f(x) chain)",
            "rows": rows, "comparisons": comps,
            "aa": {"ratio": aa["ratio"], "p_value": aa["p_value"]},
            "verdict": verdict}
