#!/bin/sh
# SPDX-License-Identifier: MIT
# check_races.sh PROG SUPP ANNOTATED - helgrind and DRD on PROG (races.c):
# with the suppression file the library ships, 0 errors; without it (the
# negative control: the races are there and the tools see them), more than
# 0. ANNOTATED is 0 when the library was built without valgrind's headers:
# the detours' reads are not annotated then, and the test is skipped.
# Exit 77 (SKIP) without valgrind.
set -u
prog=$1 supp=$2 annotated=$3
# A cross build's programs run under an emulator (SY_TEST_EMULATOR,
# CMakeLists.txt): valgrind runs this machine's programs only.
[ -z "${SY_TEST_EMULATOR:-}" ] || {
	echo "SKIP: valgrind cannot run another architecture's program (the cross build's run under an emulator)"; exit 77; }
command -v valgrind >/dev/null 2>&1 || { echo "SKIP: valgrind is not installed"; exit 77; }
[ "$annotated" = 1 ] || { echo "SKIP: the library was built without valgrind's headers (helgrind.h, drd.h): no annotations"; exit 77; }
[ -f "$supp" ] || { echo "FAIL: no suppression file at $supp"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
errors() {	# the number in "ERROR SUMMARY: N errors"
	sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$1" | tail -n 1
}
for tool in helgrind drd; do
	valgrind --tool=$tool --suppressions="$supp" "$prog" >"$tmp/out" 2>"$tmp/with"
	n=$(errors "$tmp/with")
	grep -q "races: done" "$tmp/out" || { echo "FAIL: $tool: the program did not finish"; cat "$tmp/with"; fail=1; continue; }
	if [ "$n" != 0 ]; then
		echo "FAIL: $tool with $supp: ${n:-no} errors, wanted 0"
		cat "$tmp/with"
		fail=1
	else
		echo "ok: $tool with the suppression file: 0 errors"
	fi
	valgrind --tool=$tool "$prog" >/dev/null 2>"$tmp/without"
	n=$(errors "$tmp/without")
	if [ -z "$n" ] || [ "$n" -eq 0 ]; then
		echo "FAIL: $tool without the suppression file: ${n:-no} errors; the control must see the races"
		fail=1
	else
		echo "ok: $tool without the suppression file: $n errors (the control)"
	fi
done
exit $fail
