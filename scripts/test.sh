#!/bin/sh
# test.sh - install what is missing, build everything with -Werror, run the
# default test suite (ctest prints the closing summary line).
set -eu
cd "$(dirname "$0")/.."
./scripts/deps.sh
gen=""
command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
cmake -S . -B build $gen -DSWITCHYARD_WERROR=ON >/dev/null
cmake --build build
cd build
# The torture runs (label "torture") have their own target: cmake --build
# build --target torture.
ctest --output-on-failure -j2 --timeout 900 -LE torture
