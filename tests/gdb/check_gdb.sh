#!/bin/sh
# check_gdb.sh BINDIR [prepatched] - breakpoints on sites, as a user sets
# them (prepatched: BINDIR's files went through `switchyard prepatch`, so
# the breakpoints planted before `run` hide TEST where a key is off, and
# the program expects the changes that need the opcode refused): `break f`
# on every site function before `run` (the plugin's pending, planted at
# dlopen), and the same planted while the program runs; every hit stops
# gdb and continues (a real stop: gdb takes its breakpoints out and puts
# them back, re-reading the bytes under them); then `delete`. The program
# (gdb_sites.c) checks every path after every change and every hit; this
# script checks that gdb's breakpoints were all hit and the program passed.
# Exit 77 (SKIP) when gdb is missing or may not trace.
set -u
bin=$1
before=before; [ "${2:-}" = prepatched ] && before=before-prepatched
command -v gdb >/dev/null 2>&1 || { echo "SKIP: gdb not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
# `break f` where the site is the function's first instruction (gcc),
# `break *f+N` where the compiler put something before it (clang).
"$bin/gdb_sites" list "$bin/libgdb_plugin.so" >"$tmp/list" ||
	{ echo "FAIL: gdb_sites list"; exit 1; }
breaks() {
	while read -r f off; do
		case $f in gdb_sites:) continue;; esac
		if [ "$off" = 0 ]; then echo "break $f"; else echo "break *$f+$off"; fi
	done <"$tmp/list"
}
nfns=$(breaks | wc -l)
[ "$nfns" = 12 ] || { echo "FAIL: $nfns site functions listed"; exit 1; }

{
	echo "set pagination off"; echo "set confirm off"
	echo "set breakpoint pending on"
	breaks
	echo "commands 1-$nfns"; echo "silent"; echo "continue"; echo "end"
	echo "break marker_delete"
	echo "run"
	echo "info breakpoints"
	echo "delete"
	echo "continue"
} >"$tmp/before.gdb"
{
	echo "set pagination off"; echo "set confirm off"
	echo "set breakpoint pending on"
	echo "break marker_insert"; echo "break marker_delete"
	echo "run"
	breaks
	echo "commands 3-$((nfns + 2))"; echo "silent"; echo "continue"; echo "end"
	echo "continue"
	echo "info breakpoints"
	echo "delete"
	echo "continue"
} >"$tmp/during.gdb"

for mode in before during; do
	echo "== gdb, breakpoints planted $mode the run"
	timeout 300 gdb -q -batch -x "$tmp/$mode.gdb" \
		--args "$bin/gdb_sites" "$( [ $mode = before ] && echo $before || echo $mode)" \
		"$bin/libgdb_plugin.so" \
		>"$tmp/out" 2>&1
	if grep -q "ptrace: Operation not permitted" "$tmp/out"; then
		echo "SKIP: ptrace is not permitted here"; exit 77
	fi
	grep -E "CHECK failed|took the|log:|gdb_sites:" "$tmp/out"
	hit=$(grep -c "breakpoint already hit" "$tmp/out")
	# +1: marker_delete's (and marker_insert's) own line
	want=$((nfns + 1)); [ $mode = during ] && want=$((nfns + 2))
	if [ "$hit" -ne "$want" ]; then
		echo "FAIL: $hit of $want breakpoints were hit"; fail=1
	fi
	grep -q "exited normally" "$tmp/out" ||
		{ echo "FAIL: the program did not exit normally under gdb"; tail -20 "$tmp/out"; fail=1; }
	grep -q "gdb_sites: [0-9]* checks, 0 failed" "$tmp/out" || fail=1
done
echo "== no debugger (control)"
"$bin/gdb_sites" none "$bin/libgdb_plugin.so" || fail=1
[ $fail = 0 ] && echo PASS || echo FAIL
exit $fail
