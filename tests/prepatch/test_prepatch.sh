#!/bin/sh
# SPDX-License-Identifier: MIT
# test_prepatch.sh TOOL PROG LIB PPDIR TMP [RUNNER] - `switchyard prepatch`.
#
# PROG and LIB as linked, PPDIR/pp_prog and PPDIR/libpp.so as the CMake
# helper prepatched them. Checks:
#  - the prepatched pair takes the same path at every site, before and
#    after its keys flip (pp_prog checks each against its key's state);
#  - start-up wrote no text page of the prepatched program or library
#    (smaps Private_Dirty 0), and wrote exactly the prepatched sites fewer
#    than the original pair; the original pair's text pages ARE written
#    (the measure can fail: the negative control);
#  - prepatching again writes nothing and changes no byte;
#  - the tool's report (text, --json) counts the sites;
#  - a file whose site holds foreign bytes is refused, unchanged; so is a
#    file that is not ELF.
# RUNNER: the words of the command that runs the programs (a cross build's
# emulator; TOOL is then a script that runs the tool through it), or -.
# Under qemu-user a guest's smaps shows no dirty page (the emulator's
# view, not the kernel's): the text-page checks are left out there, said.
set -u
tool=$1 prog=$2 lib=$3 pp=$4 tmp=$5 runner=${6:--}
fail=0
rm -rf "$tmp" && mkdir -p "$tmp"
no() { echo "FAIL: $*"; fail=1; }

run() {	# run DIR PROG > OUT: the program with the libraries of DIR
	# shellcheck disable=SC2086 # the runner's words, split on purpose
	if [ "$runner" = - ]; then
		LD_LIBRARY_PATH=$1 "$2" >"$3" 2>&1
	else
		LD_LIBRARY_PATH=$1 $runner "$2" >"$3" 2>&1
	fi || { no "$2 failed"; cat "$3"; }
}
run "$(dirname "$lib")" "$prog" "$tmp/orig.out"
run "$pp" "$pp/pp_prog" "$tmp/pp.out"
grep -q "pp_prog: [0-9]* checks, 0 failed" "$tmp/orig.out" || no "original run"
grep -q "pp_prog: [0-9]* checks, 0 failed" "$tmp/pp.out" || no "prepatched run"
grep '^paths' "$tmp/orig.out" >"$tmp/orig.paths"
grep '^paths' "$tmp/pp.out" >"$tmp/pp.paths"
[ "$(wc -l <"$tmp/pp.paths")" -eq 3 ] || no "paths not printed"
cmp -s "$tmp/orig.paths" "$tmp/pp.paths" || no "the paths differ"
cat "$tmp/orig.out" "$tmp/pp.out" | grep startup

field() { sed -n "s/^startup.* $2 \([0-9-]*\).*/\1/p" "$1"; }
if [ "$runner" != - ]; then
	echo "note: under the emulator a guest's smaps shows no dirty page: text pages not checked"
else
[ "$(field "$tmp/pp.out" exe_text_dirty_kb)" = 0 ] ||
	no "start-up wrote text pages of the prepatched program"
[ "$(field "$tmp/pp.out" lib_text_dirty_kb)" = 0 ] ||
	no "start-up wrote text pages of the prepatched library"
[ "$(field "$tmp/orig.out" exe_text_dirty_kb)" -gt 0 ] ||
	no "control: start-up wrote no text page of the original program"
[ "$(field "$tmp/orig.out" lib_text_dirty_kb)" -gt 0 ] ||
	no "control: start-up wrote no text page of the original library"
fi

# the sites prepatch wrote are those start-up no longer writes
"$tool" prepatch "$prog" -o "$tmp/p1" --json >"$tmp/p1.json" || no "prepatch prog"
"$tool" prepatch "$lib" -o "$tmp/l1.so" --json >"$tmp/l1.json" || no "prepatch lib"
w() { sed -n 's/.*"written": \([0-9]*\).*/\1/p' "$1"; }
want=$(( $(field "$tmp/orig.out" patched_sites) - $(field "$tmp/pp.out" patched_sites) ))
got=$(( $(w "$tmp/p1.json") + $(w "$tmp/l1.json") ))
[ "$got" -gt 0 ] && [ "$got" -eq "$want" ] ||
	no "prepatch wrote $got sites, start-up wrote $want fewer"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["sites"] == 10 and d["elsewhere"] == 0 and d["written"] + d["already"] == 10, d' \
	"$tmp/p1.json" || no "--json report"
cmp -s "$tmp/p1" "$pp/pp_prog" || no "the helper's output differs from the tool's"

# idempotent
cp "$tmp/p1" "$tmp/p2"
"$tool" prepatch "$tmp/p2" >"$tmp/p2.txt" || no "prepatch again"
grep -q ": 10 static key sites: 0 prepatched, 10 already" "$tmp/p2.txt" ||
	{ no "second prepatch"; cat "$tmp/p2.txt"; }
cmp -s "$tmp/p1" "$tmp/p2" || no "a second prepatch changed the file"
[ -x "$tmp/p2" ] || no "prepatch lost the file's mode"

# a site with foreign bytes: refused, file unchanged (0x90 as the first
# byte: on x86-64 a NOP where the jump's opcode was; on AArch64 a B
# elsewhere than the site's target)
addr=$("$tool" list "$prog" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(int(d["keys"][0]["sites"][0]["address"],16))')
off=$(python3 - "$prog" "$addr" <<'PY'
import struct, sys
f = open(sys.argv[1], 'rb').read(); a = int(sys.argv[2])
phoff, = struct.unpack_from('<Q', f, 32); phnum, = struct.unpack_from('<H', f, 56)
for i in range(phnum):
    t, fl, off, va, pa, fs = struct.unpack_from('<IIQQQQ', f, phoff + 56 * i)
    if t == 1 and va <= a < va + fs:
        print(off + a - va)
PY
)
cp "$prog" "$tmp/bad"
printf '\220' | dd of="$tmp/bad" bs=1 seek="$off" conv=notrunc 2>/dev/null
cp "$tmp/bad" "$tmp/bad.before"
"$tool" prepatch "$tmp/bad" >"$tmp/bad.out" 2>&1
[ $? = 1 ] || no "a foreign site: exit status"
grep -Eq "holds neither the (jump the compiler emitted nor its TEST|B the compiler emitted nor its NOP) form: nothing written" "$tmp/bad.out" ||
	{ no "a foreign site: message"; cat "$tmp/bad.out"; }
grep -Eq "site f[0-9]\+0x[0-9a-f]+ \(0x[0-9a-f]+\) of key k[ft][01]" "$tmp/bad.out" || no "the message names the function"
cmp -s "$tmp/bad" "$tmp/bad.before" || no "a refused file was changed"
ls "$tmp"/bad.* | grep -qv 'bad\.\(before\|out\)$' && no "a temporary file was left"

printf 'not an ELF file' >"$tmp/text"
"$tool" prepatch "$tmp/text" 2>"$tmp/text.err"
[ $? = 1 ] || no "not ELF: exit status"
"$tool" prepatch "$tmp/none" 2>/dev/null
[ $? = 1 ] || no "a missing file: exit status"
"$tool" prepatch 2>/dev/null
[ $? = 2 ] || no "usage: exit status"

[ $fail = 0 ] && echo PASS || echo FAIL
exit $fail
