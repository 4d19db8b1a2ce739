#!/bin/sh
# test_insn.sh DECODER_TEST - feed objdump's view of the C library's text
# (and of the test itself) to test_insn, which checks the alternatives'
# length decoder against it.
set -e
t=$1
command -v objdump >/dev/null || { echo "SKIP: objdump (binutils) not found"; exit 77; }
libc=$(ldd "$t" | awk '/libc\.so/ { print $3 }')
[ -r "$libc" ] || { echo "SKIP: cannot find the C library of $t"; exit 77; }
{ objdump -d --insn-width=15 "$libc"; objdump -d --insn-width=15 "$t"; } |
	"$t" 100000
