# SPDX-License-Identifier: MIT
"""E5 (seed 004): full save against callee-save calls."""

from .lanes import callgrind_run, cg_note_instructions, raw_lines, seed_rows
from .stats import find, said

PROGRAMS = ["e5_unlock"]
PERF_NOTE = ("; perf rows (rows \"1\" to \"4\"): counts per lock/unlock "
             "pair of all the threads, each worker counting its own thread "
             "(user space: a waiter's spinning counts, its futex sleep "
             "does not) and the counts summed over the workers; the "
             "one-thread run's are also those of \"1, CPU time\" (the "
             "same batches)")


def run(bindir, quick, tmp):
    """Seed 004: a lock/unlock loop with 1-4 threads where the unlock is a
    static call to an ordinary function (full save), a callee-save thunk,
    or a hand-written callee-save function (bench/e5_unlock.c)."""
    recs = raw_lines(bindir, "e5_unlock", tmp, pin=False)
    rows, comps, aa = seed_rows(recs)
    cg = callgrind_run(bindir, "e5_unlock", tmp)
    rows += cg["rows"]
    c1 = find(comps, "1, CPU time: thunk", "1, CPU time: full")
    c2 = find(comps, "1, CPU time: fast", "1, CPU time: full")
    return {"id": "E5", "seed": "004",
            "title": "lock/unlock with 1-4 threads: full save vs callee-save",
            "rows": rows, "comparisons": comps, "aa": aa,
            "lane_note": cg_note_instructions(cg)
            + (PERF_NOTE if recs.perf else ""),
            "verdict": f"1 thread: thunk vs full {said(c1)}, hand-written "
                       f"callee-save vs full {said(c2)} (seed 004: callee-"
                       "save calls save the caller's register spills)"}
