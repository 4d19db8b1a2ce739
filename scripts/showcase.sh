#!/bin/sh
# showcase.sh - the main job: install what is missing, build everything,
# and show a static key flipped at run time with the bytes of its site.
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
