#!/bin/sh
# sanitize.sh [CTEST-REGEX] - build the library and the unit tests with
# ASan+UBSan, and again with TSan, and run the unit tests (label "unit";
# those matching CTEST-REGEX only, if given) under each, two at a time.
set -eu
cd "$(dirname "$0")/.."
case "${1:-}" in
-h|--help) sed -n '2,4p' "$0" | sed 's/^# //'; exit 0 ;;
-*) echo "sanitize.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
esac
only=${1:-}
./scripts/deps.sh
gen=""
command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
# TSan splits its options at spaces: its suppressions file goes by a path
# without any, whatever the checkout's
supp=$(mktemp /tmp/sy-tsan.XXXXXX)
trap 'rm -f "$supp"' EXIT
cp tests/lib/tsan.supp "$supp"
chmod 644 "$supp"	# some tests run a target as another user
rc=0
for san in address,undefined thread; do
	dir=build-san-$(echo $san | tr , -)
	log=$dir.log
	if ! { cmake -S . -B $dir $gen -DSWITCHYARD_SANITIZE=$san \
		-DSWITCHYARD_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
	       cmake --build $dir; } >"$log" 2>&1; then
		tail -n 40 "$log"
		echo "sanitize.sh: the $san build failed (all of it in $log)" >&2
		exit 1
	fi
	echo "== $san"
	skip=
	if [ $san = thread ]; then
		# TSan cannot run a program whose child of a multi-threaded
		# fork() starts threads and exits normally (the daemons of
		# test_control_fork): it dies, or with die_after_fork=0 the
		# child's exit handlers do not all run
		skip=test_control_fork
		echo "not under TSan: $skip (threads in the child of a" \
			"multi-threaded fork, which TSan does not support)"
	fi
	(cd $dir && UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		ASAN_OPTIONS=detect_leaks=1 \
		TSAN_OPTIONS="halt_on_error=1 die_after_fork=0 suppressions=$supp" \
		ctest -L unit -j2 --output-on-failure ${only:+-R "$only"} \
		${skip:+-E "$skip"}) || rc=1
done
echo "sanitize.sh: $( [ $rc = 0 ] && echo PASS || echo FAIL)"
exit $rc
