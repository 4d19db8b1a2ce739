#!/bin/sh
# run_static_calls.sh SRC E2_CALLS BENCH_SC_UPDATE OUTDIR - the figures
# of doc/BENCHMARKS-HISTORY.md "[6/10] Static calls: patched sites":
#  1. code per call site and instructions per call (objdump; callgrind, if
#     valgrind is installed; checks that the retpoline loop uses a thunk);
#  2. time per call, every variant interleaved in one process, then the
#     same binary again with SWITCHYARD_STATIC_CALL=detour (every site
#     parked);
#  3. static_call_update() of a call with 100 sites against membarrier
#     SYNC_CORE and RSEQ, 0 and 2 threads running the sites; not pinned,
#     then pinned (updater on CPU 0, runners on CPU 1); once parked.
# Raw samples go to OUTDIR as JSON.
set -eu
src=$1; call=$2; upd=$3; out=$4
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
mkdir -p "$out"
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
fam=$(grep -m1 '^cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' ')
mod=$(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | cut -d: -f2 | tr -d ' ')
echo "== machine: $(uname -sr), $(nproc) CPUs, $cpu (family $fam model $mod)"
echo "== compiler: $(${CC:-cc} --version 2>/dev/null | head -1)"
if git -C "$src" rev-parse HEAD >/dev/null 2>&1; then
	echo "== source: $(git -C "$src" log -1 --format='%h %ci' HEAD) (HEAD);" \
	     "library (src/, include/) last changed by" \
	     "$(git -C "$src" log -1 --format='%h' HEAD -- src include)"
	if git -C "$src" rev-parse -q --verify main >/dev/null; then
		m=$(git -C "$src" rev-parse --short main)
		if git -C "$src" merge-base --is-ancestor main HEAD; then
			echo "   main ($m) is in HEAD"
		else
			echo "   main ($m) is NOT in HEAD: rebase to measure it"
		fi
	fi
fi
echo "== load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

echo "== 1. code and instructions (bench/extra/sc_code.py)"
if command -v valgrind >/dev/null 2>&1; then
	rm -rf "$out/callgrind"; mkdir -p "$out/callgrind"
	valgrind --tool=callgrind --callgrind-out-file="$out/callgrind/cg.out" \
		"$call" --callgrind 1000 11000 > "$out/callgrind.log" 2>&1
	grep -v '^==' "$out/callgrind.log" | sed 's/^/   under valgrind: /'
	"$here/sc_code.py" "$call" "$out/callgrind"
else
	echo "(valgrind not installed: no instruction counts)"
	"$here/sc_code.py" "$call"
fi
echo
echo "== bytes per site, by section (bench/extra/sc_site_bytes.c: 100 static"
echo "   calls minus 100 direct calls, -O2 -fPIC -shared, / 100)"
cc=${CC:-cc}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
$cc -O2 -fPIC -shared -I"$src/include" "$here/sc_site_bytes.c" -o "$tmp/d.so"
$cc -O2 -fPIC -shared -DSC_STATIC -I"$src/include" "$here/sc_site_bytes.c" -o "$tmp/s.so"
size -A "$tmp/d.so" > "$tmp/d.txt"; size -A "$tmp/s.so" > "$tmp/s.txt"
awk 'NR == FNR { d[$1] = $2; next }
     $2 ~ /^[0-9]+$/ && $1 != "Total" && $2 != d[$1] {
	printf "   %-36s %6d -> %6d B  %+7.2f B per site\n", $1, d[$1], $2, ($2 - d[$1]) / 100 }' \
	"$tmp/d.txt" "$tmp/s.txt"
echo

echo "== 2a. time per call (e2_calls)"
"$call" --json "$out/sc_call.json"
echo
echo "== 2b. time per call, second process: SWITCHYARD_STATIC_CALL=detour"
SWITCHYARD_STATIC_CALL=detour "$call" --json "$out/sc_call_detour.json"
echo

echo "== 3a. static_call_update() latency (bench_sc_update), not pinned"
"$upd" --json "$out/sc_update.json"
echo
echo "== 3b. the same, pinned"
rc=0
"$upd" --pin --json "$out/sc_update_pinned.json" || rc=$?
[ $rc -eq 0 ] || [ $rc -eq 77 ] || exit $rc
echo
echo "== 3c. the same, sites parked (SWITCHYARD_STATIC_CALL=detour)"
SWITCHYARD_STATIC_CALL=detour "$upd" --samples 101
echo
echo "== load average: $(cut -d' ' -f1-3 /proc/loadavg)"
