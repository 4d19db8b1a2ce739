# SPDX-License-Identifier: MIT
"""E5 (seed 004): full save against callee-save calls."""
import os

from .lanes import CG_NOTE, callgrind_rows, raw_lines, seed_rows
from .stats import find, said

PROGRAMS = ["seed004_unlock"]


def run(bindir, quick, tmp):
    """Seed 004: a lock/unlock loop with 1-4 threads where the unlock is a
    static call to an ordinary function (full save), a callee-save thunk,
    or a hand-written callee-save function (bench/seed004_unlock.c)."""
    recs = raw_lines(bindir, "seed004_unlock", tmp, pin=False)
    rows, comps, aa = seed_rows(recs)
    rows += callgrind_rows(bindir, "seed004_unlock", tmp)
    c1 = find(comps, "1, CPU time: thunk", "1, CPU time: full")
    c2 = find(comps, "1, CPU time: fast", "1, CPU time: full")
    return {"id": "E5", "seed": "004",
            "title": "lock/unlock with 1-4 threads: full save vs callee-save",
            "rows": rows, "comparisons": comps, "aa": aa,
            "lane_note": CG_NOTE,
            "verdict": f"1 thread: thunk vs full {said(c1)}, hand-written "
                       f"callee-save vs full {said(c2)} (seed 004: callee-"
                       "save calls save the caller's register spills)"}
