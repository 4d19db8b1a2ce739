#!/bin/sh
# SPDX-License-Identifier: MIT
# check_split.sh PROG - run test_dso_split (split.c): the program must exit
# 0 (it saw the split it demonstrates, and did not crash on the way), and
# the registry must have reported the split at start-up, once. Both are
# checked: a pattern match on the output alone would pass a program that
# printed the message and then failed.
#
# check_split.sh PROG LIB - the same with LIB (libkey_symbolic.so) loaded
# from a directory 400 characters deep: the message names the library's
# path twice, and must still end with the fix (a message longer than the
# log's buffer was cut there).
set -u
prog=$1
if [ $# -gt 1 ]; then
	d=$(mktemp -d) || exit 1
	trap 'rm -rf "$d"' EXIT
	long=$d/$(printf '%0200d' 0 | tr 0 l)/$(printf '%0200d' 0 | tr 0 m)
	mkdir -p "$long" && cp "$2" "$long/" || exit 1
	LD_LIBRARY_PATH=$long
	export LD_LIBRARY_PATH
	echo "(${2##*/} from a directory ${#long} characters deep)"
fi
# SY_TEST_EMULATOR: the emulator of a cross build (CMakeLists.txt)
out=$(${SY_TEST_EMULATOR:-} "$prog" 2>&1)
rc=$?
echo "$out"
fail=0
[ $rc -eq 0 ] || { echo "FAIL: $prog exited with status $rc"; fail=1; }
n=$(echo "$out" | grep -cE "switchyard: static key 'shared_key': .*(-mno-direct-extern-access|-fPIE or -fPIC)")
[ "$n" -eq 1 ] || { echo "FAIL: the split of shared_key reported $n times, want once"; fail=1; }
# (where static calls are not patched, no registry of their sites sees
# their split: the program still shows it)
if ! echo "$out" | grep -q "^static calls: not patched here$"; then
	n=$(echo "$out" | grep -cE "switchyard: static call 'shared_sc': .*(-mno-direct-extern-access|-fPIE or -fPIC)")
	[ "$n" -eq 1 ] || { echo "FAIL: the split of static call shared_sc reported $n times, want once"; fail=1; }
fi
if [ $# -gt 1 ]; then
	n=$(echo "$out" | grep -cE "definition in $long/${2##*/}): .*(-mno-direct-extern-access|-fPIE or -fPIC).*define the key in the executable$")
	[ "$n" -eq 1 ] || { echo "FAIL: the message about shared_key is not whole"; fail=1; }
fi
n=$(echo "$out" | grep -c "(split seen)$")
[ "$n" -eq 2 ] ||
	{ echo "FAIL: the program did not show both splits"; fail=1; }
[ $fail -eq 0 ] && echo PASS
exit $fail
