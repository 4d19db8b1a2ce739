#!/bin/sh
# fuzz.sh - build the ELF readers' libFuzzer targets (clang, ASan+UBSan:
# symbols, DWARF lines, `switchyard list`'s records)
# and run each for RUNS executions (default: a million), starting from the
# corpus in fuzz/corpus/<target>. New inputs go to build-fuzz/corpus-<target>;
# with --save they are merged (minimised) into fuzz/corpus/<target>.
#
#   scripts/fuzz.sh [--save] [RUNS]
#
# Needs clang and its fuzzer run-time (Debian: clang, libclang-rt-14-dev;
# installed through apt when missing, as scripts/deps.sh does).
set -eu
cd "$(dirname "$0")/.."
save=0
[ "${1:-}" = "--save" ] && { save=1; shift; }
runs=${1:-1000000}
cc=$(command -v clang-14 || command -v clang || true)
rt=$(ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a 2>/dev/null | head -n 1 || true)
if [ -z "$cc" ] || [ -z "$rt" ]; then
	echo "fuzz.sh: installing clang and libclang-rt-14-dev (apt)"
	sudo_=""
	[ "$(id -u)" = 0 ] || sudo_=sudo
	$sudo_ apt-get install -y -q clang libclang-rt-14-dev >/dev/null
	cc=$(command -v clang-14 || command -v clang)
fi
gen=""
command -v ninja >/dev/null 2>&1 && gen="-G Ninja"
CC=$cc cmake -S . -B build-fuzz $gen -DSWITCHYARD_FUZZ=ON \
	-DSWITCHYARD_BUILD_TESTS=OFF -DSWITCHYARD_BUILD_BENCH=OFF \
	-DSWITCHYARD_BUILD_EXAMPLES=OFF -DSWITCHYARD_BUILD_TOOLS=OFF \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz --target fuzz_elf_syms fuzz_dwarf_line fuzz_records >/dev/null
rc=0
for t in elf_syms dwarf_line records; do
	work=build-fuzz/corpus-$t
	mkdir -p $work
	echo "== fuzz_$t: $runs executions"
	./build-fuzz/fuzz/fuzz_$t -runs=$runs -max_len=16384 -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 $work fuzz/corpus/$t \
		2>build-fuzz/fuzz_$t.log || { rc=1; tail -40 build-fuzz/fuzz_$t.log; }
	grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+.*DONE" \
		build-fuzz/fuzz_$t.log || true
	if [ $save = 1 ] && [ $rc = 0 ]; then
		./build-fuzz/fuzz/fuzz_$t -merge=1 -max_len=16384 \
			fuzz/corpus/$t $work 2>>build-fuzz/fuzz_$t.log
	fi
done
[ $rc = 0 ] && echo "fuzz.sh: no crash, no leak, no sanitizer report" ||
	echo "fuzz.sh: FAILED (build-fuzz/fuzz_*.log; crash inputs: ./crash-*)"
exit $rc
