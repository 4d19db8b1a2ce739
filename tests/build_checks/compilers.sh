# SPDX-License-Identifier: MIT
# compilers.sh - sourced by the build matrix and the compile-fail check:
# sets $compilers to gcc, g++, clang and clang++ as installed, or fails.
# Every compiler must be there (scripts/deps.sh installs them): a check that
# quietly shrinks to gcc would pass without testing clang at all. Debian's
# clang-14 package alone names them clang-14 and clang++-14.
#
# SY_COMPILERS (space-separated): those compilers instead, each of which
# must be there (a cross build's: its C and C++ cross compilers).
compilers=""
if [ -n "${SY_COMPILERS:-}" ]; then
	for cc in $SY_COMPILERS; do
		command -v "$cc" >/dev/null 2>&1 ||
			{ echo "FAIL: compiler not found: $cc (SY_COMPILERS)"; exit 1; }
	done
	compilers=$SY_COMPILERS
else
	for names in gcc g++ "clang clang-14" "clang++ clang++-14"; do
		found=""
		for name in $names; do
			command -v $name >/dev/null 2>&1 && { found=$name; break; }
		done
		if [ -z "$found" ]; then
			echo "FAIL: compiler not found: $names (install it: scripts/deps.sh)"
			exit 1
		fi
		compilers="${compilers:+$compilers }$found"
	done
fi
