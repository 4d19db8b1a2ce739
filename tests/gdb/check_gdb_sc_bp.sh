#!/bin/sh
# check_gdb_sc_bp.sh BINDIR SRCDIR - a gdb breakpoint on a static call site
# keeps working (gdb_sc_bp.c). Where: the payload's call (`break *ADDR`
# from `disassemble`), the guard, the arm, the site's source line. When:
# before `run` (over the compiled site, before the library registers it)
# and while running (over the patched site). Each hit stops gdb and
# continues (a real stop: gdb takes its breakpoints out and puts them back,
# re-reading the bytes under them). The program updates the call to
# another function, to NULL, to RET0 and back while the breakpoint is
# there, checks every pass's target and result, and after `delete` checks
# that the site holds a whole form and is patched again by the next
# updates. This script checks the hits:
#   - on the call: one per pass whose target is a function (the program
#     reports how many): a site parked on its detour never hits it;
#   - on the guard, the arm, the line: one per pass;
# (call-race: another thread updates the call while this one runs the site
# and stops at the breakpoint: the hits are as the threads meet, not
# counted; every pass must call one target once, every update succeed)
# and that the program passed, with the -EBUSY message naming the call and
# the site when the breakpoint sits on a patched guard (the only update
# the debugger's byte forbids). Exit 77 (SKIP) when gdb is missing or may
# not trace.
set -u
bin=$1 src=$2
command -v gdb >/dev/null 2>&1 || { echo "SKIP: gdb not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
"$bin/gdb_sc_bp" none >"$tmp/none" 2>&1; rc=$?
[ $rc = 77 ] && { cat "$tmp/none"; exit 77; }
[ $rc = 0 ] || { echo "FAIL: the program fails without a debugger"; cat "$tmp/none"; exit 1; }
set -- $("$bin/gdb_sc_bp" list)
[ "${1:-}" = site ] || { echo "FAIL: gdb_sc_bp list"; exit 1; }
arm=$2 guard=$3 call=$4
line=$(grep -n '/\* SITE \*/' "$src/gdb_sc_bp.c" | cut -d: -f1)
[ -n "$line" ] || { echo "FAIL: no SITE line in gdb_sc_bp.c"; exit 1; }

bp() {
	case $1 in
	call|call-race) echo "break *site+$call";;
	guard) echo "break *site+$guard";;
	arm) echo "break *site+$arm";;
	line) echo "break gdb_sc_bp.c:$line";;
	esac
}
counting() {
	echo "commands $1"; echo "silent"; echo 'set $hits = $hits + 1'
	echo "continue"; echo "end"
}

for where in call guard arm line call-race; do
	for when in before during; do
		mode=$when
		[ $when = during ] && [ $where = guard ] && mode=busy
		if [ $where = call-race ]; then
			[ $when = before ] && continue
			mode=race
		fi
		{
			echo "set pagination off"; echo "set confirm off"
			echo 'set $hits = 0'
			if [ $when = before ]; then
				bp $where; counting 1
				echo "break marker_delete"
				echo "run"
			else
				echo "break marker_insert"; echo "break marker_delete"
				echo "run"
				bp $where; counting 3
				echo "continue"
			fi
			printf '%s\n' 'printf "SITE_HITS %d\n", $hits'
			echo "delete"
			echo "continue"
		} >"$tmp/gdb"
		timeout 300 gdb -q -batch -x "$tmp/gdb" --args "$bin/gdb_sc_bp" $mode \
			>"$tmp/out" 2>&1
		if grep -q "ptrace: Operation not permitted" "$tmp/out"; then
			echo "SKIP: ptrace is not permitted here"; exit 77
		fi
		hits=$(sed -n 's/^SITE_HITS \([0-9]*\)$/\1/p' "$tmp/out")
		case $where in
		call) n=2; [ $when = before ] && n=1
			want=$(sed -n 's/^CALL_PASSES //p' "$tmp/out" | cut -d' ' -f$n);;
		call-race) want=$hits;;	# as the threads meet: not counted
		*) want=15; [ $when = before ] && want=18;;
		esac
		ok=1
		grep -q "gdb_sc_bp: [0-9]* checks, 0 failed" "$tmp/out" || ok=0
		grep -q "exited normally" "$tmp/out" || ok=0
		[ -n "$hits" ] && [ -n "$want" ] && [ "$hits" = "$want" ] || ok=0
		if [ $mode = busy ]; then
			g=$(printf 'site+0x%x' "$guard")
			grep -q "static call 'gsc': cannot update: a debugger breakpoint sits on the guard of site $g .*delete the breakpoint" \
				"$tmp/out" || ok=0
		else	# no error, no warning
			grep -q "^switchyard:" "$tmp/out" && ok=0
		fi
		if [ $ok = 1 ]; then
			echo "ok: breakpoint on the $where, set $when the run: $hits hits"
		else
			echo "FAIL: breakpoint on the $where, set $when the run: ${hits:-no} hits of ${want:-?}"
			grep -E "CHECK failed|gdb_sc_bp|log:|SITE_HITS|CALL_PASSES|exited" "$tmp/out"
			fail=1
		fi
	done
done
[ $fail = 0 ] && echo PASS || echo FAIL
exit $fail
