#!/bin/sh
# sanitize.sh - build the library and the unit tests with ASan+UBSan, and
# again with TSan, and run the unit tests (label "unit") under each.
set -eu
cd "$(dirname "$0")/.."
root=$PWD	# the tests run in the build directory: $PWD is that there
./scripts/deps.sh
gen=""
command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
rc=0
for san in address,undefined thread; do
	dir=build-san-$(echo $san | tr , -)
	cmake -S . -B $dir $gen -DSWITCHYARD_SANITIZE=$san -DSWITCHYARD_BUILD_BENCH=OFF \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $dir >/dev/null
	echo "== $san"
	(cd $dir && UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		ASAN_OPTIONS=detect_leaks=1 \
		TSAN_OPTIONS="halt_on_error=1 suppressions=$root/tests/tsan.supp" \
		ctest -L unit --output-on-failure) || rc=1
done
exit $rc
