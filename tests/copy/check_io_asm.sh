#!/bin/sh
# check_io_asm.sh SRCDIR - src/copy/io.c compiled as the library compiles it, with
# gcc and clang at -O2 and -O3, holds nothing that could touch the device in
# other than one plain access of the width (x86-64; see the comment at the
# top of src/copy/io.c for what was read by eye):
#  - no undefined symbol: no call to memcpy() or anything else outside;
#  - no string instruction (rep movs/stos, movs, stos, lods);
#  - no vector register (xmm/ymm/zmm): no access wider than 8 bytes;
#  - each of the eight accessor forms is there: loads of 1, 2, 4, 8 bytes
#    (movzbl/movzwl/movl/movq or mov to %al/%ax/%eax/%rax) and stores of
#    each width (mov from an 8/16/32/64-bit register) - so the object was
#    not compiled into something else entirely.
# Exit 77 (SKIP) on another architecture or if a compiler is missing.
set -u
src=$1
LC_ALL=C
export LC_ALL
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: x86-64 only"; exit 77; }
if ! msg=$(. "$(dirname "$0")/../build_checks/compilers.sh" && echo "$compilers"); then
	echo "SKIP: ${msg#FAIL: }"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bad=0
for cc in $msg; do
	case "$cc" in *++*) continue;; esac
	for opt in -O2 -O3; do
		o="$tmp/io.o"
		$cc -std=gnu11 $opt -fPIC -fvisibility=hidden -Wall -Wextra -Werror \
			-DSWITCHYARD_BUILDING_LIBRARY -D_GNU_SOURCE -I"$src/include" \
			-c "$src/src/copy/io.c" -o "$o" || { echo "FAIL: $cc $opt: does not compile"; bad=1; continue; }
		d="$tmp/io.s"
		objdump -d --no-show-raw-insn "$o" >"$d"
		what="$cc $opt"
		u=$(nm -u "$o")
		[ -z "$u" ] || { echo "FAIL: $what: undefined symbols: $u"; bad=1; }
		if grep -E '\s(rep[a-z]*|movs[bwlq]?|stos[bwlq]?|lods[bwlq]?)\s' "$d"; then
			echo "FAIL: $what: string instruction"; bad=1
		fi
		if grep -E '%[xyz]mm' "$d"; then
			echo "FAIL: $what: vector register"; bad=1
		fi
		for re in 'mov(zbl|b)? +[^,]*\),%(al|[a-z0-9]+d?)\b' \
			  'movzwl +[^,]*\),' 'mov(l)? +[^,]*\),%e[a-z]+$' \
			  'mov(q)? +[^,]*\),%r[a-z0-9]+$' \
			  'mov(b)? +%[a-d]l,[^,]*\(' 'mov(w)? +%[a-d]x,[^,]*\(' \
			  'mov(l)? +%e[a-z]+,[^,]*\(' 'mov(q)? +%r[a-z0-9]+,[^,]*\('; do
			grep -qE "$re" "$d" || { echo "FAIL: $what: no instruction matches /$re/"; bad=1; }
		done
	done
done
[ $bad -eq 0 ] || exit 1
echo "PASS: src/copy/io.c at -O2/-O3 with gcc and clang: no call out, no string or vector instruction, loads and stores of 1, 2, 4, 8 bytes"
