#!/bin/sh
# cross-aarch64.sh - build switchyard for AArch64 with Debian's cross
# compiler and run the unit tests under qemu-user. Until the AArch64 port
# ([8/8]) this checks the fallback: every static_branch_*() compiles to
# load + test + branch, with the same semantics.
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
cmake -S . -B build-aarch64 -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR=aarch64 \
	-DCMAKE_C_COMPILER=aarch64-linux-gnu-gcc -DCMAKE_CXX_COMPILER=aarch64-linux-gnu-g++ \
	-DCMAKE_CROSSCOMPILING_EMULATOR="qemu-aarch64;-L;/usr/aarch64-linux-gnu" \
	-DSWITCHYARD_BUILD_BENCH=OFF >/dev/null
cmake --build build-aarch64 --target test_static_key test_static_key_cxx test_live test_memcpy_cxx
cd build-aarch64
ctest -R "^(test_static_key|test_static_key_cxx|test_live|test_memcpy_cxx)$" --output-on-failure
