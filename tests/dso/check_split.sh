#!/bin/sh
# SPDX-License-Identifier: MIT
# check_split.sh PROG - run test_dso_split (split.c): the program must exit
# 0 (it saw the split it demonstrates, and did not crash on the way), and
# the registry must have reported the split at start-up, once. Both are
# checked: a pattern match on the output alone would pass a program that
# printed the message and then failed.
set -u
prog=$1
out=$("$prog" 2>&1)
rc=$?
echo "$out"
fail=0
[ $rc -eq 0 ] || { echo "FAIL: $prog exited with status $rc"; fail=1; }
n=$(echo "$out" | grep -c "switchyard: static key 'shared_key': .*-mno-direct-extern-access")
[ "$n" -eq 1 ] || { echo "FAIL: the split of shared_key reported $n times, want once"; fail=1; }
n=$(echo "$out" | grep -c "switchyard: static call 'shared_sc': .*-mno-direct-extern-access")
[ "$n" -eq 1 ] || { echo "FAIL: the split of static call shared_sc reported $n times, want once"; fail=1; }
n=$(echo "$out" | grep -c "(split seen)$")
[ "$n" -eq 2 ] ||
	{ echo "FAIL: the program did not show both splits"; fail=1; }
[ $fail -eq 0 ] && echo PASS
exit $fail
