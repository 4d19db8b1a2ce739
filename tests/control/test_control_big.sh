#!/bin/sh
# test_control_big.sh - live control of a program the size of a real one
# (gen_big_target.sh: NKEYS keys, 1.5 sites a key, built with -g): `list
# PID` must list every key and site, with file:line, in text and JSON, and
# `set PID '*' on|off` must report every key changed and exit 0. The
# replies are megabytes, more than a socket's buffer: the process used to
# drop the client when one send() did not take the whole reply, and the
# tool said "the reply was cut short" (exit 1) although `set` had changed
# the keys. Also two requests in one connection, each with a reply larger
# than the buffer: both answered in full, in order.
#   test_control_big.sh <switchyard> <big_target> <nkeys> <tmp dir>
set -u
cli=$1 target=$2 nkeys=$3 tmp=$4
fail=0
no() { echo "FAIL: $*"; fail=1; }
rm -rf "$tmp"
mkdir -p "$tmp/run"
chmod 0700 "$tmp/run"
export XDG_RUNTIME_DIR="$tmp/run"
nsites=$((nkeys + nkeys / 2))

. "$(dirname "$0")/ctl_start.sh"
ctl_start "$tmp" env SWITCHYARD_CONTROL=1 "$target"

"$cli" list $pid >"$tmp/list" 2>"$tmp/list.err" ||
	no "list PID: exit $?: $(cat "$tmp/list.err")"
n=$(grep -c "^big_feature_flag_[0-9]*  enabled=false  count=0  sites=[12] " "$tmp/list")
[ "$n" = "$nkeys" ] || no "list PID: $n keys of $nkeys"
n=$(grep -c "^    0x[0-9a-f]*  f_[0-9]*+[0-9a-fx]* .*big_target\.c:[0-9][0-9]*  " "$tmp/list")
[ "$n" = "$nsites" ] || no "list PID: $n sites with file:line of $nsites"

"$cli" list $pid --json >"$tmp/list.json" 2>"$tmp/list.err" ||
	no "list PID --json: exit $?: $(cat "$tmp/list.err")"
python3 - "$tmp/list.json" $nkeys $nsites <<'PY' || no "list PID --json"
import json, sys
d = json.load(open(sys.argv[1]))
keys = d["keys"]
assert len(keys) == int(sys.argv[2]), len(keys)
sites = [s for k in keys for s in k["site_list"]]
assert len(sites) == int(sys.argv[3]) == sum(k["sites"] for k in keys), len(sites)
assert all(s["file"].endswith("big_target.c") and s["line"] > 0 for s in sites)
assert not any(k["enabled"] for k in keys)
PY

"$cli" set $pid '*' on >"$tmp/set" 2>"$tmp/set.err" ||
	no "set PID '*' on: exit $?: $(cat "$tmp/set.err")"
n=$(grep -c "^big_feature_flag_[0-9]*  enabled=true  count=1  result=0$" "$tmp/set")
[ "$n" = "$nkeys" ] || no "set '*' on: $n keys reported changed of $nkeys"
"$cli" list $pid --json | python3 -c '
import json,sys; k = json.load(sys.stdin)["keys"]
assert len(k) == '$nkeys' and all(x["enabled"] and x["count"] == 1 for x in k)' ||
	no "after set '*' on: not every key on"

"$cli" set $pid '*' off --json >"$tmp/set.json" 2>"$tmp/set.err" ||
	no "set PID '*' off --json: exit $?: $(cat "$tmp/set.err")"
python3 -c '
import json,sys; c = json.load(open(sys.argv[1]))["changed"]
assert len(c) == int(sys.argv[2]), len(c)
assert all(x["result"] == 0 and not x["enabled"] for x in c)' \
	"$tmp/set.json" $nkeys || no "set '*' off --json"

# two requests at once on one connection: two complete replies, in order
python3 - "$XDG_RUNTIME_DIR/switchyard/$pid.sock" $nkeys <<'PY' || no "two requests in one connection"
import json, os, socket, sys
# by its name in the directory: the full path may pass sun_path's 108
# bytes (a checkout at a long path)
os.chdir(os.path.dirname(sys.argv[1]))
s = socket.socket(socket.AF_UNIX)
s.settimeout(60)
s.connect(os.path.basename(sys.argv[1]))
s.sendall(b"list\nset * on\n")
buf = b""
while buf.count(b"\n") < 2:
    b = s.recv(1 << 16)
    assert b, "connection closed after %d bytes" % len(buf)
    buf += b
first, second = buf.split(b"\n")[:2]
assert len(json.loads(first)["keys"]) == int(sys.argv[2])
assert len(json.loads(second)["changed"]) == int(sys.argv[2])
PY

exec 3>&-	# the target exits
wait $pid || no "target exit status $?: $(cat "$tmp/err")"
[ -e "$XDG_RUNTIME_DIR/switchyard/$pid.sock" ] && no "socket left behind"
[ $fail = 0 ] && echo PASS
exit $fail
