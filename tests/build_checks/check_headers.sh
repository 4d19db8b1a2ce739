#!/bin/sh
# check_headers.sh SRCDIR - the public headers compile without a diagnostic
# under -Wall -Wextra -Wpedantic -Werror: check_headers.c (every public
# macro and function) as C11, GNU C11 and C17, and as C++14, C++17 and
# C++20, with gcc/g++ and clang/clang++, at -O0 and -O2, in patching mode and
# in fallback mode (SWITCHYARD_NO_PATCHING). One compilation per combination;
# each must succeed and print nothing. The one documented exception
# (static_key.h, "What -Wpedantic cannot be silenced for") is checked to
# give exactly its documented diagnostic. Exit 77 (SKIP) if a compiler is
# missing.
set -u
src=$1
# gcc and clang word their diagnostics in ASCII quotes under the C locale.
LC_ALL=C
export LC_ALL

# compilers.sh exits when a compiler is missing: run it in a subshell to
# turn that into a SKIP with its message.
if ! msg=$(. "$(dirname "$0")/compilers.sh" && echo "$compilers"); then
	echo "SKIP: ${msg#FAIL: }"
	exit 77
fi
compilers=$msg

warn="-Wall -Wextra -Wpedantic -Werror"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
n=0; bad=0; diags=0
for cc in $compilers; do
	case "$cc" in
	*++*) lang="-x c++"; stds="c++14 c++17 c++20";;
	*) lang="-x c"; stds="c11 gnu11 c17";;
	esac
	# clang stops after 20 errors: count them all.
	case "$cc" in clang*) lang="$lang -ferror-limit=0";; esac
	for std in $stds; do
		for opt in -O0 -O2; do
			for mode in "" -DSWITCHYARD_NO_PATCHING; do
				n=$((n + 1))
				set -- $cc $lang -std=$std $warn $opt $mode \
					-I"$src/include" -c "$src/tests/build_checks/check_headers.c" -o /dev/null
				"$@" >"$log" 2>&1
				rc=$?
				# Every diagnostic line, -Werror'ed warnings included.
				d=$(grep -cE '(warning|error):' "$log")
				diags=$((diags + d))
				if [ $rc -ne 0 ] || [ "$d" -ne 0 ]; then
					bad=$((bad + 1))
					echo "FAIL: $cc -std=$std $opt ${mode:-(patching)}: $d diagnostics"
					grep -E '(warning|error):' "$log" | sort | uniq -c |
						sort -rn | head -8 | sed 's/^/    /'
				fi
			done
		done
	done
done

# The documented exception: DEFINE_STATIC_KEY_ARRAY_TRUE() in C, bare (not
# wrapped in a diagnostic pragma), gives exactly one diagnostic per use, the
# one the header names (check_headers.c has two uses); nothing else.
leftover="ISO C forbids specifying range of elements to initialize|use of GNU array range extension \\[-Werror,-Wgnu-designator\\]"
for cc in $compilers; do
	case "$cc" in *++*) continue;; esac
	for std in c11 gnu11 c17; do
		n=$((n + 1))
		$cc -x c -std=$std $warn -DHC_BARE_ARRAY_TRUE -I"$src/include" \
			-c "$src/tests/build_checks/check_headers.c" -o /dev/null >"$log" 2>&1
		all=$(grep -cE '(warning|error):' "$log")
		known=$(grep -E '(warning|error):' "$log" | grep -cE "$leftover")
		if [ "$all" -ne 2 ] || [ "$known" -ne 2 ]; then
			bad=$((bad + 1))
			echo "FAIL: $cc -std=$std, bare DEFINE_STATIC_KEY_ARRAY_TRUE: $all diagnostics, $known of them the documented one (want 2 and 2)"
			grep -E '(warning|error):' "$log" | head -8 | sed 's/^/    /'
		fi
	done
done
echo "headers: $n compilations, $bad failed, $diags diagnostics ($compilers)"
[ $bad -eq 0 ]
