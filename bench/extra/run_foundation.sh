#!/bin/sh
# run_foundation.sh SRC LIBDIR BENCH_REGISTER SITES100K SITES100K_FLAG FASTPATH
# The figures of issue [1/8]: instructions per disabled site (callgrind),
# bytes per site and the share of 2-byte sites in bench/extra/realistic.c
# for every compiler and -O level, and registration of 100,000 sites.
set -eu
src=$1; lib=$2; breg=$3; a=$4; b=$5; fp=$6
export LD_LIBRARY_PATH=$lib
echo "== machine"
echo "$(uname -sr), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo
echo "== instructions per disabled site (callgrind, 1000 calls each)"
"$src/tests/static_key/check_fastpath.sh" "$fp" --report
echo
echo "== share of 2-byte sites in bench/extra/realistic.c"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for cc in gcc clang clang-14; do
	command -v $cc >/dev/null 2>&1 || continue
	[ $cc = clang-14 ] && command -v clang >/dev/null 2>&1 && continue
	for o in -O0 -O1 -O2 -O3 -Os; do
		$cc $o -I"$src/include" "$src/bench/extra/realistic.c" -o "$tmp/r" -L"$lib" -lswitchyard
		$cc $o -DSWITCHYARD_NO_PATCHING -I"$src/include" "$src/bench/extra/realistic.c" -o "$tmp/rf" -L"$lib" -lswitchyard
		t=$(objdump -h "$tmp/r" | awk '$2 == ".text" { print $3 }' | xargs -I{} printf "%d" 0x{})
		tf=$(objdump -h "$tmp/rf" | awk '$2 == ".text" { print $3 }' | xargs -I{} printf "%d" 0x{})
		printf '%-9s %-4s %s  .text %s B (flag checks: %s B)\n' $cc $o "$("$tmp/r" 2>/dev/null | sed 's/  (checksum.*//')" "$t" "$tf"
	done
done
echo
echo "== registration of a shared object with 100,000 sites"
"$breg" "$a" "$b"
