#!/bin/sh
# cross-aarch64.sh [--allow-skip] [DIR] - the default test suite for
# AArch64: cross-built with Debian's cross compilers
# (cmake/aarch64-linux-gnu.cmake) into DIR (build-aarch64 beside the
# source), with -Werror, and run under qemu-user with ctest, the same tests
# as the native run (ctest -LE torture). The last line is the verdict:
#   cross-aarch64.sh: PASS: <passed>, <skipped>, <failed>, of <total>
#   cross-aarch64.sh: FAIL: <the failed tests, or what else went wrong>
#   cross-aarch64.sh: SKIP: not run: <a cross tool missing> (exit 77)
# scripts/test.sh runs this after the native suite on x86-64 machines.
#
# qemu-user does not see code written through /proc/self/mem (it keeps its
# translation of the old instruction), so the tests patch through the
# mprotect window there: the toolchain file's emulator sets
# SWITCHYARD_PATCH_METHOD=mprotect. The /proc/self/mem path is tested by
# the suite on Arm hardware (./scripts/test.sh there: README.md).
#
# A skip fails the run, as in test.sh, unless tests/expected_skips.txt
# lists the test for AArch64 under qemu (what qemu-user cannot run, and
# why), or --allow-skip (SWITCHYARD_ALLOW_SKIP=1) is given.
#   apt: gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user
#        (installed here when missing; scripts/deps.sh installs them too)
set -eu
allow_skip=${SWITCHYARD_ALLOW_SKIP:-0}
out=""
for arg in "$@"; do
	case "$arg" in
	--allow-skip) allow_skip=1;;
	-h|--help) sed -n '2,23s/^# \{0,1\}//p' "$0"; exit 0;;
	-*) echo "cross-aarch64.sh: unknown option '$arg' (try --help)" >&2
	    exit 2;;
	*) out=$arg;;
	esac
done
cd "$(dirname "$0")/.."
src=$(pwd)
. ./scripts/suite_verdict.sh
need=""
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || need="$need gcc-aarch64-linux-gnu"
command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 || need="$need g++-aarch64-linux-gnu"
command -v qemu-aarch64 >/dev/null 2>&1 || need="$need qemu-user"
if [ -n "$need" ]; then
	sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get install -y --no-install-recommends $need >/dev/null ||
		true
fi
for t in aarch64-linux-gnu-gcc aarch64-linux-gnu-g++ qemu-aarch64; do
	command -v $t >/dev/null 2>&1 || {
		echo "cross-aarch64.sh: SKIP: not run: $t is not installed" \
			"(scripts/deps.sh installs it)"
		exit 77; }
done
out=${out:-build-aarch64}
# A build directory configured otherwise (without the toolchain file, as
# an older version of this script did: its cached emulator has no
# SWITCHYARD_PATCH_METHOD=mprotect) is configured afresh: CMake reads a
# toolchain file only when a build directory is first configured.
# (A toolchain file given after the first configure is cached as
# UNINITIALIZED and never read; the toolchain file never caches an
# emulator.)
if [ -f "$out/CMakeCache.txt" ] && {
   ! grep -qxF "CMAKE_TOOLCHAIN_FILE:FILEPATH=$src/cmake/aarch64-linux-gnu.cmake" \
	"$out/CMakeCache.txt" ||
   grep -q "^CMAKE_CROSSCOMPILING_EMULATOR:" "$out/CMakeCache.txt"; }; then
	echo "cross-aarch64.sh: $out was configured without" \
		"cmake/aarch64-linux-gnu.cmake: configuring it afresh"
	rm -rf "$out/CMakeCache.txt" "$out/CMakeFiles"
fi
# Ninja when there is one, but never another generator than DIR was
# configured with.
gen=""
[ ! -f "$out/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1 &&
	gen="-G Ninja"
mkdir -p "$out"
# shellcheck disable=SC2086 # $gen is empty or two words
if ! cmake -S . -B "$out" $gen \
	-DCMAKE_TOOLCHAIN_FILE="$src/cmake/aarch64-linux-gnu.cmake" \
	-DSWITCHYARD_WERROR=ON -DSWITCHYARD_BUILD_TESTS=ON \
	>"$out/configure.log" 2>&1
then
	cat "$out/configure.log"
	echo "cross-aarch64.sh: FAIL: cmake could not configure $out"
	exit 1
fi
if ! cmake --build "$out"; then
	echo "cross-aarch64.sh: FAIL: the AArch64 build (in $out)"
	exit 1
fi
cd "$out"
log=Testing/Temporary/cross-aarch64.sh.out
mkdir -p Testing/Temporary
rm -f "$log" "$log.rc"
{
	rc=0
	ctest --output-on-failure -j2 --timeout 900 -LE torture 2>&1 || rc=$?
	echo $rc >"$log.rc"
} | tee "$log"
rc=$(cat "$log.rc")
if sy_suite_verdict "$log" "$PWD/Testing/Temporary/LastTest.log" "$rc" \
	"$allow_skip" "aarch64 aarch64-qemu" "$src/tests/expected_skips.txt"
then
	echo "cross-aarch64.sh: $sy_verdict"
	exit 0
fi
echo "cross-aarch64.sh: $sy_verdict"
exit 1
