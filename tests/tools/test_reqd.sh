#!/bin/sh
# SPDX-License-Identifier: MIT
# test_reqd.sh TOOL REQD TMP - the showcase's daemon (examples/reqd.c)
# driven by the tool as scripts/showcase.sh drives it: it serves, answers
# requests, reports each site it sees change with the site's form, and
# switches handlers on `call` while its workers run; it exits cleanly
# when its input closes.
set -u
tool=$1 reqd=$2 tmp=$3
fail=0
no() { echo "FAIL: $*"; fail=1; }
rm -rf "$tmp" && mkdir -p "$tmp/run" && chmod 700 "$tmp/run"
XDG_RUNTIME_DIR=$tmp/run
export XDG_RUNTIME_DIR
mkfifo "$tmp/in"
"$reqd" 2 <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
pid=$!
exec 3>"$tmp/in"
# Waits for what the daemon prints, never for a time: under load (ctest -j4
# on 2 cores) a fixed sleep gave it too little. 60 s bounds a hang.
wait_for() {
	i=0
	until grep -q "$1" "$tmp/out"; do
		i=$((i + 1))
		[ $i -gt 600 ] && return 1
		kill -0 $pid 2>/dev/null || { grep -q "$1" "$tmp/out"; return; }
		sleep 0.1
	done
}
wait_for '^ready'
grep -q "^ready $pid: 2 workers, checksum checksum_" "$tmp/out" || no "not ready: $(cat "$tmp/out" "$tmp/err")"
wait_for '^sample [1-9][0-9]* keys$'	# a sample with the keyed handler first
"$tool" list $pid >"$tmp/list" || no "list"
grep -q '^trace_requests  enabled=false .* -- log every request' "$tmp/list" || no "list: $(cat "$tmp/list")"
grep -q '^handler  target=handle_keyed  sites=1  targets=\["handle_flags", "handle_keyed"\]' "$tmp/list" || no "list: handler"
"$tool" set $pid trace_requests on >/dev/null || no "set on"
"$tool" call $pid handler handle_flags >/dev/null || no "call handle_flags"
wait_for '^change: trace_requests on'
wait_for '^sample [1-9][0-9]* flags$'
# the site's form: x86-64 JMP8/JMP32 <-> TEST8/TEST32, AArch64 B <-> NOP
grep -Eq '^change: trace_requests on -- site handle_keyed\+0x[0-9a-f]*: (e[9b] .*\(jmp|[0-9a-f]{2} [0-9a-f]{2} [0-9a-f]{2} 1[4-7] \(b:)' "$tmp/out" || no "no change line: $(grep change "$tmp/out")"
grep -q '^sample [1-9][0-9]* keys$' "$tmp/out" || no "no sample with the keyed handler"
"$tool" call $pid handler handle_keyed >/dev/null || no "call handle_keyed"
"$tool" set $pid trace_requests off >/dev/null || no "set off"
wait_for '^change: trace_requests off'
grep -q '^sample [1-9][0-9]* flags$' "$tmp/out" || no "no sample with the flags handler"
grep -Eq '^change: trace_requests off -- site handle_keyed\+0x[0-9a-f]*: (a[89] .*\(test|1f 20 03 d5 \(nop)' "$tmp/out" || no "no change back"
exec 3>&-
wait $pid || no "exit status: $(cat "$tmp/err")"
[ $fail = 0 ] && echo "test_reqd: all checks passed"
exit $fail
