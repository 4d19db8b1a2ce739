#!/bin/sh
# cross-aarch64.sh - build switchyard for AArch64 with Debian's cross
# compiler and run the unit tests under qemu-user, static keys patched for
# real (NOP <-> B). qemu-user does not see code written through
# /proc/self/mem (it keeps its translation of the old instruction), so the
# tests patch through the mprotect window there
# (SWITCHYARD_PATCH_METHOD=mprotect in the emulator's environment); the
# /proc/self/mem path can only be proven on Arm hardware.
#   apt: gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user
set -eu
cd "$(dirname "$0")/.."
need=""
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || need="$need gcc-aarch64-linux-gnu"
command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 || need="$need g++-aarch64-linux-gnu"
command -v qemu-aarch64 >/dev/null 2>&1 || need="$need qemu-user"
if [ -n "$need" ]; then
	sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get install -y --no-install-recommends $need >/dev/null
fi
# the build directory: build-aarch64 beside the source, or $1 (the test
# suite's test_cross_aarch64 builds in a temporary one); -Werror as CI does
out=${1:-build-aarch64}
cmake -S . -B "$out" -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64 \
	-DCMAKE_C_COMPILER=aarch64-linux-gnu-gcc -DCMAKE_CXX_COMPILER=aarch64-linux-gnu-g++ \
	-DCMAKE_CROSSCOMPILING_EMULATOR="env;SWITCHYARD_PATCH_METHOD=mprotect;qemu-aarch64;-L;/usr/aarch64-linux-gnu" \
	-DSWITCHYARD_WERROR=ON -DSWITCHYARD_BUILD_BENCH=OFF >/dev/null
cmake --build "$out" -j 2 --target switchyard test_static_key test_static_key_cxx test_live test_memcpy_cxx
cd "$out"
ctest -R "^(test_static_key|test_static_key_cxx|test_live|test_memcpy_cxx)$" --output-on-failure
