#!/bin/sh
# test_cli_live.sh - `switchyard list PID` and `set` on a running program
# (live_sites.c) of this build's machine, through its control socket: each
# site listed with its function, file:line, bytes and disassembly in the
# form its key's state asks for (x86-64: TEST for the straight-line path,
# JMP for the jump; AArch64: NOP, or B), and the program taking the path
# the listing shows, before and after `set` flips both keys. In a cross
# build the program and the tool both run under the emulator (qemu-user
# serves a guest's socket like any other).
#   test_cli_live.sh <switchyard> <runner|-|!> <live_sites> <x86_64|aarch64>
#                    <source dir> <tmp dir>
# runner: as in test_cli_aarch64.sh.
set -u
cli=$1 runner=$2 prog=$3 arch=$4 src=$5 tmp=$6
fail=0
no() { echo "FAIL: $*"; fail=1; }
# shellcheck disable=SC2086 # the runner's words, split on purpose
run() { if [ "$runner" = - ]; then "$@"; else $runner "$@"; fi; }
sy() { run "$cli" "$@"; }
case $runner in !)
	echo "SKIP: a cross build without an emulator cannot run the tool"
	exit 77
esac
case $arch in x86_64|aarch64) ;; *)
	echo "SKIP: static keys are not patched on $arch"
	exit 77
esac
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1
# a short runtime directory: the checkout's path may be long (sun_path)
rt=$(mktemp -d /tmp/sy-live.XXXXXX) || exit 1
trap 'exec 3>&- 2>/dev/null; rm -rf "$rt"' EXIT
export XDG_RUNTIME_DIR="$rt"
unset SWITCHYARD_KEYS

# the program, stdin from a FIFO (fd 3); pid once its socket answers
# (under qemu a start takes seconds)
mkfifo "$tmp/in" || exit 1
SWITCHYARD_CONTROL=1 run "$prog" <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
exec 3>"$tmp/in"
pid=
for i in $(seq 600); do
	pid=$(sed -n 's/^ready //p' "$tmp/out")
	[ -n "$pid" ] && sy list "$pid" >/dev/null 2>&1 && break
	pid=
	sleep 0.1
done
[ -n "$pid" ] || { no "the program is not serving: $(cat "$tmp/err")"; exit 1; }
# the program's states after it read one more line
states() {
	n=$(wc -l <"$tmp/out")
	echo >&3
	for i in $(seq 600); do
		[ "$(wc -l <"$tmp/out")" -gt "$n" ] && break
		sleep 0.1
	done
	tail -n 1 "$tmp/out"
}

# Under the emulator too the library reads its site bytes (qemu-user lacks
# process_vm_readv(); sy_self_read() falls back to /proc/self/mem): a
# listing without them is a failure everywhere.
nobytes_ok=0

# check.py JSON ARCH SRC OFF ON NOBYTES_OK: each key's state and its
# site's form
cat >"$tmp/check.py" <<'PY'
import json, re, sys
path, arch, src, off, on, nobytes_ok = sys.argv[1:7]
d = json.load(open(path))
want = {"live_off": off == "1", "live_on": on == "1"}
marks = {}
for n, l in enumerate(open(f"{src}/live_sites.c"), 1):
    m = re.search(r"SITE_(\w+)", l)
    if m:
        marks[m.group(1)] = n
keys = {k["name"]: k for k in d["keys"]}
bad = []
for name, enabled in want.items():
    k = keys.get(name)
    if not k or k["enabled"] != enabled or len(k["site_list"]) != 1:
        bad.append(f"{name}: {k}")
        continue
    s = k["site_list"][0]
    likely = name == "live_on"
    jumps = enabled != likely
    b = [int(x, 16) for x in s["bytes"].split()]
    if not b and nobytes_ok == "1":
        form = s["length"] == (4 if arch == "aarch64" else s["length"])
        print(f"note: {name}: no bytes read from the process")
    elif arch == "aarch64":
        w = int.from_bytes(bytes(b), "little") if len(b) == 4 else None
        form = w is not None and s["length"] == 4 and (
            (w & 0xfc000000) == 0x14000000 if jumps else w == 0xd503201f)
    else:
        form = s["length"] in (2, 5) and len(b) == s["length"] and \
            b[0] in ((0xeb, 0xe9) if jumps else (0xa8, 0xa9))
    if not form or s["jumps"] != jumps or s["likely"] != likely or \
       s["function"] != ("live_one" if name == "live_off" else "live_two") or \
       not (s["file"] or "").endswith("live_sites.c") or s["line"] != marks[name]:
        bad.append(f"{name} (enabled {enabled}): site {s}")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
# form jump|straight: the disassembly the text listing shows for a site
nobytes=0
form() {
	[ $nobytes = 1 ] && { echo '\(not mapped\)'; return; }
	case $arch/$1 in
	aarch64/jump) echo 'b #0x[0-9a-f]+' ;;
	aarch64/straight) echo 'nop' ;;
	*/jump) echo 'jmp 0x[0-9a-f]+' ;;
	*/straight) echo 'test [a-z]+, (0x)?[0-9a-f]+' ;;
	esac
}
# look OFF ON: the listing and the program agree with the keys' states
look() {
	sy list "$pid" --json >"$tmp/list.json" 2>"$tmp/err" || no "list PID --json: $(cat "$tmp/err")"
	python3 "$tmp/check.py" "$tmp/list.json" "$arch" "$src" "$1" "$2" \
		"$nobytes_ok" >"$tmp/check.out" || fail=1
	grep -v '^note:' "$tmp/check.out"
	grep -q '^note:' "$tmp/check.out" && nobytes=1
	sy list "$pid" >"$tmp/list.txt" 2>"$tmp/err" || no "list PID: $(cat "$tmp/err")"
	[ "$1" = 1 ] && f=$(form jump) || f=$(form straight)
	grep -A1 '^live_off ' "$tmp/list.txt" |
		grep -Eq "^    0x[0-9a-f]+  live_one\+(0|0x[0-9a-f]+) +.*live_sites.c:[0-9]+ .* $f +unlikely$" ||
		no "list PID (text), live_off $1: $(grep -A1 '^live_off ' "$tmp/list.txt")"
	[ "$2" = 1 ] && f=$(form straight) || f=$(form jump)
	grep -A1 '^live_on ' "$tmp/list.txt" |
		grep -Eq "^    0x[0-9a-f]+  live_two\+(0|0x[0-9a-f]+) +.*live_sites.c:[0-9]+ .* $f +likely$" ||
		no "list PID (text), live_on $2: $(grep -A1 '^live_on ' "$tmp/list.txt")"
	got=$(states)
	[ "$got" = "live_off=$1 live_on=$2" ] || no "the program took other paths: '$got', keys live_off=$1 live_on=$2"
}

look 0 1
sy set "$pid" live_off on >/dev/null 2>"$tmp/err" || no "set live_off on: $(cat "$tmp/err")"
sy set "$pid" live_on off >/dev/null 2>"$tmp/err" || no "set live_on off: $(cat "$tmp/err")"
look 1 0
sy set "$pid" 'live_*' off >/dev/null 2>"$tmp/err" || no "set live_* off: $(cat "$tmp/err")"
sy set "$pid" live_on on >/dev/null 2>"$tmp/err" || no "set live_on on: $(cat "$tmp/err")"
look 0 1

exec 3>&-
wait
[ $nobytes = 1 ] && echo "note: the library read no site bytes from its own code under the emulator (qemu-user lacks process_vm_readv): forms checked from \"jumps\" and the program's paths"
[ $fail = 0 ] && echo "PASS: test_cli_live ($arch)"
exit $fail
