#!/bin/sh
# SPDX-License-Identifier: MIT
# check_cross_aarch64.sh SRCDIR - the AArch64 build (-Werror) and its unit
# tests under qemu-user, through scripts/cross-aarch64.sh, in a temporary
# build directory. The fallback had stopped building (x86 constants in the
# generic poke engine, an arch function only x86 had) and nothing in the
# default suite said so. SKIP when the cross tools are missing
# (scripts/deps.sh installs them on x86-64).
set -u
src=$1
for t in aarch64-linux-gnu-gcc aarch64-linux-gnu-g++ qemu-aarch64; do
	command -v $t >/dev/null 2>&1 || {
		echo "SKIP: $t not installed (scripts/deps.sh installs it)"; exit 77; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sy-aarch64.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
if ! "$src/scripts/cross-aarch64.sh" "$tmp/b" >"$tmp/log" 2>&1; then
	echo "FAIL: the AArch64 build or its tests:"
	grep -E "error|FAIL|Failed|\*\*\*" "$tmp/log" | head -20
	exit 1
fi
grep "tests passed" "$tmp/log"
