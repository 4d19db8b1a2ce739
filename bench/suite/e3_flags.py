# SPDX-License-Identifier: MIT
"""E3 (seed 000): push; popf against test; jz."""

from .lanes import callgrind_run, cg_note_instructions, raw_lines, seed_rows
from .stats import compare, said

PROGRAMS = ["e3_popf"]


def run(bindir, quick, tmp):
    """Seed 000: restoring the flags with push; popf against test; jz
    (stc), as inline natives at static call sites, with the carry flag set
    and clear, and the plain call they replace (bench/e3_popf.c)."""
    recs = raw_lines(bindir, "e3_popf", tmp)
    rows, comps, aa = seed_rows(recs)
    cg = callgrind_run(bindir, "e3_popf", tmp)
    rows += cg["rows"]
    out = []
    for loop in ("CF set", "CF clear"):
        rs = {r["variant"]: r["samples"] for r in recs if r["loop"] == loop}
        popf = next((v for k, v in rs.items() if k.startswith("native push")), None)
        test = next((v for k, v in rs.items() if k.startswith("native testw")), None)
        if popf and test:
            c = compare("test", test, "popf", popf)
            comps.append(dict(c, a=f"{loop}: native testw; jz; stc",
                              b=f"{loop}: native push %rdi; popfq"))
            out.append(f"{loop}: test/jz vs popf {said(c)}")
    return {"id": "E3", "seed": "000",
            "title": "push; popf vs test; jz to restore the flags",
            "rows": rows, "comparisons": comps, "aa": aa,
            "lane_note": cg_note_instructions(cg),
            "verdict": "; ".join(out) + " (seed 000: the test form is the "
                       "cheaper one)"}
