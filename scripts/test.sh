#!/bin/sh
# test.sh [--allow-skip] - install what is missing, build everything with
# -Werror, run the default test suite (ctest prints its summary line), then
# the skip verdict.
#
# A skipped test (exit 77: a tool, a kernel feature or a permission is
# missing) is a test that did not run: the run fails, naming each skipped
# test with the reason it printed, unless skips are allowed explicitly:
#   ./scripts/test.sh --allow-skip      or      SWITCHYARD_ALLOW_SKIP=1
# (for machines known to lack something, e.g. ptrace forbidden in a
# container).
set -eu
allow_skip=${SWITCHYARD_ALLOW_SKIP:-0}
for arg in "$@"; do
	case "$arg" in
	--allow-skip) allow_skip=1;;
	-h|--help) sed -n '2,11s/^# \{0,1\}//p' "$0"; exit 0;;
	*) echo "test.sh: unknown argument '$arg' (try --help)" >&2; exit 2;;
	esac
done
cd "$(dirname "$0")/.."
./scripts/deps.sh
# Ninja when there is one, but never another generator than build/ was
# configured with (cmake refuses to switch), whoever configured it.
gen=""
[ ! -f build/CMakeCache.txt ] && command -v ninja >/dev/null 2>&1 &&
	gen="-G Ninja"
# the tests on, whatever an earlier configure cached (README's install
# block turns them off)
cmake -S . -B build $gen -DSWITCHYARD_WERROR=ON -DSWITCHYARD_BUILD_TESTS=ON \
	>/dev/null
cmake --build build
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

# The last line says it all, for a reader and for CI: PASS, or FAIL with
# the names of the failed tests (their output is above and in
# Testing/Temporary/LastTest.log).
verdict() {
	# the summary is ctest's own, after its last "% tests passed" line
	# (a test's output may hold a ctest run of its own: test_cross_aarch64)
	last=$(grep -n '% tests passed' "$out" | tail -n 1 | cut -d: -f1)
	failed=$(awk -v last="${last:-0}" 'NR <= last { next }
		/^The following tests FAILED:/ { on = 1; next }
		on && /^[ \t]+[0-9]+ - / { sub(/^[ \t]+[0-9]+ - /, "");
			sub(/ \(.*/, ""); printf "%s%s", sep, $0; sep = " " }
		' "$out")
	summary=$(grep -E '^[0-9]+% tests passed' "$out" | tail -n 1)
	if [ "$1" = 0 ]; then
		echo "test.sh: PASS: ${summary:-no summary}"
	elif [ -n "$failed" ]; then
		echo "test.sh: FAIL: $failed (their output: above, and" \
			"build/Testing/Temporary/LastTest.log)"
	else
		echo "test.sh: FAIL: ${summary:-ctest exit status $1}"
	fi
	exit "$1"
}

# ctest lists the tests that did not run after its summary line:
#	The following tests did not run:
#		 12 - test_under_gdb (Skipped)
# Their output, with the "SKIP: <why>" line the test printed, is in
# LastTest.log, in a block opened by "<i>/<n> Testing: <name>".
last=$(grep -n '% tests passed' "$out" | tail -n 1 | cut -d: -f1)
notrun=$(awk -v last="${last:-0}" 'NR <= last { next }
	/^The following tests did not run:/ { on = 1; next }
	on && /^[ \t]+[0-9]+ - / { sub(/^[ \t]+[0-9]+ - /, ""); print; next }
	{ on = 0 }' "$out")
[ -z "$notrun" ] && verdict "$rc"
echo
echo "$notrun" | while IFS= read -r line; do
	name=${line% (*}
	why=$(awk -v name="$name" '
		/^[0-9]+\/[0-9]+ Testing: / {
			t = $0; sub(/^[0-9]+\/[0-9]+ Testing: /, "", t)
			on = (t == name); next
		}
		on && /^<end of output>$/ { on = 0 }
		on && /SKIP: / { sub(/.*SKIP: /, ""); print; exit }
	' Testing/Temporary/LastTest.log)
	echo "SKIPPED: $line: ${why:-(no SKIP line in its output)}"
done
nskip=$(echo "$notrun" | wc -l)
if [ "$allow_skip" = 1 ]; then
	echo "$nskip test(s) did not run; allowed (--allow-skip / SWITCHYARD_ALLOW_SKIP=1)"
	verdict "$rc"
fi
echo "FAIL: $nskip test(s) did not run (see above); install what they need" \
	"(scripts/deps.sh) or rerun with --allow-skip to accept it"
[ "$rc" != 0 ] && verdict "$rc"
echo "test.sh: FAIL: $nskip test(s) skipped"
exit 1
