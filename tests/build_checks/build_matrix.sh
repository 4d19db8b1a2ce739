#!/bin/sh
# build_matrix.sh SRCDIR LIBDIR [quick] - build matrix/*.c with every
# compiler x optimisation x link mode and run each program: PIE, non-PIE,
# -static, a shared object, -O0..-O3/-Os, -flto, C and C++, gcc and clang,
# all with -Wall -Wextra -Werror. LIBDIR holds libswitchyard.so and .a.
# A cross build's: its compilers (SY_COMPILERS, compilers.sh), each program
# run under its emulator (SY_TEST_EMULATOR).
set -u
src=$1; lib=$2
m=$src/tests/build_checks/matrix
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0; runs=0
warn="-Wall -Wextra -Werror"
. "$(dirname "$0")/compilers.sh"
echo "compilers: $compilers"

try() {	# name, command...
	name=$1; shift
	runs=$((runs + 1))
	if ! "$@" >"$out/log" 2>&1; then
		echo "FAIL build: $name"; sed 's/^/    /' "$out/log" | head -20; fail=$((fail + 1)); return 1
	fi
}
run() {	# name, exe (through a cross build's emulator: SY_TEST_EMULATOR)
	if ! env LD_LIBRARY_PATH="$out:$lib" ${SY_TEST_EMULATOR:-} "$2" >"$out/log" 2>&1; then
		echo "FAIL run: $1"; sed 's/^/    /' "$out/log" | head -20; fail=$((fail + 1))
	fi
}

for cc in $compilers; do
	case "$cc" in *++*) lang="-x c++";; *) lang="-x c";; esac
	for opt in -O0 -O1 -O2 -O3 -Os; do
		for mode in pie nopie static so lto nopatch; do
			case "$mode" in
			pie) f="-fPIE"; l="-pie";;
			nopie) f="-fno-pie"; l="-no-pie";;
			static) f=""; l="-static";;
			so) f="-fPIE"; l="-pie";;
			lto) f="-flto -fPIE"; l="-flto -pie";;
			nopatch) f="-DSWITCHYARD_NO_PATCHING"; l="";;
			esac
			n="$cc $opt $mode"; exe="$out/prog"
			rm -f "$out"/*.o "$exe" "$out/libm.so"
			try "$n" $cc $lang $warn $opt $f -I"$src/include" -I"$src/tests/lib" -c "$m/prog.c" -o "$out/prog.o" || continue
			if [ "$mode" = so ]; then
				try "$n (lib)" $cc $lang $warn $opt -fPIC -I"$src/include" -I"$src/tests/lib" -c "$m/lib.c" -o "$out/lib.o" || continue
				try "$n (link so)" $cc -shared "$out/lib.o" -o "$out/libm.so" -L"$lib" -lswitchyard || continue
				try "$n (link)" $cc $l "$out/prog.o" -o "$exe" -L"$out" -lm -L"$lib" -lswitchyard -pthread || continue
			else
				try "$n (lib)" $cc $lang $warn $opt $f -I"$src/include" -I"$src/tests/lib" -c "$m/lib.c" -o "$out/lib.o" || continue
				if [ "$mode" = static ]; then
					try "$n (link)" $cc $l "$out/prog.o" "$out/lib.o" -o "$exe" "$lib/libswitchyard.a" -pthread || continue
				else
					try "$n (link)" $cc $opt $l "$out/prog.o" "$out/lib.o" -o "$exe" -L"$lib" -lswitchyard -pthread || continue
				fi
			fi
			run "$n" "$exe"
		done
	done
done
echo "build matrix: $runs builds, $fail failures"
[ $fail -eq 0 ]
