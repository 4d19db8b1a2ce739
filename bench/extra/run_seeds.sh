#!/bin/sh
# SPDX-License-Identifier: MIT
# run_seeds.sh E3_POPF E2_PVLOCK E5_UNLOCK - the seeds' experiments in
# user space (seeds 000, 002 and 004; doc/BENCHMARKS-HISTORY.md), with the
# suite's programs of E3, E2 and E5: runs each program (times, instructions
# single-stepped on the patched path, self-checks: a failed check stops
# here), then, when valgrind is installed, each program's loops once under
# callgrind (there rseq is off: the static call sites are parked on their
# detour, so static-call rows count the detour path), and the code size of
# each measured loop (nm -S), the seed 000's text-size check.
set -eu
for b in "$@"; do
	"$b"
	echo
done
if command -v valgrind >/dev/null 2>&1 &&
   command -v callgrind_annotate >/dev/null 2>&1; then
	echo "== callgrind: instructions per iteration (valgrind has no rseq:" \
	     "static call sites run their detour)"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	for b in "$@"; do
		n=$(valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" \
			"$b" callgrind 2>/dev/null |
			sed -n 's/^ran each loop \([0-9]*\) times.*/\1/p')
		echo "$(basename "$b") ($n iterations per loop):"
		callgrind_annotate --inclusive=yes "$tmp/cg" 2>/dev/null |
			awk -v n="$n" '$3 ~ /:v_/ {
				gsub(",", "", $1); sub(".*:", "", $3)
				printf "  %-16s %8.2f\n", $3, $1 / n }'
	done
	echo
else
	echo "== callgrind: skipped (valgrind not installed)"
fi
echo "== bytes of each measured loop (nm -S)"
for b in "$@"; do
	echo "$(basename "$b"):"
	nm -S "$b" | while read -r addr size type name; do
		case $name in
		v_*) printf '  %-16s %5d\n' "$name" "0x$size" ;;
		esac
	done
done
