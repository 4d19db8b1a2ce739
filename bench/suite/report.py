# SPDX-License-Identifier: MIT
"""The reports: the JSON document, written one row to a line, and the
Markdown."""
import json


def to_json(v, indent=0):
    """JSON text of v with each element of a list of objects (experiments,
    rows, comparisons) on a line of its own, and scalars and lists of
    numbers (samples) inline: diff-able and greppable, not one number to
    a line."""
    pad = " " * indent
    nested = isinstance(v, dict) and any(
        isinstance(x, dict) and x or
        isinstance(x, list) and x and isinstance(x[0], dict)
        for x in v.values())
    if nested or v is not None and indent == 0 and isinstance(v, dict):
        return "{\n" + ",\n".join(
            f"{pad} {json.dumps(k)}: {to_json(x, indent + 1)}"
            for k, x in v.items()) + f"\n{pad}}}"
    if isinstance(v, list) and v and isinstance(v[0], dict):
        return "[\n" + ",\n".join(f"{pad} {to_json(x, indent + 1)}"
                                   for x in v) + f"\n{pad}]"
    return json.dumps(v)


# an experiment's rows and comparisons are tabled up to this many; past
# it, only those it names in "summary"
MAX_TABLE = 100


def fmt(v):
    return "-" if v is None else f"{v:.3f}"


def markdown(doc, plots=None, plot_note=None):
    """The report. plots: {experiment id: [(caption, PNG file name or
    None, error or None)]} from suite/plot.py's render(), embedded under
    each experiment; plot_note: said once instead when there are none
    ("gnuplot not installed")."""
    m = doc["machine"]
    out = ["# switchyard benchmarks", "",
           f"Command: `{doc['command']}`", "",
           f"Machine: {m['cpu']}, {m['cores']} CPUs; kernel {m['kernel']}; "
           f"{m['libc']}; {m['compiler']}; governor: {m['governor']}; "
           f"hardware counters: {m['perf_counters']}.", ""]
    if plot_note:
        out += [f"(plots: {plot_note})", ""]
    elif plots:
        out += ["Plots: medians with their 95% confidence intervals (error "
                "bars or bands); by size, the comparisons' ratios under "
                "them (filled points: p < 0.05).", ""]
    for e in doc["experiments"]:
        out += [f"## {e['id']} (seed {e['seed']}): {e['title']}", ""]
        for caption, png, err in (plots or {}).get(e["id"], []):
            out += [f"![{caption}]({png})" if png else
                    f"({caption}: plot failed: {err})", ""]
        out += [
                "| | median | 95% CI | n | outliers | lane |",
                "|---|---|---|---|---|---|"]
        rows, comps = e["rows"], e["comparisons"]
        if len(rows) > MAX_TABLE:
            # an experiment of many points (E4) names its summary rows;
            # the others are in the JSON and the plots
            keep = set(e.get("summary", ()))
            rows = [r for r in rows if r["name"] in keep]
            comps = [c for c in comps if c["a"] in keep]
            out.append(f"| ({len(e['rows']) - len(rows)} more rows: in the "
                       "JSON and the plots) | | | | | |")
        for r in rows:
            out.append(f"| {r['name']} | {fmt(r['median'])} {r['unit']} | "
                       f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}] | {r['n']} | "
                       f"{r['outliers']} | {r['lane']} |")
        out += ["", "| A vs B | ratio | p | |", "|---|---|---|---|"]
        if len(comps) < len(e["comparisons"]):
            out.append(f"| ({len(e['comparisons']) - len(comps)} more: in "
                       "the JSON) | | | |")
        for c in comps:
            out.append(f"| {c['a']} vs {c['b']} | {c['ratio']:.3f} | "
                       f"{c['p_value']:.3g} | {c['verdict']} |")
        if e.get("lane_note"):
            out += ["", e["lane_note"] + "."]
        if e.get("aa"):
            out += ["", f"A/A (noise floor): {e['aa']['ratio']:.3f}, "
                        f"p = {e['aa']['p_value']:.3g}."]
        out += ["",
                f"Verdict: {e['verdict']}", ""]
    return "\n".join(out)
