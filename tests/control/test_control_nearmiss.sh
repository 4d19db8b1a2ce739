#!/bin/sh
# test_control_nearmiss.sh - the control socket's request parser with
# near-miss requests, not only garbage: a prefix or a suffix of a valid
# word, the wrong case, blanks around or doubled between words, a valid
# word in the wrong place, escapes, an empty line, the length limit. Each
# request gets its exact reply; a refused one changes nothing (the keys'
# states and counts and the static call's target are compared with a
# `list` before and after); an accepted one has exactly its effect.
#   test_control_nearmiss.sh <control_target> <tmp dir>
set -u
target=$1 tmp=$2
rm -rf "$tmp"
mkdir -p "$tmp"
export XDG_RUNTIME_DIR="$tmp/run"
mkdir -p "$XDG_RUNTIME_DIR"
chmod 0700 "$XDG_RUNTIME_DIR"
. "$(dirname "$0")/ctl_start.sh"
ctl_start "$tmp" "$target" api
PYTHONPATH="$(dirname "$0")" python3 - "$XDG_RUNTIME_DIR/switchyard/$pid.sock" <<'PY'
import json, os, socket, sys
from ctl_raw import at, ask
path = sys.argv[1]
name = at(path)
fails = []
def conn():
    import ctl_raw
    return ctl_raw.conn(name, 60)
s = conn()
def state():
    d = json.loads(ask(s, b"list\n"))
    return ({k["name"]: (k["enabled"], k["count"]) for k in d["keys"]},
            {c["name"]: c["target"] for c in d["calls"]})
REQ = {"error": "unknown request (list, set GLOB on|off|inc|dec, "
                "call GLOB TARGET)"}
ACT = {"error": "unknown action (on, off, inc, dec)"}
def nokey(g): return {"error": "no key matches " + g}
def nocall(g): return {"error": "no static call matches " + g}
base = state()
assert base == ({"net_rx": (False, 0), "net_tx": (False, 0),
                 "disk_io": (True, 1)}, {"codec": "codec_plain"}), base
# refused: (request line, its exact reply); nothing may change
refused = [
    (b"", REQ), (b" ", REQ), (b"\r", REQ),
    (b"lis", REQ), (b"listx", REQ), (b"list ", REQ), (b" list", REQ),
    (b"LIST", REQ), (b"List", REQ), (b"list\r\r", REQ), (b"list\tx", REQ),
    (b"list list", REQ), (b"li\x00st", REQ), (b"list\x00", REQ),
    (b"set", REQ), (b"set ", REQ), (b"se net_rx on", REQ),
    (b"sets net_rx on", REQ), (b"SET net_rx on", REQ),
    (b"Set net_rx on", REQ), (b"set\tnet_rx on", REQ),
    (b"set  net_rx on", REQ), (b"set net_rx  on", REQ),
    (b" set net_rx on", REQ), (b"set net_rx on ", REQ),
    (b"set net_rx", REQ), (b"set net_rx ", REQ), (b"set net_rx on off", REQ),
    (b"set net_rx on on", REQ), (b"set net_rx\ton", REQ),
    (b"set on net_rx", ACT), (b"set net_rx of", ACT),
    (b"set net_rx o", ACT), (b"set net_rx onn", ACT),
    (b"set net_rx offx", ACT), (b"set net_rx ON", ACT),
    (b"set net_rx Off", ACT), (b"set net_rx in", ACT),
    (b"set net_rx incr", ACT), (b"set net_rx dec2", ACT),
    (b"set net_rx on\\", ACT), (b"set net_rx sideways", ACT),
    (b"set net_rx " + b"o" * 900, ACT), (b"set net_rx \xc3\xb6n", ACT),
    (b"set net_rx list", ACT), (b"set net_rx codec_fast", ACT),
    (b"set net_r on", nokey("net_r")), (b"set net_rxx on", nokey("net_rxx")),
    (b"set NET_RX on", nokey("NET_RX")), (b"set net\\ rx on",
                                          nokey("net\\ rx")),
    (b"set n\xc3\xa9t_rx on", nokey("n\u00e9t_rx")),
    (b"set codec on", nokey("codec")), (b"set prog:net_rx on",
                                        nokey("prog:net_rx")),
    (b"call", REQ), (b"call ", REQ), (b"call codec", REQ),
    (b"call codec ", REQ), (b"call codec codec_fast ", REQ),
    (b"call  codec codec_fast", REQ), (b"call codec  codec_fast", REQ),
    (b"call codec codec_fast codec_plain", REQ), (b"CALL codec codec_fast",
                                                   REQ),
    (b"cal codec codec_fast", REQ), (b"call\tcodec codec_fast", REQ),
    (b"call code codec_fast", nocall("code")),
    (b"call codecs codec_fast", nocall("codecs")),
    (b"call Codec codec_fast", nocall("Codec")),
    (b"call net_rx codec_fast", nocall("net_rx")),
]
for line, want in refused:
    r = ask(s, line + b"\n")
    try:
        got = json.loads(r)
    except ValueError:
        got = r
    if got != want:
        fails.append("%r: got %r, want %r" % (line, got, want))
    now = state()
    if now != base:
        fails.append("%r changed %r to %r" % (line, base, now))
        base = now
# a call to a target that is not registered: the call's result, its
# target kept (the near-misses of codec_fast)
for t in ("codec_fas", "codec_fastx", "Codec_fast", "codec_fast\\",
          "codec_secret"):
    r = ask(s, b"call codec " + t.encode() + b"\n")
    try:
        got = json.loads(r)["retargeted"]
    except (ValueError, KeyError):
        got = r
    # (a backslash that ends the line escapes nothing: it stays)
    want_t = t
    if (len(got) != 1 or got[0]["result"] != -2 or
            got[0]["target"] != "codec_plain" or
            "no registered target " + want_t not in got[0]["error"]):
        fails.append("call codec %r: %r" % (t, got))
    if state() != base:
        fails.append("call codec %r changed something" % t)
# accepted near the edge: CRLF, an escaped name, an escaped action, a
# bracket glob; each with exactly its effect
def changed(line, names):
    d = json.loads(ask(s, line + b"\n"))
    got = sorted((c["name"], c["enabled"], c["result"])
                 for c in d.get("changed", []))
    if got != names:
        fails.append("%r: got %r, want %r" % (line, d, names))
changed(b"set net_rx on\r", [("net_rx", True, 0)])
changed(b"set net\\_rx off", [("net_rx", False, 0)])
changed(b"set net_tx o\\n", [("net_tx", True, 0)])
changed(b"set net_[t]x off", [("net_tx", False, 0)])
changed(b"set net_?x inc", [("net_rx", True, 0), ("net_tx", True, 0)])
changed(b"set net_* dec", [("net_rx", False, 0), ("net_tx", False, 0)])
if state() != base:
    fails.append("after the accepted ones: %r, want %r" % (state(), base))
def retarget(line, want):
    r = ask(s, line + b"\n")
    try:
        got = [(c["name"], c["result"], c["target"])
               for c in json.loads(r)["retargeted"]]
    except (ValueError, KeyError):
        got = r
    if got != want:
        fails.append("%r: got %r, want %r" % (line, got, want))
retarget(b"call codec codec_f\\ast\r", [("codec", 0, "codec_fast")])
retarget(b"call c\\odec codec_plain", [("codec", 0, "codec_plain")])
retarget(b"call cod[e]c codec_plain", [("codec", 0, "codec_plain")])
# two requests in one write: two replies, in order
r = ask(s, b"set net_rx on\nset net_rx off\n")
while r.count(b"\n") < 2:
    r += s.recv(65536)
a, b = [json.loads(x) for x in r.splitlines()]
if a["changed"][0]["enabled"] is not True or \
        b["changed"][0]["enabled"] is not False:
    fails.append("two requests in one write: %r" % r)
# the length limit: a line of 1024 bytes (the newline aside) is served,
# one of 1025 refused ("line too long") and its connection closed
g = b"n" * (1024 - len(b"set ") - len(b" on"))
got = json.loads(ask(s, b"set " + g + b" on\n"))
if got != nokey(g.decode()):
    fails.append("a 1024-byte line: %r" % got)
t = conn()
r = ask(t, b"set " + g + b"x on\n")
if r != b'{"error": "line too long"}\n':
    fails.append("a 1025-byte line: %r" % r)
try:
    if t.recv(100) != b"":
        fails.append("a 1025-byte line: the connection stays open")
except ConnectionResetError:
    pass        # closed with our newline unread: closed too
t.close()
if state() != base:
    fails.append("at the end: %r, want %r" % (state(), base))
s.close()
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
PY
st=$?
exec 3>&-	# the target stops
wait $pid || { echo "FAIL: target exit status"; st=1; }
[ $st = 0 ] && echo "test_control_nearmiss: all checks passed"
exit $st
