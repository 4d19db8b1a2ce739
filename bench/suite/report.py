# SPDX-License-Identifier: MIT
"""The Markdown report."""


def fmt(v):
    return "-" if v is None else f"{v:.3f}"


def markdown(doc):
    m = doc["machine"]
    out = [f"# switchyard benchmarks", "",
           f"Command: `{doc['command']}`", "",
           f"Machine: {m['cpu']}, {m['cores']} CPUs; kernel {m['kernel']}; "
           f"{m['libc']}; {m['compiler']}; governor: {m['governor']}; "
           f"hardware counters: {m['perf_counters']}.", ""]
    for e in doc["experiments"]:
        out += [f"## {e['id']} (seed {e['seed']}): {e['title']}", "",
                "| | median | 95% CI | n | outliers | lane |",
                "|---|---|---|---|---|---|"]
        shown = e["rows"] if len(e["rows"]) <= 40 else []
        if not shown:
            out.append(f"| ({len(e['rows'])} rows: in the JSON) | | | | | |")
        for r in shown:
            out.append(f"| {r['name']} | {fmt(r['median'])} {r['unit']} | "
                       f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}] | {r['n']} | "
                       f"{r['outliers']} | {r['lane']} |")
        out += ["", "| A vs B | ratio | p | |", "|---|---|---|---|"]
        for c in (e["comparisons"] if len(e["comparisons"]) <= 40 else []):
            out.append(f"| {c['a']} vs {c['b']} | {c['ratio']:.3f} | "
                       f"{c['p_value']:.3g} | {c['verdict']} |")
        if e.get("lane_note"):
            out += ["", e["lane_note"] + "."]
        out += ["", f"A/A (noise floor): {e['aa']['ratio']:.3f}, "
                    f"p = {e['aa']['p_value']:.3g}.", "",
                f"Verdict: {e['verdict']}", ""]
    return "\n".join(out)
