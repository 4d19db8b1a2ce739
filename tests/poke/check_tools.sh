#!/bin/sh
# check_tools.sh gdb|valgrind TEST_STRESS TEST_STATIC_KEY TEST_STATIC_CALL -
# live patching under a debugger and under valgrind: the programs of those
# tests (built in their folders). Exit 77 (SKIP) when the tool is missing
# or not allowed.
set -u
tool=$1; stress=$2; skey=$3; scall=$4
# A cross build's programs run under an emulator (SY_TEST_EMULATOR,
# CMakeLists.txt): gdb and valgrind run this machine's programs only (qemu's
# gdb stub would need gdb-multiarch and is not what this checks).
[ -z "${SY_TEST_EMULATOR:-}" ] || {
	echo "SKIP: $tool cannot run another architecture's program (the cross build's run under an emulator)"
	exit 77; }
case "$tool" in
gdb)
	command -v gdb >/dev/null 2>&1 || { echo "SKIP: gdb not installed"; exit 77; }
	# gdb needs nothing from us: switchyard uses no signal and no trap.
	out=$(timeout 300 gdb -q -batch -ex run --args "$stress" 2 2>&1)
	echo "$out" | tail -3
	if echo "$out" | grep -q "ptrace: Operation not permitted"; then
		echo "SKIP: ptrace is not permitted here"; exit 77
	fi
	echo "$out" | grep -q "exited normally" || { echo "FAIL: not 'exited normally' under gdb"; exit 1; }
	echo "$out" | grep -q "stress: .* 0 failed" || { echo "FAIL: stress checks failed under gdb"; exit 1; }
	echo PASS;;
valgrind)
	command -v valgrind >/dev/null 2>&1 || { echo "SKIP: valgrind not installed"; exit 77; }
	# Plain valgrind: the library tells valgrind what it rewrote
	# (VALGRIND_DISCARD_TRANSLATIONS in src/poke.c), so --smc-check=all is
	# not needed (without the client request valgrind runs stale
	# translations: test_static_key then fails 13 checks). Both runs:
	# plain, as a user would, and with --smc-check=all.
	# --fair-sched=yes: the runner threads spin, valgrind's default lock
	# would starve the flippers. Valgrind's own code cache is W+X, hence
	# SY_STRESS_ALLOW_WX. valgrind runs one thread at a time: about ten
	# flips a second get through, hence the low minimum (4 s, 8 flips).
	out=$(mktemp)
	trap 'rm -f "$out"' EXIT
	for smc in "" "--smc-check=all"; do
		vg="valgrind -q $smc --fair-sched=yes --error-exitcode=9"
		echo "== valgrind ${smc:-(plain)}"
		timeout 600 $vg "$skey" >"$out" 2>&1
		rc=$?; grep -E "CHECK failed" "$out"; tail -1 "$out"
		[ $rc -eq 0 ] || { echo "FAIL: test_static_key under valgrind $smc (exit $rc)"; exit 1; }
		# static calls: rseq is off under valgrind, the sites are
		# parked on their detours (the unwind info must not upset
		# valgrind's CFI reader either: no warning allowed)
		timeout 600 $vg "$scall" >"$out" 2>&1
		rc=$?; grep -E "CHECK failed|Warning" "$out"; tail -1 "$out"
		[ $rc -eq 0 ] || { echo "FAIL: test_static_call under valgrind $smc (exit $rc)"; exit 1; }
		grep -q "Warning" "$out" && { echo "FAIL: valgrind warned"; exit 1; }
		SY_STRESS_ALLOW_WX=1 timeout 600 $vg "$stress" 4 8 >"$out" 2>&1
		rc=$?; grep -E "CHECK failed" "$out"; tail -2 "$out"
		[ $rc -eq 0 ] || { echo "FAIL: test_stress under valgrind $smc (exit $rc)"; exit 1; }
	done
	echo PASS;;
*) echo "usage: $0 gdb|valgrind TEST_STRESS TEST_STATIC_KEY TEST_STATIC_CALL"
	exit 2;;
esac
