#!/bin/sh
# check_compile_fail.sh SRCDIR - see compile_fail.c. Every case must
# fail for its own reason: the error line must carry the diagnostic that
# case is about (a header broken for every use would fail every case, but
# with the wrong diagnostic). The cases of a key address that is not a
# link-time constant must also put the rule and its fix in words before the
# user: the check macro's name in the notes, the fix in the quoted line.
set -u
src=$1
fail=0; n=0
# gcc and clang word their diagnostics in ASCII quotes under the C locale.
LC_ALL=C
export LC_ALL

# The diagnostic each case must produce (extended regex, on an "error:" line;
# gcc | clang, C | C++).
expect() {
	case $1 in
	1|2) echo 'static_branch_\*\(\) takes a struct static_key_true \* or struct static_key_false \*';;
	3|7) echo 'static_key_true\(\)/static_key_false\(\) take a struct static_key \*';;
	4) echo "selector of type 'int \*' is not compatible|controlling expression type 'int \*' not compatible|no matching function for call to '?sy__to_key";;
	5) echo "'(struct )?static_key' has no member named 'key'|no member named 'key' in '(struct )?static_key'";;
	6) echo "argument 1 of 'static_key_enable' from incompatible pointer type|incompatible pointer types passing 'struct static_key_true \*' to parameter of type 'struct static_key \*'|cannot convert 'static_key_true\*' to 'static_key\*'|no matching function for call to 'static_key_enable'";;
	12|16) echo "incompatible pointer type|incompatible function pointer types|invalid conversion from|cannot initialize a variable of type";;
	13) echo "incompatible type for argument|passing 'void \\*' to parameter of incompatible type";;
	14|15) echo "static_call\\(\\): in C";;
	8|9|10|11) echo "initializer element is not (a compile-time )?constant|is not (usable in )?a constant expression|constexpr variable 'switchyard_key_address_must_be_a_link_time_constant' must be initialized by a constant expression";;
	esac
}
# says CASE TEXT - the output of case CASE shows TEXT (a fixed string).
says() {
	grep -qF "$2" "$log" && return 0
	echo "FAIL: $cc $nopatch: case $1 does not say \"$2\""
	sed 's/^/    /' "$log" | head -10; fail=1
}

. "$(dirname "$0")/compilers.sh"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
for cc in $compilers; do
	case "$cc" in *++*) lang="-x c++";; *) lang="-x c";; esac
	# whether this compiler's target patches static calls (an
	# architecture whose sites are still the fallback does not)
	sc=1
	printf '#include <switchyard.h>\n#ifndef SY__ARCH_HAVE_STATIC_CALL\n#error\n#endif\n' |
		$cc $lang -I"$src/include" -fsyntax-only - >/dev/null 2>&1 || sc=0
	for nopatch in "" -DSWITCHYARD_NO_PATCHING; do
		for c in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
			# 13-15: signatures only a patched C site refuses
			if [ $c -ge 13 ] && [ $c -le 15 ] && { [ "$lang" != "-x c" ] || [ -n "$nopatch" ] || [ $sc = 0 ]; }; then
				continue
			fi
			n=$((n + 1))
			if $cc $lang -Wall -Wextra -Werror $nopatch -DCASE=$c -I"$src/include" \
				-c "$src/tests/build_checks/compile_fail.c" -o /dev/null >"$log" 2>&1; then
				ok=1; else ok=0; fi
			if [ $c -eq 0 ] && [ $ok -eq 0 ]; then
				echo "FAIL: $cc $nopatch: the well-typed case does not compile"
				sed 's/^/    /' "$log" | head -10; fail=1
			elif [ $c -ne 0 ] && [ $ok -eq 1 ]; then
				echo "FAIL: $cc $nopatch: case $c compiled, it must not"; fail=1
			elif [ $c -ne 0 ] && ! grep -qE "error: .*($(expect $c))" "$log"; then
				echo "FAIL: $cc $nopatch: case $c failed, but not with its diagnostic /$(expect $c)/"
				sed 's/^/    /' "$log" | head -10; fail=1
			elif [ $c -ge 8 ] && [ $c -le 11 ]; then
				says $c "macro 'SY__KEY_ADDRESS_MUST_BE_LINK_TIME_CONSTANT'"
				says $c "for a run-time key use static_key_enabled()"
			fi
		done
	done
done
echo "compile-fail: $n compilations checked ($compilers)"
[ $fail -eq 0 ]
