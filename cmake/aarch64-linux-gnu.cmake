# SPDX-License-Identifier: MIT
# aarch64-linux-gnu.cmake - cross build for AArch64 Linux with Debian's
# cross compilers (gcc-aarch64-linux-gnu, g++-aarch64-linux-gnu), tests run
# under qemu-user (qemu-aarch64):
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
#   cmake --build build-aarch64 && (cd build-aarch64 && ctest -LE torture)
# scripts/cross-aarch64.sh does this.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Debian's AArch64 C library and headers (libc6-dev-arm64-cross); programs
# (python3, sh, qemu) are the build machine's.
set(SY_AARCH64_SYSROOT /usr/aarch64-linux-gnu CACHE PATH
  "the AArch64 C library's root (qemu-aarch64 -L)")
set(CMAKE_FIND_ROOT_PATH ${SY_AARCH64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest runs every test program through this. The environment variable
# belongs with the emulator, not with one script that calls ctest: it is
# qemu-user that cannot run the library's default write path (code written
# through /proc/self/mem is not seen: qemu keeps its translation of the old
# instruction; a store through a writable mapping is seen at once), so
# whoever runs this build's tests under qemu, by any command, needs the
# mprotect window. On Arm hardware, build without this file's emulator
# (a native build) and the default path is tested.
find_program(SY_QEMU_AARCH64 qemu-aarch64)
if(SY_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR env SWITCHYARD_PATCH_METHOD=mprotect
    ${SY_QEMU_AARCH64} -L ${SY_AARCH64_SYSROOT})
endif()
