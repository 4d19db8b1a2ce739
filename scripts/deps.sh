#!/bin/sh
# deps.sh - install the Debian packages switchyard's build, tests and
# benchmarks need, only those missing. Uses sudo when not root.
#   gcc g++ make cmake ninja-build pkg-config   build; pkg-config consumer
#                                                (tests/build_checks/check_install.sh)
#   binutils                                     objdump, nm (check_install.sh)
#   valgrind                                     fast-path test (callgrind),
#                                                test_under_valgrind, benchmarks
#   gdb                                          test_under_gdb
#   clang                                        the gcc+clang build matrix and
#                                                compile-fail test (clang-14
#                                                alone is accepted)
#   libcapstone-dev                              the switchyard CLI's
#                                                disassembler (tools/)
#   python3                                      the CLI test's JSON check
#   groff-base                                   renders the man pages
#                                                (tests/build_checks/check_man.sh)
#   gnuplot-nox                                  the benchmark report's plots
#                                                (bench/suite/plot.py; the
#                                                showcase's quick suite,
#                                                tests/bench/test_bench_plots)
#   gcc-aarch64-linux-gnu g++-aarch64-linux-gnu  the AArch64 suite:
#   libc6-dev-arm64-cross qemu-user              cross-built, run under
#                                                qemu-aarch64 (x86-64
#                                                machines; test.sh runs it
#                                                after the native suite:
#                                                scripts/cross-aarch64.sh)
#   (rustup) aarch64-unknown-linux-gnu           the Rust crates' test in
#                                                the AArch64 suite
# Every one of them is needed by the default test suite: a missing tool makes
# a test skip (or fail), and scripts/test.sh fails on skips.
set -eu
need=""
have() { command -v "$1" >/dev/null 2>&1; }
have gcc || need="$need gcc"
have g++ || need="$need g++"
have make || need="$need make"
have cmake || need="$need cmake"
have ninja || need="$need ninja-build"
have pkg-config || need="$need pkg-config"
{ have objdump && have nm; } || need="$need binutils"
have valgrind || need="$need valgrind"
have gdb || need="$need gdb"
{ have clang && have clang++; } || { have clang-14 && have clang++-14; } ||
	need="$need clang"
{ have pkg-config && pkg-config --exists capstone; } ||
	need="$need libcapstone-dev"
have python3 || need="$need python3"
have groff || need="$need groff-base"
have gnuplot || need="$need gnuplot-nox"
if [ "$(uname -m)" = x86_64 ]; then
	have aarch64-linux-gnu-gcc || need="$need gcc-aarch64-linux-gnu"
	have aarch64-linux-gnu-g++ || need="$need g++-aarch64-linux-gnu"
	# the C library's headers and static archive for AArch64: only
	# recommended by the cross gcc (no recommends installed here)
	[ -f /usr/aarch64-linux-gnu/include/stdio.h ] &&
		[ -f /usr/aarch64-linux-gnu/lib/libc.a ] ||
		need="$need libc6-dev-arm64-cross"
	have qemu-aarch64 || need="$need qemu-user"
fi
# Rust's standard library for AArch64, for the Rust crates' test in the
# AArch64 suite (tests/rust/): through rustup, which brings Rust itself
# (Debian 12's Rust is older than the crates' 1.87); without rustup the
# test says SKIP and why. A failure here (no network) is left to the test.
if [ "$(uname -m)" = x86_64 ] && have rustup &&
	! rustup target list --installed 2>/dev/null |
		grep -qx aarch64-unknown-linux-gnu; then
	echo "installing: Rust's aarch64-unknown-linux-gnu target (rustup)"
	rustup target add aarch64-unknown-linux-gnu ||
		echo "deps.sh: rustup target add failed: the AArch64 suite's" \
			"Rust test will say SKIP" >&2
fi
[ -z "$need" ] && exit 0
echo "installing:$need"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get install -y --no-install-recommends $need >/dev/null 2>&1 || {
	$sudo apt-get update >/dev/null
	$sudo apt-get install -y --no-install-recommends $need >/dev/null
}
