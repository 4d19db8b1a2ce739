#!/bin/sh
# check_compile_fail.sh SRCDIR - see tests/compile_fail.c.
set -u
src=$1
fail=0; n=0
for cc in gcc g++ clang clang++ clang-14 clang++-14; do
	command -v $cc >/dev/null 2>&1 || continue
	case "$cc" in *++*) lang="-x c++";; *) lang="-x c";; esac
	for nopatch in "" -DSWITCHYARD_NO_PATCHING; do
		for c in 0 1 2 3 4 5 6 7; do
			n=$((n + 1))
			if $cc $lang -Wall -Wextra -Werror $nopatch -DCASE=$c -I"$src/include" \
				-c "$src/tests/compile_fail.c" -o /dev/null >/dev/null 2>&1; then
				ok=1; else ok=0; fi
			if [ $c -eq 0 ] && [ $ok -eq 0 ]; then
				echo "FAIL: $cc $nopatch: the well-typed case does not compile"; fail=1
			elif [ $c -ne 0 ] && [ $ok -eq 1 ]; then
				echo "FAIL: $cc $nopatch: case $c compiled, it must not"; fail=1
			fi
		done
	done
done
echo "compile-fail: $n compilations checked"
[ $fail -eq 0 ]
