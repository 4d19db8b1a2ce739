#!/bin/sh
# check_gdb_sc.sh BINDIR - static call sites under gdb (gdb_sc.c), patched
# and parked on their detour (SWITCHYARD_STATIC_CALL=detour):
#   - `next` over the site line (-O0 build) stops on the next line, the
#     target having run once;
#   - a backtrace from the target (-O0 and -O2 builds) names outer and main;
# and the negative control: the same `next` over a site built without the
# detour's unwind information (SY__SC_TEST_NO_FDE) must fail, or the check
# proves nothing. Exit 77 (SKIP) when gdb is missing or may not trace.
set -u
bin=$1
command -v gdb >/dev/null 2>&1 || { echo "SKIP: gdb not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
printf '%s\n' "set pagination off" "set confirm off" "break outer" "run" \
	"next" "print hits" "continue" >"$tmp/next.gdb"
printf '%s\n' "set pagination off" "set confirm off" "break sc_target" \
	"run" "bt" "continue" >"$tmp/bt.gdb"

# run SCRIPT PROGRAM: gdb's output in $tmp/out
run() {
	timeout 120 gdb -q -batch -x "$tmp/$1.gdb" "$bin/$2" >"$tmp/out" 2>&1
	if grep -q "ptrace: Operation not permitted" "$tmp/out"; then
		echo "SKIP: ptrace is not permitted here"; exit 77
	fi
}
# next_ok: the `next` landed on the AFTER line, the target ran once, and
# the program exited normally
next_ok() {
	grep -q "AFTER \*/" "$tmp/out" && grep -q '^\$1 = 1$' "$tmp/out" &&
		grep -q "exited normally" "$tmp/out"
}

for mode in patched detour; do
	if [ $mode = detour ]; then
		SWITCHYARD_STATIC_CALL=detour; export SWITCHYARD_STATIC_CALL
	fi
	run next gdb_sc_O0
	if next_ok; then echo "ok: $mode, next over the site"
	else echo "FAIL: $mode, next over the site"; cat "$tmp/out"; fail=1; fi
	for b in gdb_sc_O0 gdb_sc_O2; do
		run bt $b
		if grep -q "^#[0-9].* outer (" "$tmp/out" &&
		   grep -q "^#[0-9].* main (" "$tmp/out" &&
		   grep -q "exited normally" "$tmp/out"; then
			echo "ok: $mode, backtrace from the target ($b)"
		else
			echo "FAIL: $mode, backtrace from the target ($b)"
			cat "$tmp/out"; fail=1
		fi
	done
done
unset SWITCHYARD_STATIC_CALL
run next gdb_sc_nofde
if next_ok; then
	echo "FAIL: negative control: next over a site without unwind information passed"
	fail=1
else
	echo "ok: negative control (no unwind information) fails: $(grep -m1 -E 'Cannot|\?\?' "$tmp/out")"
fi
[ $fail = 0 ] && echo PASS || echo FAIL
exit $fail
