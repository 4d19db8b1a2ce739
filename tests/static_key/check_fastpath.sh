#!/bin/sh
# check_fastpath.sh PROG [--report] - run PROG under callgrind and check that
# a disabled site costs exactly one instruction per call and never loads the
# key: fp_site costs what fp_control costs (the same function with a
# one-NOP asm goto in place of the site), instructions and data reads. Not
# fp_site - fp_plain: whether a function gets a frame around its rare call
# is the compiler's choice (gcc shrink-wraps it: +1 instruction over
# fp_plain; clang 14 pushes and pops on every call), with a site or not.
# Exit 77 (SKIP) without valgrind.
set -eu
prog=$1
report=${2:-}
# A cross build's programs run under an emulator (SY_TEST_EMULATOR,
# CMakeLists.txt): valgrind runs this machine's programs only.
[ -z "${SY_TEST_EMULATOR:-}" ] || {
	echo "SKIP: valgrind cannot run another architecture's program (the cross build's run under an emulator)"; exit 77; }
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
ctrl=$(line fp_control)
[ -n "$plain" ] && [ -n "$site" ] && [ -n "$flag" ] && [ -n "$ctrl" ] || { echo "FAIL: functions not found"; callgrind_annotate --inclusive=no "$out" | head -30; exit 1; }
ir_plain=$(num "$plain" 1); ir_site=$(num "$site" 1); ir_flag=$(num "$flag" 1)
dr_plain=$(num "$plain" 4); dr_site=$(num "$site" 4); dr_flag=$(num "$flag" 4)
ir_ctrl=$(num "$ctrl" 1); dr_ctrl=$(num "$ctrl" 4)
d_site=$(( (ir_site - ir_plain) ))
d_flag=$(( (ir_flag - ir_plain) ))
echo "per call: plain $((ir_plain / calls)) instr, disabled site +$((d_site / calls)) instr (+$(( (dr_site - dr_plain) / calls )) loads), flag check +$((d_flag / calls)) instr (+$(( (dr_flag - dr_plain) / calls )) loads)"
[ -n "$report" ] && exit 0
fail=0
echo "against one NOP in the site's place: $(( (ir_site - ir_ctrl) / calls )) instr, $(( (dr_site - dr_ctrl) / calls )) loads per call"
[ "$ir_site" -eq "$ir_ctrl" ] || { echo "FAIL: a disabled site costs $((ir_site - ir_ctrl)) instructions over $calls calls more than one NOP; want 0"; fail=1; }
[ "$dr_site" -eq "$dr_ctrl" ] || { echo "FAIL: the disabled site reads data ($dr_site vs $dr_ctrl reads)"; fail=1; }
[ "$dr_flag" -gt "$dr_ctrl" ] || { echo "FAIL: the flag check was expected to load the flag (sanity)"; fail=1; }
[ $fail -eq 0 ] && echo "PASS"
exit $fail
