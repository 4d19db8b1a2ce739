#!/bin/sh
# check_install_bench.sh BUILDDIR - `switchyard bench` from an install, as a
# user who installed the package runs it to measure the machine: install
# into a temporary prefix (a path with a space), move the tree (the tool
# must find the suite relative to itself, not where it was installed, nor
# the build tree), and from a directory outside the source and build trees
# run one experiment of the quick run (E1: seconds; the whole --quick run
# takes minutes). It must exit 0 and write its reports there, with rows
# measured by the installed programs. A tool installed without the suite
# must say how to get it and exit 1.
set -u
build=$1
fail() { echo "FAIL: $*"; exit 1; }
cachevar() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }

[ -x "$build/tools/switchyard" ] || { echo "SKIP: the switchyard tool is not built (capstone)"; exit 77; }
[ "$(cachevar SWITCHYARD_INSTALL_BENCH)" = ON ] ||
	{ echo "SKIP: SWITCHYARD_INSTALL_BENCH is off (not x86-64, or turned off)"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }

p=$(mktemp -d "${TMPDIR:-/tmp}/sy bench.XXXXXX") || fail "mktemp"
trap 'rm -rf "$p"' EXIT
cmake --install "$build" --prefix "$p/installed" >/dev/null || fail "cmake --install"
mv "$p/installed" "$p/moved prefix" || fail "mv"
prefix="$p/moved prefix"
bench=$(find "$prefix" -name sybench.py -path '*/switchyard/bench/*')
[ -n "$bench" ] || fail "sybench.py not installed"
bench=$(dirname "$bench")
for f in e1_pipe e1_dense e2_calls e2_pvlock e3_popf \
	e4_memcpy e4_cold e5_unlock peers_flip peers_sites; do
	[ -x "$bench/$f" ] || fail "${bench#"$p/"}/$f not installed"
done
[ -f "$bench/suite/stats.py" ] || fail "the harness's suite/ not installed"
# E6 (run by name only: it downloads nginx) finds its patch and add-on
# beside the suite, and the moved install's headers and library
python3 - "$bench" <<'EOF' || fail "E6 does not find its files in the install"
import os, sys
sys.path.insert(0, sys.argv[1])
from suite import e6_build as e
d = e.e6_dir(sys.argv[1])
assert d and os.path.samefile(d, os.path.join(sys.argv[1], "e6")), d
assert os.path.exists(os.path.join(d, "ngx_switchyard", "config")), d
inc, lib = e.switchyard_dev(sys.argv[1])
assert os.path.exists(os.path.join(inc, "switchyard", "static_key.h")), inc
assert os.path.exists(os.path.join(lib, "libswitchyard.so")), lib
EOF

mkdir "$p/work" && cd "$p/work" || fail "cd"
"$prefix/bin/switchyard" bench --quick --no-plots E1 >out.txt 2>err.txt
rc=$?
[ $rc = 0 ] || { cat err.txt; fail "switchyard bench --quick E1 from the install: exit $rc"; }
python3 - <<'EOF' || { cat err.txt; fail "the report"; }
import json, sys
d = json.load(open("bench-results.json"))
assert d["format"] == "switchyard-bench/1", d["format"]
# the installed build's record, not a build tree's CMakeCache.txt
assert d["machine"]["build"], "no build record in the machine"
e = {x["id"]: x for x in d["experiments"]}
assert list(e) == ["E1"], list(e)
assert not e["E1"].get("error"), e["E1"]["error"]
clock = [r for r in e["E1"]["rows"] if r["lane"] == "clock"]
assert len(clock) >= 3 and all(r["n"] > 0 and r["median"] > 0 for r in clock), \
    e["E1"]["rows"]
md = open("bench-report.md").read()
assert "## E1" in md and "| median |" in md, md[:500]
print(f"E1 from the install: {len(e['E1']['rows'])} rows, "
      f"{len(clock)} clock rows; {e['E1']['verdict'][:100]}")
EOF
grep -q "## E1" out.txt || fail "the report was not printed"

# The tool alone (no suite beside it): says so, names the option, exit 1.
mkdir -p "$p/lone/bin" "$p/lone/lib"
cp "$prefix/bin/switchyard" "$p/lone/bin/"
cp -P "$(dirname "$(find "$prefix" -name libswitchyard.so.0)")"/libswitchyard.so* "$p/lone/lib/"
"$p/lone/bin/switchyard" bench --quick E1 >out2.txt 2>err2.txt
rc=$?
[ $rc = 1 ] || fail "bench without the suite: exit $rc, want 1"
grep -q "not installed.*SWITCHYARD_INSTALL_BENCH" err2.txt ||
	{ cat err2.txt; fail "bench without the suite does not say how to get it"; }
echo "PASS: switchyard bench from an install at a moved prefix"
