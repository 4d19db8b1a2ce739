#!/bin/sh
# check_fastpath.sh PROG [--report] - run PROG under callgrind and check that
# a disabled site costs exactly one instruction per call (fp_site - fp_plain)
# and that it never loads the key (no data read in fp_site beyond fp_plain).
# Exit 77 (SKIP) without valgrind.
set -eu
prog=$1
report=${2:-}
command -v valgrind >/dev/null 2>&1 || { echo "SKIP: valgrind not installed"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
valgrind --tool=callgrind --smc-check=all --cache-sim=yes \
	--callgrind-out-file="$out" "$prog" >/dev/null 2>&1
calls=1000
# Self cost per function: Ir and Dr (data reads).
line() { callgrind_annotate --inclusive=no --threshold=100 "$out" 2>/dev/null |
	grep -E "[ :]$1( |$|\\[)" | head -1; }
num() { echo "$1" | awk -v col="$2" '{ gsub(",", "", $col); print $col }'; }
# Columns of callgrind_annotate with --cache-sim=yes: Ir I1mr ILmr Dr ...
plain=$(line fp_plain); site=$(line fp_site); flag=$(line fp_flagcheck)
[ -n "$plain" ] && [ -n "$site" ] && [ -n "$flag" ] || { echo "FAIL: functions not found"; callgrind_annotate --inclusive=no "$out" | head -30; exit 1; }
ir_plain=$(num "$plain" 1); ir_site=$(num "$site" 1); ir_flag=$(num "$flag" 1)
dr_plain=$(num "$plain" 4); dr_site=$(num "$site" 4); dr_flag=$(num "$flag" 4)
d_site=$(( (ir_site - ir_plain) ))
d_flag=$(( (ir_flag - ir_plain) ))
echo "per call: plain $((ir_plain / calls)) instr, disabled site +$((d_site / calls)) instr (+$(( (dr_site - dr_plain) / calls )) loads), flag check +$((d_flag / calls)) instr (+$(( (dr_flag - dr_plain) / calls )) loads)"
[ -n "$report" ] && exit 0
fail=0
[ "$d_site" -eq "$calls" ] || { echo "FAIL: a disabled site costs $d_site instructions over $calls calls, want exactly $calls"; fail=1; }
[ "$dr_site" -eq "$dr_plain" ] || { echo "FAIL: the disabled site reads data ($dr_site vs $dr_plain reads)"; fail=1; }
[ "$dr_flag" -gt "$dr_plain" ] || { echo "FAIL: the flag check was expected to load the flag (sanity)"; fail=1; }
[ $fail -eq 0 ] && echo "PASS"
exit $fail
