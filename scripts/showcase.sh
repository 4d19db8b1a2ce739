#!/bin/sh
# showcase.sh - the main job: install what is missing, build everything,
# show a static key flipped at run time with the bytes of its site, and a
# static call re-targeted while threads call through it.
set -eu
cd "$(dirname "$0")/.."
./scripts/deps.sh
gen=""
command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
cmake -S . -B build $gen >/dev/null
cmake --build build >/dev/null
echo "== examples/flip: one site, flipped twice"
./build/examples/flip
echo
echo "== what a disabled site costs (callgrind instruction counts, tests/fastpath.c)"
./tests/check_fastpath.sh ./build/tests/fastpath --report
if [ -x ./build/tests/static_call/torture_sc ]; then
	echo
	echo "== static calls: re-targeted while 4 threads call through the site"
	echo "   (tests/static_call/torture_sc.c: every call counted per target; the"
	echo "   unsafe run writes the call's rel32 in place and must be caught)"
	./build/tests/static_call/torture_sc 2
fi
