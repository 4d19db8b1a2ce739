#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""layers.py - check that src/ keeps the layers that doc/DESIGN.md draws.

  scripts/layers.py [--graph] [--arch ARCH] [--cc GCC]

The calls are the compiler's own: every file of the library (src/, its
subfolders, and src/arch/ARCH/) is compiled with gcc -O0 -fcallgraph-info,
which writes each function's calls after preprocessing (SY_GUARDED and the
other macros expanded) and before any inlining. A call to a function that
another file defines is an arrow between the two files; calls made by a
header's inline function count for the file that includes it.

The layers are the table under "## The layers" at the top of
doc/DESIGN.md: one row a layer, top first, each naming its files. The
rules, each checked here:
  1. every file of the library is in exactly one layer, and every file of
     the table exists;
  2. an arrow goes to the same layer or one below it, never up, except the
     arrows the table's "Upward calls" list names (file -> file), each of
     which must still exist;
  3. the files of a layer whose row says "calls nothing" call no other
     file (a row may allow named files: "calls nothing but guard.c");
  4. the only cycles are the ones the "Cycles" list names, and each of
     them is still a cycle;
  5. every function internal.h declares is defined in a file its banner
     ("/* ---- what (file.c) ----") names.
--graph prints the arrows (file -> file: the functions called) and the
cycles, and checks nothing. Exit: 0 the layers hold, 1 they do not (each
broken rule on a line), 2 the check could not run.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

NODE = re.compile(r'node: \{ title: "([^"]+)" label: "([^"\\]+)\\n([^":]+):\d+:\d+"( shape : ellipse)?')
EDGE = re.compile(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')


def sources(arch):
    src = os.path.join(ROOT, "src")
    files = sorted(glob.glob(os.path.join(src, "*.c")))
    for d in sorted(os.listdir(src)):
        p = os.path.join(src, d)
        if os.path.isdir(p) and d != "arch":
            files += sorted(glob.glob(os.path.join(p, "*.c")))
    files += sorted(glob.glob(os.path.join(src, "arch", arch, "*.c")))
    if arch != "generic":	# shared by the arches that patch
        files += sorted(glob.glob(os.path.join(src, "arch", "*.c")))
    return files


def rel(path):
    return os.path.relpath(path, os.path.join(ROOT, "src"))


def callgraph(cc, arch, files):
    """{file: {name}} defined, and [(file, callee name)] calls."""
    tmp = tempfile.mkdtemp(prefix="sy-layers.")
    defined, calls = {}, []
    try:
        for i, f in enumerate(files):
            obj = os.path.join(tmp, "%d.o" % i)
            cmd = [cc, "-O0", "-fcallgraph-info", "-c", f, "-o", obj,
                   "-std=gnu11", "-w", "-D_GNU_SOURCE",
                   "-DSWITCHYARD_BUILDING_LIBRARY", "-DSY__NO_DSO_GLUE",
                   "-I", os.path.join(ROOT, "include"),
                   "-I", os.path.join(ROOT, "src"),
                   "-I", os.path.join(ROOT, "src", "arch", arch)]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode:
                sys.stderr.write(r.stderr)
                raise SystemExit("layers: %s could not compile %s" % (cc, rel(f)))
            ci = os.path.join(tmp, "%d.ci" % i)
            me = rel(f)
            defined[me] = set()
            with open(ci) as fh:
                for line in fh:
                    m = NODE.match(line)
                    if m and not m.group(4) and os.path.samefile(m.group(3), f):
                        # a static function's title is "path:name"
                        if ":" not in m.group(1):
                            defined[me].add(m.group(1))
                        continue
                    m = EDGE.match(line)
                    if m:
                        calls.append((me, m.group(2)))
    finally:
        shutil.rmtree(tmp)
    return defined, calls


def arrows(defined, calls):
    owner = {}
    for f, names in defined.items():
        for n in names:
            owner.setdefault(n, f)
    out = {}
    for f, callee in calls:
        g = owner.get(callee)
        if g and g != f:
            out.setdefault((f, g), set()).add(callee)
    return out


def cycles(files, arrows_):
    """Strongly connected components of more than one file (Tarjan)."""
    succ = {f: sorted(g for (a, g) in arrows_ if a == f) for f in files}
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for f in sorted(files):
        if f not in index:
            visit(f)
    return out


def read_map(path, arch):
    """The table and the lists under '## The layers' of doc/DESIGN.md."""
    text = open(path).read()
    m = re.search(r"^## The layers\n(.*?)(?=^## )", text, re.S | re.M)
    if not m:
        raise SystemExit("layers: no '## The layers' section in %s" % path)
    sec = m.group(1)
    layers, up, cyc = [], set(), []
    mode = None
    for line in sec.splitlines():
        if line.startswith("| ") and not re.match(r"\|\s*(layer|-)", line):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 3:
                continue
            files = [f.replace("ARCH", arch)
                     for f in re.findall(r"`([^`]+\.c)`", cells[1])]
            rule = cells[2]
            allow = None
            if rule.startswith("calls nothing"):
                allow = set(re.findall(r"`([^`]+\.c)`", rule))
            layers.append((cells[0], files, allow))
        elif line.startswith("Upward calls"):
            mode = "up"
        elif line.startswith("Cycles"):
            mode = "cyc"
        elif line.startswith("- ") and mode == "up":
            m2 = re.match(r"- `([^`]+)` -> `([^`]+)`", line)
            if m2:
                up.add((m2.group(1), m2.group(2)))
        elif line.startswith("- ") and mode == "cyc":
            c = sorted(re.findall(r"`([^`]+\.c)`", line))
            if c:
                cyc.append(c)
        elif not line.strip():
            continue
        elif not line.startswith("  "):
            mode = None if not line.startswith("- ") else mode
    return layers, up, cyc


BANNER = re.compile(r"^/\* ---- (?:[^(]*\(([^)]*)\))?")
DECL = re.compile(r"^(?:SY_HIDDEN|SWITCHYARD_API)\s+[^(]*?\b(\w+)\(")


def banners(path, defined):
    """Rule 5: [(line, name, banner files)] declared under the wrong banner."""
    bad, files = [], None
    for n, line in enumerate(open(path), 1):
        m = BANNER.match(line)
        if m:
            files = re.findall(r"[\w/]+\.c", m.group(1) or "")
            continue
        m = DECL.match(line)
        if not m:
            continue
        name = m.group(1)
        if not files or not any(name in defined.get(f, ()) for f in files):
            where = [f for f, names in defined.items() if name in names]
            bad.append("internal.h:%d: %s is under the banner of %s, defined in %s"
                       % (n, name, ", ".join(files or ["no file"]),
                          ", ".join(where) or "no file of the library"))
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--graph", action="store_true",
                    help="print every arrow (file -> file: the functions called) "
                         "and the cycles; check nothing")
    ap.add_argument("--arch", default="x86_64",
                    help="the src/arch/ folder to compile (x86_64, aarch64, generic)")
    ap.add_argument("--cc", default=os.environ.get("SY_LAYERS_CC", "gcc"),
                    help="a gcc (the call graph is its -fcallgraph-info)")
    ap.add_argument("--map", default=os.path.join(ROOT, "doc", "DESIGN.md"),
                    help="the file whose '## The layers' section is checked")
    a = ap.parse_args()
    if not shutil.which(a.cc):
        print("layers: SKIP: no %s (the call graph is gcc's -fcallgraph-info)" % a.cc)
        return 77
    files = sources(a.arch)
    defined, calls = callgraph(a.cc, a.arch, files)
    arr = arrows(defined, calls)
    cyc = cycles(defined.keys(), arr)
    if a.graph:
        for (f, g), names in sorted(arr.items()):
            print("%s -> %s: %s" % (f, g, ", ".join(sorted(names))))
        for c in cyc:
            print("cycle among: " + " ".join(c))
        return 0

    layers, up, allowed_cycles = read_map(a.map, a.arch)
    bad = []
    where = {}
    for i, (name, fs, _) in enumerate(layers):
        for f in fs:
            if f in where:
                bad.append("%s is in two layers" % f)
            where[f] = i
            # an arch file this arch does not build (another arch's, or
            # the patching arches' shared ones on generic) is no error
            if f not in defined and not f.startswith("arch/"):
                bad.append("the map names %s, which is not a file of the library" % f)
    for f in sorted(defined):
        if f not in where:
            bad.append("%s is in no layer of the map" % f)
    for (f, g), names in sorted(arr.items()):
        if f not in where or g not in where:
            continue
        lf, lg = where[f], where[g]
        allow = layers[lf][2]
        if allow is not None and g not in allow:
            bad.append("%s calls %s (%s), and its layer calls nothing"
                       % (f, g, ", ".join(sorted(names))))
        elif lg < lf and (f, g) not in up:
            bad.append("%s (%s) calls up into %s (%s): %s"
                       % (f, layers[lf][0], g, layers[lg][0],
                          ", ".join(sorted(names))))
    for (f, g) in sorted(up):
        if (f, g) not in arr:
            bad.append("the map allows %s -> %s, which no longer exists: drop it" % (f, g))
    for c in cyc:
        if c not in allowed_cycles:
            bad.append("cycle among: %s (files that reach each other; "
                       "--graph shows the arrows)" % " ".join(c))
    for c in allowed_cycles:
        if c not in cyc:
            bad.append("the map allows the cycle %s, which is gone: drop it" % " ".join(c))
    bad += banners(os.path.join(ROOT, "src", "internal.h"), defined)
    for b in bad:
        print("layers: " + b)
    if bad:
        print("layers: FAIL: %d rule(s) broken: move the call, or say why in "
              "doc/DESIGN.md, \"The layers\" (scripts/layers.py --graph shows "
              "the arrows)" % len(bad))
        return 1
    print("layers: OK: %d files in %d layers, %d arrows, %d documented upward call(s), cycles: %s"
          % (len(defined), len(layers), len(arr), len(up),
             "; ".join(" ".join(c) for c in cyc) or "none"))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:	# --graph | head
        sys.stderr.close()
        sys.exit(0)
