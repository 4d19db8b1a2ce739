#!/bin/sh
# SPDX-License-Identifier: MIT
# check_build_clang.sh SRCDIR - the whole project (library, tool, tests,
# bench, examples) builds with clang and -DSWITCHYARD_WERROR=ON, in a
# Release build: the suite's own build is gcc's, and a warning only clang
# gives (test_sandbox_load.c's "sometimes uninitialized") went unseen.
set -u
src=$1
. "$(dirname "$0")/compilers.sh"
cc=""; cxx=""
for c in $compilers; do
	case "$c" in clang++*) cxx=$c;; clang*) cc=$c;; esac
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sy-clang.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
gen=""
command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
# shellcheck disable=SC2086 # $gen is empty or two words
if ! CC=$cc CXX=$cxx cmake -S "$src" -B "$tmp/b" $gen -DSWITCHYARD_WERROR=ON \
	-DCMAKE_BUILD_TYPE=Release >"$tmp/log" 2>&1; then
	echo "FAIL: cmake with $cc:"; tail -20 "$tmp/log"; exit 1
fi
if ! cmake --build "$tmp/b" -j 2 >"$tmp/log" 2>&1; then
	echo "FAIL: the build with $cc -Werror:"
	grep -E "error|warning" "$tmp/log" | head -20
	exit 1
fi
echo "check_build_clang: the project builds with $cc and $cxx, -Werror, Release"
