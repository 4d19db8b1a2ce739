#!/bin/sh
# check_layers.sh SRCDIR - the library keeps the layers doc/DESIGN.md draws
# ("The layers"), for x86-64, the generic arch and AArch64
# (scripts/layers.py), and the check fails when they are broken: two
# negative controls, each a copy of the map with one file put where its
# calls break a rule.
set -u
src=$1
py=$(command -v python3) || { echo "SKIP: no python3"; exit 77; }
command -v gcc >/dev/null 2>&1 || { echo "SKIP: no gcc (-fcallgraph-info)"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

for arch in x86_64 generic; do
	if ! "$py" "$src/scripts/layers.py" --arch "$arch"; then
		echo "FAIL: the layers do not hold ($arch)"
		fail=1
	fi
done
# AArch64's files too, with its cross compiler (scripts/deps.sh installs it)
if command -v aarch64-linux-gnu-gcc >/dev/null 2>&1; then
	if ! "$py" "$src/scripts/layers.py" --arch aarch64 \
		--cc aarch64-linux-gnu-gcc; then
		echo "FAIL: the layers do not hold (aarch64)"
		fail=1
	fi
else
	echo "note: no aarch64-linux-gnu-gcc: AArch64's files not checked"
fi

# Negative control 1: log.c in the base layer, which calls nothing (log.c
# calls guard.c).
sed -e 's/| `guard.c` `lock.c` |/| `guard.c` `lock.c` `log.c` |/' \
    -e 's/^| log | `log.c` |/| log | |/' "$src/doc/DESIGN.md" >"$tmp/m1.md"
out=$("$py" "$src/scripts/layers.py" --map "$tmp/m1.md" 2>&1)
case "$out" in
*"log.c calls guard.c"*"FAIL"*) ;;
*) echo "FAIL: negative control 1 (log.c in the base layer) not caught:"
   echo "$out"; fail=1;;
esac

# Negative control 2: registry.c under the poke engine, so that
# static_key.c's and the registry's calls run up.
sed -e 's/`static_key.c` `registry.c` `static_call.c`/`static_key.c` `static_call.c`/' \
    -e 's/| `report.c` |/| `report.c` `registry.c` |/' \
    "$src/doc/DESIGN.md" >"$tmp/m2.md"
out=$("$py" "$src/scripts/layers.py" --map "$tmp/m2.md" 2>&1)
case "$out" in
*"registry.c (messages) calls up into poke.c"*"FAIL"*) ;;
*) echo "FAIL: negative control 2 (registry.c below the poke engine) not caught:"
   echo "$out"; fail=1;;
esac

[ $fail = 0 ] && echo "PASS: the layers hold; both broken maps are refused"
exit $fail
