# SPDX-License-Identifier: MIT
"""The report's plots: PNGs drawn by gnuplot (Debian's gnuplot-nox, which
scripts/deps.sh installs) from data files, next to the Markdown report
(<md-basename>-<experiment>[-<what>].png). Python's standard library
only; without gnuplot there are no plots and the report says so.

Per experiment, the rows are grouped by (lane, unit), and each group is
drawn one of two ways:

  - a series: every name is "<size> <condition>: <variant>" (E4's
    "256 aligned fixed: glibc", "cold 64: rep") or "v_<variant>_<size>"
    (callgrind functions per size), at 4 sizes or more: a figure of its
    own, one panel per condition, the median of each variant against
    the size (log2 axis) with its 95% CI as a band, and under it the
    ratios of the experiment's comparisons at each size (filled points:
    p < 0.05);
  - otherwise a panel of dots: each row's median, its 95% CI as error
    bars and its value written beside it; the clock lane's panels in
    <md-basename>-<id>.png, the other lanes' (static sizes, callgrind
    and perf counts: no interval) in <md-basename>-<id>-counts.png.

Names are shortened for the axis: the prefix all of a panel's rows share
(up to a ": ") goes to the panel's title, long names are wrapped, and a
name met again in a group gets " (2)", " (3)" (the experiment measured
the same thing under another configuration)."""
import math
import os
import re
import shutil
import subprocess

# colours for variants, in the order met (colour-blind safe, Okabe-Ito)
COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00",
           "#56B4E9", "#000000", "#F0E442"]
WRAP = 40          # characters per line of a row's label
PX_LINE = 19       # pixels per label line in the dot panels
PX_PANEL = 78      # a dot panel's title, axis and margins
WIDTH = 1000

SERIES = (re.compile(r"^(?P<pre>[^:\d]*?)(?P<size>\d+)(?P<post>[^:]*): "
                     r"(?P<var>.+)$"),
          re.compile(r"^v_(?P<var>.+)_(?P<size>\d+)$"))


def terminal():
    """The gnuplot terminal to draw with (pngcairo, else libgd's png),
    or None when gnuplot is not installed."""
    gp = shutil.which("gnuplot")
    if not gp:
        return None
    for term in ("pngcairo", "png"):
        r = subprocess.run([gp, "-e", f"set terminal {term}"],
                           capture_output=True, text=True)
        if r.returncode == 0 and not r.stderr.strip():
            return term
    return None


def q(s):
    """A gnuplot double-quoted string (noenhanced: only \\ and " are
    special; \\n in s stays a line break)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace(
        "\n", "\\n") + '"'


def wrap(s, width=WRAP):
    lines, cur = [], ""
    for w in s.split(" "):
        if cur and len(cur) + 1 + len(w) > width:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    lines.append(cur)
    return "\n".join(lines)


def num(v):
    if v is None:
        return "none"
    a = abs(v)
    if v == int(v) and a < 1e7:
        return str(int(v))
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    return f"{v:.3g}" if a >= 0.01 else f"{v:.2g}"


def step(lo, hi, ticks=5):
    """A 1, 2 or 5 times a power of ten step giving about `ticks` tics."""
    raw = (hi - lo) / ticks if hi > lo else 1.0
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)


def parse_series(name):
    for rx in SERIES:
        m = rx.match(name)
        if m:
            d = m.groupdict()
            cond = (d.get("pre", "") + " " + d.get("post", "")).strip()
            return cond, int(d["size"]), d["var"]
    return None


def groups(e):
    """The rows by (lane, unit), in the order met."""
    out = {}
    for r in e["rows"]:
        out.setdefault((r["lane"], r["unit"]), []).append(r)
    return out


def is_series(rows):
    parsed = [parse_series(r["name"]) for r in rows]
    if any(p is None for p in parsed):
        return None
    if len({p[1] for p in parsed}) < 4:
        return None
    return parsed


def slug(s):
    return re.sub(r"[^A-Za-z0-9]+", "-", s).strip("-").lower() or "x"


def title(doc, e, what=""):
    m = doc.get("machine", {})
    t = f"{e['id']}: {e['title']}{' - ' + what if what else ''}"
    cpu = f"{m.get('cpu', '?')}, {m.get('cores', '?')} CPUs"
    return wrap(t, 110) + "\n" + cpu


def head(term, out, width, height):
    font = "sans,10" if term == "pngcairo" else "sans 9"
    return [f"set terminal {term} size {width},{height} noenhanced "
            f"font {q(font)}" + (" truecolor" if term == "png" else ""),
            f"set output {q(out)}",
            "set datafile separator '\\t'",
            "set encoding utf8"]


def shorten(rows):
    """Labels for a panel's rows: the shared prefix (to a ": ") and the
    rest of each name, repeated names numbered."""
    names = [r["name"] for r in rows]
    prefix = ""
    if len(names) > 1:
        first = names[0]
        i = first.rfind(": ")
        while i > 0:
            p = first[:i + 2]
            if all(n.startswith(p) and len(n) > len(p) for n in names):
                prefix = p
                break
            i = first.rfind(": ", 0, i)
    seen, labels = {}, []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        lab = n[len(prefix):]
        if seen[n] > 1:
            lab += f" ({seen[n]})"
        labels.append(lab)
    return prefix.rstrip(": "), labels


def variant_of(label):
    return label.rsplit(": ", 1)[-1].rsplit(" (", 1)[0]


def dots_figure(doc, e, panels, out, data, term, counts):
    """Panels of dots (median, CI error bars, value) stacked in one PNG;
    panels: [((lane, unit), rows)]."""
    laid, lmargin = [], 10
    for (lane, unit), rows in panels:
        prefix, labels = shorten(rows)
        labels = [wrap(lb) for lb in labels]
        # rows evenly spaced: each as high as the tallest label
        lines = len(labels) * max(lb.count("\n") + 1 for lb in labels)
        lmargin = max(lmargin, max(len(s) for lb in labels
                                   for s in lb.split("\n")) + 2)
        laid.append((lane, unit, rows, prefix, labels,
                     PX_PANEL + PX_LINE * max(lines, 2)))
    top = 62
    height = top + sum(p[-1] for p in laid)
    g = head(term, out, WIDTH, height)
    g += ["set multiplot", "unset key", "set grid xtics lc rgb '#dddddd'",
          f"set label 99 {q(title(doc, e, 'counts' if counts else ''))} "
          f"at screen 0.5, screen {1 - 8 / height:.5f} center front",
          "set tics nomirror", "set border 3",
          f"set lmargin {min(lmargin, 60)}", "set rmargin 3",
          "set tmargin 2", "set bmargin 2.5"]
    y0 = height - top
    with open(data, "w") as f:
        for k, (lane, unit, rows, prefix, labels, px) in enumerate(laid):
            vs = sorted({variant_of(lb) for lb in labels},
                        key=[variant_of(lb) for lb in labels].index)
            colour = (len(vs) < len(labels) and len(vs) <= len(COLOURS))
            vals = [v for r in rows for v in (r["median"], r["ci_low"],
                                               r["ci_high"]) if v is not None]
            pos = [v for v in vals if v > 0]
            logx = bool(pos) and len(pos) == len(vals) and \
                max(pos) / min(pos) > 50
            n = len(rows)
            for i, (r, lb) in enumerate(zip(rows, labels)):
                m = r["median"]
                lo = r["ci_low"] if r["ci_low"] is not None else m
                hi = r["ci_high"] if r["ci_high"] is not None else m
                c = vs.index(variant_of(lb)) if colour else 0
                # columns: y, median, CI, colour, its label and where
                if m is None:
                    nowhere = min(pos) if logx else 0
                    f.write(f"{n - 1 - i}\tNaN\tNaN\tNaN\t{c}\tnone\t"
                            f"{nowhere!r}\n")
                else:
                    f.write(f"{n - 1 - i}\t{m!r}\t{lo!r}\t{hi!r}\t{c}\t"
                            f"{num(m)}\t{hi!r}\n")
            f.write("\n\n")
            what = f"{unit}, " + ("median and 95% CI" if lane == "clock" or
                                  any(r["ci_low"] != r["ci_high"]
                                      for r in rows) else "count")
            ptitle = f"{what} ({lane} lane)" + (f" - {prefix}" if prefix
                                                 else "")
            hi_all = max(vals) if vals else 1
            g += [f"set origin 0, {(y0 - px) / height:.5f}",
                  f"set size 1, {px / height:.5f}",
                  f"set title {q(ptitle)}",
                  "set ytics (" + ", ".join(
                      f"{q(lb.replace('%', '%%'))} {n - 1 - i}"
                      for i, lb in
                      enumerate(labels)) + ")",
                  f"set yrange [-0.6:{n - 0.4}]",
                  "set logscale x 2" if logx else "unset logscale x",
                  (f"set xrange [{min(pos) / 1.5!r}:{hi_all * 2.2!r}]"
                   if logx else f"set xrange [0:{hi_all * 1.14 or 1!r}]"),
                  "set format x '%g'"]
            lc = ("lc rgb variable" if colour else f"lc rgb {q(COLOURS[0])}")
            rgb = ("(" + "+".join(f"($5=={j}?{int(col[1:], 16)}:0)"
                                  for j, col in enumerate(COLOURS)) + ")")
            using_c = f":{rgb}" if colour else ""
            g.append(f"plot {q(data)} index {k} using 2:1:3:4{using_c} with "
                     f"xerrorbars pt 7 ps 1.1 lw 1.5 {lc}, '' index {k} using "
                     f"7:1:6 with labels left offset 1,0 tc rgb '#333333'")
            y0 -= px
    g.append("unset multiplot")
    return g


def series_figure(doc, e, lane, unit, rows, parsed, out, data, term,
                  colours):
    """One panel per condition: the median of each variant against the
    size, its CI as a band; under it the comparisons' ratios."""
    conds, variants = [], []
    pts = {}
    for r, (cond, size, var) in zip(rows, parsed):
        if cond not in conds:
            conds.append(cond)
        if var not in variants:
            variants.append(var)
        pts.setdefault((cond, var), []).append((size, r))
    key = {r["name"]: p for r, p in zip(rows, parsed)}
    ratios = {}
    for c in e.get("comparisons", []):
        a, b = key.get(c["a"]), key.get(c["b"])
        if a and b and a[0] == b[0] and a[1] == b[1]:
            ratios.setdefault((a[0], f"{a[2]} / {b[2]}"), []).append(
                (a[1], c["ratio"], c["verdict"] != "~"))
    pairs = []
    for (_, p) in ratios:
        if p not in pairs:
            pairs.append(p)
    for v in variants:
        colours.setdefault(v, COLOURS[len(colours) % len(COLOURS)])
    ncol = 2 if len(conds) > 1 else 1
    nrow = math.ceil(len(conds) / ncol)
    gap = 24 if nrow > 1 else 0
    cell_h = 520 if ratios else 380
    top = 62
    width = 700 * ncol if ncol > 1 else 900
    height = top + nrow * cell_h + (nrow - 1) * gap
    vals = [r[k] for r in rows for k in ("median", "ci_low", "ci_high")
            if r[k] is not None]
    logy = vals and min(vals) > 0 and max(vals) / min(vals) > 20
    # a linear axis around the medians: an interval far out (one round
    # that met a page fault) is clipped rather than flattening the lines
    meds = [r["median"] for r in rows if r["median"] is not None]
    if meds and not logy:
        span = max(max(meds) - min(meds), 0.05 * max(abs(v) for v in meds))
        ylo = max(min(vals), min(meds) - span)
        yhi = min(max(vals), max(meds) + span)
        if min(vals) >= 0:
            ylo = max(ylo, 0)
        pad = (yhi - ylo) * 0.05 or 1
        ylo = ylo - pad if ylo - pad > 0 or min(vals) < 0 else 0
        yrange = f"set yrange [{ylo!r}:{yhi + pad!r}]"
    else:
        yrange = "set yrange [*:*]"
    sizes = sorted({p[1] for p in parsed})
    # a few sizes: each variant's CI as error bars, the variants side by
    # side (shifted along the log2 axis); many: as bands
    shift = 0.07 if len(sizes) <= 12 else 0
    g = head(term, out, width, height)
    g += ["set multiplot",
          f"set label 99 {q(title(doc, e, unit + ' by size'))} "
          f"at screen 0.5, screen {1 - 8 / height:.5f} center front",
          "set tics nomirror", "set border 3",
          "set grid xtics ytics lc rgb '#e5e5e5'",
          "set logscale x 2", "set format x '%g'",
          f"set xrange [{sizes[0] / 1.2!r}:{sizes[-1] * 1.2!r}]",
          "set lmargin 9", "set rmargin 2",
          "set style fill transparent solid 0.22 noborder"]
    blocks = 0
    with open(data, "w") as f:
        for ci, cond in enumerate(conds):
            col, row_ = ci % ncol, ci // ncol
            x0 = col / ncol
            ytop = height - top - row_ * (cell_h + gap)
            main_h = cell_h * (0.68 if ratios else 1.0)
            plots = []
            for vi, var in enumerate(variants):
                p = sorted(pts.get((cond, var), []), key=lambda t: t[0])
                if not p:
                    continue
                for size, r in p:
                    if r["median"] is None:
                        continue
                    lo = r["ci_low"] if r["ci_low"] is not None else r["median"]
                    hi = r["ci_high"] if r["ci_high"] is not None \
                        else r["median"]
                    x = size * 2 ** (shift * (vi - (len(variants) - 1) / 2))
                    f.write(f"{x!r}\t{r['median']!r}\t{lo!r}\t{hi!r}\n")
                f.write("\n\n")
                colr = q(colours[var])
                if shift:
                    plots.append(f"{q(data)} index {blocks} using 1:2:3:4 "
                                 f"with yerrorlines pt 7 ps 0.7 lw 1.4 "
                                 f"lc rgb {colr} title {q(var)}")
                else:
                    plots.append(f"{q(data)} index {blocks} using 1:3:4 "
                                 f"with filledcurves lc rgb {colr} notitle")
                    plots.append(f"'' index {blocks} using 1:2 with "
                                 f"linespoints pt 7 ps 0.45 lw 1.4 "
                                 f"lc rgb {colr} title {q(var)}")
                blocks += 1
            g += [f"set origin {x0!r}, {(ytop - main_h) / height:.5f}",
                  f"set size {1 / ncol!r}, {main_h / height:.5f}",
                  f"set title {q(cond or unit)}",
                  f"set ylabel {q(unit)}",
                  "set logscale y" if logy else "unset logscale y",
                  "set ytics autofreq", yrange,
                  "set xlabel " + ("''" if ratios else q("bytes (log2)")),
                  "set key top left reverse Left samplen 2",
                  "set tmargin 2", "set bmargin " + ("1" if ratios else "3"),
                  "plot " + ", ".join(plots)]
            if not ratios:
                continue
            rplots, rv = [], [1.0]
            for pi, pair in enumerate(pairs):
                rs = sorted(ratios.get((cond, pair), []))
                if not rs:
                    continue
                for size, ratio, sig in rs:
                    rv.append(ratio)
                    f.write(f"{size}\t{ratio!r}\t{1 if sig else 0}\n")
                f.write("\n\n")
                # the colour of the variant compared with
                colr = q(colours.get(pair.split(" / ")[-1],
                                     COLOURS[(pi + len(variants)) %
                                             len(COLOURS)]))
                rplots.append(f"{q(data)} index {blocks} using 1:2 with lines "
                              f"lw 1 lc rgb {colr} title "
                              f"{q(pair + ' (filled: p < 0.05)')}")
                rplots.append(f"'' index {blocks} using 1:($3>0?$2:NaN) with "
                              f"points pt 7 ps 0.55 lc rgb {colr} notitle")
                rplots.append(f"'' index {blocks} using 1:($3>0?NaN:$2) with "
                              f"points pt 6 ps 0.55 lc rgb {colr} notitle")
                blocks += 1
            rh = cell_h - main_h
            st = step(min(rv), max(rv), 4)
            g += [f"set origin {x0!r}, {(ytop - cell_h) / height:.5f}",
                  f"set size {1 / ncol!r}, {rh / height:.5f}",
                  "unset title", "unset logscale y", "set yrange [*:*]",
                  f"set ytics {st!r}",
                  "set ylabel 'ratio'", "set xlabel 'bytes (log2)'",
                  "set key top left reverse Left samplen 2 opaque",
                  "set tmargin 0.5", "set bmargin 3",
                  "set arrow 1 from graph 0, first 1 to graph 1, first 1 "
                  "nohead dt 2 lc rgb '#777777'"]
            g.append("plot " + (", ".join(rplots) if rplots else
                                "NaN notitle"))
            g.append("unset arrow 1")
    g.append("unset multiplot")
    return g


def draw(script, path):
    with open(path, "w") as f:
        f.write("\n".join(script) + "\n")
    r = subprocess.run(["gnuplot", path], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().splitlines()[-1]
                           if r.stderr.strip() else f"exit {r.returncode}")


def render(doc, md_path, keep_scripts=False):
    """Draw every experiment's figures next to md_path. Returns None when
    gnuplot is not installed, else {experiment id: [(caption, file name
    or None, error or None)]}, file names relative to md_path's
    directory. A figure gnuplot fails on is reported, not fatal."""
    term = terminal()
    if term is None:
        return None
    d = os.path.dirname(os.path.abspath(md_path))
    base = os.path.splitext(os.path.basename(md_path))[0]
    figs = {}
    for e in doc["experiments"]:
        got = figs.setdefault(e["id"], [])
        clock, other, jobs, colours = [], [], [], {}
        for (lane, unit), rows in groups(e).items():
            parsed = is_series(rows)
            if parsed:
                name = f"{base}-{e['id']}-{slug(unit)}"
                if lane != "clock":
                    name += f"-{slug(lane)}"
                jobs.append((f"{e['id']}: {unit} by size ({lane})", name,
                             lambda o, dat, lane=lane, unit=unit, rows=rows,
                             parsed=parsed: series_figure(
                                 doc, e, lane, unit, rows, parsed, o, dat,
                                 term, colours)))
            elif lane == "clock":
                clock.append(((lane, unit), rows))
            else:
                other.append(((lane, unit), rows))
        if clock:
            jobs.insert(0, (f"{e['id']}: medians and 95% CIs",
                            f"{base}-{e['id']}",
                            lambda o, dat, p=clock: dots_figure(
                                doc, e, p, o, dat, term, False)))
        if other:
            lanes = sorted({lane for (lane, _), _ in other})
            jobs.append((f"{e['id']}: " + ", ".join(lanes) +
                         (" lanes" if len(lanes) > 1 else " lane"),
                f"{base}-{e['id']}-counts",
                lambda o, dat, p=other: dots_figure(
                    doc, e, p, o, dat, term, True)))
        for caption, name, make in jobs:
            png = os.path.join(d, name + ".png")
            dat = os.path.join(d, name + ".dat")
            gp = os.path.join(d, name + ".gp")
            try:
                draw(make(png, dat), gp)
                got.append((caption, name + ".png", None))
            except (RuntimeError, OSError, ValueError) as x:
                got.append((caption, None, str(x)))
                if os.path.exists(png):
                    os.remove(png)
            finally:
                if not keep_scripts:
                    for p in (dat, gp):
                        if os.path.exists(p):
                            os.remove(p)
    return figs
