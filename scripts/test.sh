#!/bin/sh
# test.sh [--allow-skip] - install what is missing, build everything with
# -Werror, run the default test suite (build/); on an x86-64 machine, then
# the same suite cross-built for AArch64 and run under qemu-user
# (scripts/cross-aarch64.sh, build-aarch64/). The last line gives both
# verdicts, each suite's tests counted as passed, skipped and failed:
#   test.sh: PASS: x86_64 PASS: ...; AArch64 under qemu PASS: ...
#   test.sh: FAIL: ... (the failed tests named, with where their output is)
#
# A skipped test (exit 77: a tool, a kernel feature or a permission is
# missing) is a test that did not run: the run fails, naming each skipped
# test with the reason it printed, unless tests/expected_skips.txt lists it
# for where it ran (what qemu-user cannot run, and why), or skips are
# allowed explicitly:
#   ./scripts/test.sh --allow-skip      or      SWITCHYARD_ALLOW_SKIP=1
# (for machines known to lack something, e.g. ptrace forbidden in a
# container).
set -eu
allow_skip=${SWITCHYARD_ALLOW_SKIP:-0}
for arg in "$@"; do
	case "$arg" in
	--allow-skip) allow_skip=1;;
	-h|--help) sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 0;;
	*) echo "test.sh: unknown argument '$arg' (try --help)" >&2; exit 2;;
	esac
done
cd "$(dirname "$0")/.."
src=$(pwd)
. ./scripts/suite_verdict.sh
./scripts/deps.sh
# Ninja when there is one, but never another generator than build/ was
# configured with (cmake refuses to switch), whoever configured it.
gen=""
[ ! -f build/CMakeCache.txt ] && command -v ninja >/dev/null 2>&1 &&
	gen="-G Ninja"
# the tests on, whatever an earlier configure cached (README's install
# block turns them off)
cmake -S . -B build $gen -DSWITCHYARD_WERROR=ON -DSWITCHYARD_BUILD_TESTS=ON \
	>/dev/null || { echo "test.sh: FAIL: cmake could not configure build/"; exit 1; }
cmake --build build || { echo "test.sh: FAIL: the build (build/)"; exit 1; }
cd build
out=Testing/Temporary/test.sh.out
mkdir -p Testing/Temporary
rm -f "$out" "$out.rc"
# The torture runs (label "torture") have their own target: cmake --build
# build --target torture.
{
	rc=0
	ctest --output-on-failure -j2 --timeout 900 -LE torture 2>&1 || rc=$?
	echo $rc >"$out.rc"
} | tee "$out"
rc=$(cat "$out.rc")
# This machine's suite: every skip it makes is a failure (or allowed), but
# for what tests/expected_skips.txt lists for AArch64 on Arm hardware.
arch=$(uname -m)
where=$arch
case "$arch" in aarch64|arm64) where=aarch64;; esac
status=0
sy_suite_verdict "$out" "$PWD/$(dirname "$out")/LastTest.log" "$rc" \
	"$allow_skip" "$where" "$src/tests/expected_skips.txt" || status=1
verdict="$arch $sy_verdict"
cd "$src"

# The AArch64 suite, on x86-64 machines (on Arm hardware the run above
# was it). Its own last line is its verdict.
if [ "$arch" = x86_64 ]; then
	echo
	echo "== the AArch64 suite: cross-built (build-aarch64/), run under" \
		"qemu-user (scripts/cross-aarch64.sh)"
	a64=$(mktemp "${TMPDIR:-/tmp}/sy-test.XXXXXX")
	skip_arg=""
	[ "$allow_skip" = 1 ] && skip_arg=--allow-skip
	{
		a64rc=0
		./scripts/cross-aarch64.sh $skip_arg build-aarch64 2>&1 ||
			a64rc=$?
		echo $a64rc >"$a64.rc"
	} | tee "$a64"
	a64rc=$(cat "$a64.rc")
	a64line=$(tail -n 1 "$a64" | sed 's/^cross-aarch64.sh: //')
	rm -f "$a64" "$a64.rc"
	if [ "$a64rc" = 77 ] && [ "$allow_skip" = 1 ]; then
		a64line="$a64line (allowed)"	# the cross tools are missing
	elif [ "$a64rc" != 0 ]; then
		status=1
	fi
	verdict="$verdict; AArch64 under qemu $a64line"
fi

# The last line says it all, for a reader and for CI.
echo
if [ "$status" = 0 ]; then
	echo "test.sh: PASS: $verdict"
else
	echo "test.sh: FAIL: $verdict"
fi
exit "$status"
