#!/bin/sh
# check_configure.sh SRC - the project configures with each of its build
# switches off alone (and the bench without the tests, as an install
# without tests wants it): a target one part takes from another (the bench
# took the tests' fastpath) must not break a user's choice of parts.
# Generation only, no build: a few seconds each.
set -u
src=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sy-configure.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
for opts in "-DSWITCHYARD_BUILD_TESTS=OFF" \
	    "-DSWITCHYARD_BUILD_BENCH=OFF" \
	    "-DSWITCHYARD_BUILD_EXAMPLES=OFF" \
	    "-DSWITCHYARD_BUILD_TOOLS=OFF" \
	    "-DSWITCHYARD_BUILD_TESTS=OFF -DSWITCHYARD_BUILD_TOOLS=OFF" \
	    "-DSWITCHYARD_BUILD_TESTS=OFF -DSWITCHYARD_BUILD_EXAMPLES=OFF -DSWITCHYARD_BUILD_TOOLS=OFF"; do
	rm -rf "$tmp/b"
	# shellcheck disable=SC2086 # $opts is a list of options
	if ! cmake -S "$src" -B "$tmp/b" $opts >"$tmp/log" 2>&1; then
		echo "FAIL: cmake $opts:"
		grep -A4 'CMake Error' "$tmp/log" | head -20
		fail=1
	else
		echo "ok: cmake $opts"
	fi
done
# the install option without the bench says that nothing is installed (it
# was silently "not used")
rm -rf "$tmp/b"
cmake -S "$src" -B "$tmp/b" -DSWITCHYARD_BUILD_BENCH=OFF \
	-DSWITCHYARD_INSTALL_BENCH=ON >"$tmp/log" 2>&1 || { echo "FAIL: cmake"; fail=1; }
if grep -q "SWITCHYARD_INSTALL_BENCH=ON needs" "$tmp/log"; then
	echo "ok: INSTALL_BENCH without BUILD_BENCH is reported"
else
	echo "FAIL: INSTALL_BENCH=ON with BUILD_BENCH=OFF: no warning"; fail=1
fi
exit $fail
