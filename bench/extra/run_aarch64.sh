#!/bin/sh
# SPDX-License-Identifier: MIT
# run_aarch64.sh [CROSS_BUILD_DIR] - the AArch64 figures qemu can give
# (its timings are not hardware timings): code per site read from the
# binaries (a static call site against a direct call, a key's site), and
# what a change costs in writes and syncs (a64_counts.c under qemu-user,
# against the cross-built library; CROSS_BUILD_DIR defaults to
# build-aarch64, made by scripts/cross-aarch64.sh).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
b=${1:-$src/build-aarch64}
cc=aarch64-linux-gnu-gcc
for t in $cc aarch64-linux-gnu-objdump aarch64-linux-gnu-size qemu-aarch64; do
	command -v $t >/dev/null 2>&1 || {
		echo "SKIP: $t not installed (scripts/deps.sh installs it)"; exit 77; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "== AArch64: bytes per site, by section (bench/extra/sc_site_bytes.c:"
echo "   100 static calls minus 100 direct calls, -O2 -fPIC -shared, / 100)"
$cc -O2 -fPIC -shared -I"$src/include" "$here/sc_site_bytes.c" -o "$tmp/d.so"
$cc -O2 -fPIC -shared -DSC_STATIC -I"$src/include" "$here/sc_site_bytes.c" -o "$tmp/s.so"
aarch64-linux-gnu-size -A "$tmp/d.so" > "$tmp/d.txt"
aarch64-linux-gnu-size -A "$tmp/s.so" > "$tmp/s.txt"
awk 'NR == FNR { d[$1] = $2; next }
     $2 ~ /^[0-9]+$/ && $1 != "Total" && $2 != d[$1] {
	printf "   %-36s %6d -> %6d B  %+7.2f B per site\n", $1, d[$1], $2, ($2 - d[$1]) / 100 }' \
	"$tmp/d.txt" "$tmp/s.txt"
echo
echo "== AArch64: instructions in sc_site_fn (100 calls) and at one site"
for v in d s; do
	aarch64-linux-gnu-objdump -d --no-show-raw-insn "$tmp/$v.so" |
		awk '/<sc_site_fn>:/ { on = 1; next } on && /^$/ { exit }
		     on && /:\t/ { n++; if ($2 == "bl") bl++ }
		     END { printf "   %-12s %4d instructions, %3d bl\n", \
			   "'"$([ $v = d ] && echo direct || echo static)"'", n, bl }'
done
echo "   (a site as compiled: one bl, to its veneer; patched: one bl to the"
echo "    target, or a nop for NULL: see tests/static_call/test_static_call.c)"
echo
if [ -f "$b/libswitchyard.so" ]; then
	echo "== AArch64 under qemu-user: writes and syncs per change (a64_counts.c)"
	$cc -O2 -I"$src/include" "$here/a64_counts.c" -L"$b" -lswitchyard \
		-Wl,-rpath,"$b" -o "$tmp/counts"
	SWITCHYARD_PATCH_METHOD=mprotect qemu-aarch64 -L /usr/aarch64-linux-gnu \
		"$tmp/counts"
else
	echo "(no cross-built library in $b: run scripts/cross-aarch64.sh first"
	echo " for the update counts)"
fi
