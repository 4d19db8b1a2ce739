#!/bin/sh
# SPDX-License-Identifier: MIT
# test_control_static.sh CC SRCDIR LIBSWITCHYARD.A TOOL TMP [RUNNER] - a program
# linked -static against libswitchyard.a: the link gives no warning (glibc
# warns for any reference to dlopen, which the control socket's pin() no
# longer makes: src/control.c find_dlopen()), and the control socket
# works in it: set a key, retarget a call, both seen by the program.
# RUNNER: the words of the command that runs the program (a cross build's
# emulator; TOOL is then a script that runs the tool through it), or -.
set -u
cc=$1 src=$2 liba=$3 cli=$4 tmp=$5 runner=${6:--}
fail=0
no() { echo "FAIL: $*"; fail=1; }
rm -rf "$tmp" && mkdir -p "$tmp/run" && chmod 700 "$tmp/run" || exit 1
export XDG_RUNTIME_DIR="$tmp/run"
unset SWITCHYARD_CONTROL SWITCHYARD_KEYS

# a sanitized build's objects want their runtime, which does not link
# -static; a system without libc.a cannot link -static at all
nm "$liba" 2>/dev/null | grep -q "__asan_\|__tsan_\|__ubsan_" &&
	{ echo "SKIP: libswitchyard.a is sanitized: it does not link -static"; exit 77; }
printf 'int main(void) { return 0; }\n' >"$tmp/t.c"
"$cc" -static "$tmp/t.c" -o "$tmp/t" >/dev/null 2>&1 ||
	{ echo "SKIP: $cc cannot link -static (no libc.a?)"; exit 77; }

"$cc" -O1 -static -I"$src/include" "$src/tests/control/control_target.c" \
	"$liba" -pthread -Wl,--fatal-warnings -o "$tmp/ct" >"$tmp/link" 2>&1 ||
	no "the static link: $(cat "$tmp/link")"
grep -q dlopen "$tmp/link" && no "the static link warns: $(cat "$tmp/link")"
[ -x "$tmp/ct" ] || exit 1

rm -f "$tmp/in" && mkfifo "$tmp/in"
# shellcheck disable=SC2086 # the runner's words, split on purpose
if [ "$runner" = - ]; then
	"$tmp/ct" api <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
else
	$runner "$tmp/ct" api <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
fi
pid=$!
exec 3>"$tmp/in"
i=0
until grep -qs "^ready $pid" "$tmp/out"; do
	i=$((i + 1))
	[ $i -gt 600 ] && { no "not ready: $(cat "$tmp/err")"; break; }
	sleep 0.1
done
"$cli" set "$pid" net_rx on >"$tmp/o" 2>&1 || no "set net_rx on: $(cat "$tmp/o")"
"$cli" call "$pid" codec codec_fast >"$tmp/o" 2>&1 ||
	no "call codec codec_fast: $(cat "$tmp/o")"
"$cli" list "$pid" >"$tmp/o" 2>&1 || no "list PID: $(cat "$tmp/o")"
grep -q "^codec  target=codec_fast " "$tmp/o" ||
	no "list PID: codec: $(grep codec "$tmp/o")"
exec 3>&-
wait $pid || no "exit status: $(cat "$tmp/err")"
grep -q "^net_rx 1 net_tx 0 disk_io 1$" "$tmp/out" || no "states: $(cat "$tmp/out")"
grep -q "codec_secret 0$" "$tmp/out" || no "calls: $(cat "$tmp/out")"
[ $fail = 0 ] && echo "test_control_static: all checks passed"
exit $fail
