#!/bin/sh
# test_cli.sh - `switchyard list` on a program and a library with known
# keys (cli_target.c, cli_lib.c: sites on the lines marked SITE_<key>_<n>),
# text and --json; `switchyard cpu --json`; exit codes and messages on bad
# input.
#   test_cli.sh <switchyard> <program> <library> <source dir> <tmp dir>
set -u
cli=$1 prog=$2 lib=$3 src=$4 tmp=$5
fail=0
no() { echo "FAIL: $*"; fail=1; }
mkdir -p "$tmp"

"$cli" list "$prog" --json >"$tmp/prog.json" 2>"$tmp/err" || no "list program: $(cat "$tmp/err")"
"$cli" list "$lib" --json >"$tmp/lib.json" 2>"$tmp/err" || no "list library: $(cat "$tmp/err")"
python3 - "$tmp/prog.json" "$tmp/lib.json" "$src" <<'PY' || fail=1
import json, re, sys
prog, lib, src = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
bad = []
def lines(f):
    out = {}
    for n, l in enumerate(open(f"{src}/{f}"), 1):
        m = re.search(r"SITE_(\w+)_(\d)", l)
        if m:
            out.setdefault(m.group(1), set()).add(n)
    return out
def check(d, f, want):
    keys = {k["name"]: k for k in d["keys"]}
    if set(keys) != set(want):
        bad.append(f"{f}: keys {sorted(keys)} != {sorted(want)}")
        return
    marks = lines(f)
    for name, (initial, defined, likely) in want.items():
        k = keys[name]
        if k["initial"] != initial or k["defined"] != defined:
            bad.append(f"{f}: {name}: initial {k['initial']} defined {k['defined']}")
        got = {s["line"] for s in k["sites"]}
        if got != marks.get(name, set()):
            bad.append(f"{f}: {name}: site lines {sorted(got)} != {sorted(marks.get(name, set()))}")
        for s in k["sites"]:
            if s["likely"] != likely or not s["disasm"].startswith("jmp") \
               or s["length"] not in (2, 5) or not s["function"] \
               or not s["file"].endswith(f) or len(s["bytes"].split()) != s["length"]:
                bad.append(f"{f}: {name}: site {s}")
check(prog, "cli_target.c", {"cli_off": ("off", True, False), "cli_on": ("on", True, True)})
def mark(f, tag):
    for n, l in enumerate(open(f"{src}/{f}"), 1):
        if tag in l:
            return n
    return -1
calls = prog["static_calls"]
if [(c["name"], c["initial_target"], c["callee_save"], c["line"]) for c in calls] != \
   [("cli_sc", "cli_impl", False, mark("cli_target.c", "CALL_cli_sc"))]:
    bad.append(f"static calls: {calls}")
alts = prog["alternatives"]
# static_cpu_has(): two records at one site (present, and !present)
if sorted(a["feature"] for a in alts) != ["!sse2", "sse2"] or \
   {a["line"] for a in alts} != {mark("cli_target.c", "ALT_sse2")} or \
   len({a["address"] for a in alts}) != 1:
    bad.append(f"alternatives: {alts}")
rcs = prog["runtime_consts"]
if [(c["name"], c["size"], c["line"]) for c in rcs] != \
   [("cli_limit", 4, mark("cli_target.c", "RC_cli_limit"))]:
    bad.append(f"run-time constants: {rcs}")
if lib["static_calls"] or lib["alternatives"] or lib["runtime_consts"]:
    bad.append("the library has no static call, alternative or run-time constant")
check(lib, "cli_lib.c", {"cli_lib_key": ("off", True, False), "cli_on": ("unknown", False, True)})
# descriptions (SWITCHYARD_KEY_DESCRIPTION), exact, and null without one
descs = {k["name"]: k["description"] for k in prog["keys"] + lib["keys"]}
want = {"cli_off": 'the "off" key {test} \\ done', "cli_on": None,
        "cli_lib_key": "the library's key"}
for name, d in want.items():
    if descs.get(name, 0) != d:
        bad.append(f"description of {name}: {descs[name]!r} != {d!r}")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

# text: the same facts, for a reader
"$cli" list "$prog" >"$tmp/prog.txt" || no "list (text)"
grep -q '^  -- the "off" key {test} \\ done$' "$tmp/prog.txt" || no "list (text): description"
grep -q "^key cli_off  initial off, 2 sites" "$tmp/prog.txt" || no "text: cli_off line: $(cat "$tmp/prog.txt")"
grep -q "^  cli_sc .* three+0x[0-9a-f]* .*cli_target.c:[0-9]* -> cli_impl" "$tmp/prog.txt" || no "text: static call line"
grep -q "if sse2:" "$tmp/prog.txt" || no "text: alternative line"
grep -q "^  cli_limit .* 4-byte immediate" "$tmp/prog.txt" || no "text: run-time constant line"
grep -q "^key cli_on  initial on, 1 site" "$tmp/prog.txt" || no "text: cli_on line"
grep -q "cli_target.c:[0-9]" "$tmp/prog.txt" || no "text: no file:line"
"$cli" list "$lib" | grep -q "^key cli_on (defined in another object)  initial unknown" || no "text: the library's import"

# cpu
"$cli" cpu --json | python3 -c 'import json,sys; d=json.load(sys.stdin); m=d["memcpy"]; assert d["vendor"] and isinstance(d["features"], list) and "rep_min" in m; assert m["loop_name"] in ("sse2","avx2","avx512","libc") and m["source_name"] in ("default","file","env") and "libc_min" in m, m' || no "cpu --json"
# the text names the loop and where the thresholds come from (not enum numbers)
SWITCHYARD_MEMCPY=short_max=48 "$cli" cpu >"$tmp/cpu.txt" 2>&1 || no "cpu"
grep -Eq "^memcpy: short moves up to (48 bytes|128 bytes \(short_max 48: the SSE2 flavour's\)), rep movsb (from [0-9]+ bytes|never), [a-z0-9]+ loop between; thresholds from SWITCHYARD_MEMCPY; " "$tmp/cpu.txt" ||
	no "cpu: $(tail -1 "$tmp/cpu.txt")"
# the C library's for every size: said as such
SWITCHYARD_MEMCPY=libc_min=0 "$cli" cpu >"$tmp/cpu.txt" 2>&1 || no "cpu libc"
grep -q "^memcpy: the C library's memcpy, every size (SWITCHYARD_MEMCPY says so)" "$tmp/cpu.txt" ||
	no "cpu libc: $(tail -1 "$tmp/cpu.txt")"

# calibrate: a quick calibration saved where XDG_CACHE_HOME says, read by
# the next program (cpu: thresholds from the calibration file), the same
# choice in the file and in the report; --json parses; bad arguments and
# no place for the file: nothing written, exit 2 / 1
cal=$tmp/xdg-cal
rm -rf "$cal"
XDG_CACHE_HOME=$cal "$cli" calibrate --quick --save >"$tmp/cal.txt" 2>"$tmp/cal.err" || no "calibrate --save: $(cat "$tmp/cal.err")"
calf=$(ls "$cal"/switchyard/memcpy-* 2>/dev/null | head -1)
[ -n "$calf" ] && grep -Eq "^libc_min=[0-9]+$" "$calf" || no "calibrate --save: no file with libc_min"
grep -q "^saved: $cal/switchyard/memcpy-" "$tmp/cal.txt" || no "calibrate: no 'saved:' line"
if grep -q "^libc_min=0$" "$calf" 2>/dev/null; then
	grep -q "^chosen: the C library's memcpy for every size" "$tmp/cal.txt" || no "calibrate: the report's choice is not the file's (libc)"
	XDG_CACHE_HOME=$cal "$cli" cpu | grep -q "^memcpy: the C library's memcpy, every size (the calibration file .* says so)" || no "cpu after calibrate (libc)"
else
	rm_=$(sed -n 's/^rep_min=//p' "$calf")
	[ "$rm_" = 4294967295 ] && rmw=never || rmw="from $rm_ bytes"
	grep -q "^chosen: short moves to [0-9]* bytes, rep movsb $rmw" "$tmp/cal.txt" || no "calibrate: the report's choice is not the file's"
	XDG_CACHE_HOME=$cal "$cli" cpu | grep -q "thresholds from the calibration file" || no "cpu after calibrate"
fi
XDG_CACHE_HOME=$cal "$cli" calibrate --quick --json | python3 -c 'import json,sys; d=json.load(sys.stdin); c=d["chosen"]; assert len(d["short_loop"]) == 4 and len(d["loop_rep"]) == 4 and d["saved"] is None and isinstance(c["libc_everywhere"], bool), d' || no "calibrate --json"
"$cli" calibrate --bogus >/dev/null 2>"$tmp/cal.err"; [ $? = 2 ] && grep -q "unknown argument '--bogus'" "$tmp/cal.err" || no "calibrate --bogus: not exit 2 with a message"
# the measurement kept when the file cannot be written (a directory at its
# path): the report with "saved": null and the error, exit 1
rm -f "$calf"; mkdir -p "$calf/x"
XDG_CACHE_HOME=$cal "$cli" calibrate --quick --save --json >"$tmp/cal.json" 2>"$tmp/cal.err"; st=$?
[ $st = 1 ] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["saved"] is None and d["error"] and len(d["loop_rep"]) == 4, d' "$tmp/cal.json" &&
	grep -q "measured, but .* could not be written" "$tmp/cal.err" || no "calibrate --save into a directory: not the report, the error and exit 1 (exit $st)"
# the chosen thresholds are real ones even where the C library's wins
# (SWITCHYARD_MEMCPY=libc_min=4294967295 reads them from the file)
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["chosen"]; assert c["short_max"] is not None and (c["libc_everywhere"] or c["libc_min"] != 0), c' "$tmp/cal.json" || no "calibrate: chosen thresholds"
rm -rf "$cal"
env -u XDG_CACHE_HOME HOME=relative "$cli" calibrate --quick --save >/dev/null 2>"$tmp/cal.err"; [ $? = 1 ] && grep -q "no place for the calibration file" "$tmp/cal.err" || no "calibrate --save without a place: not exit 1"
[ ! -e "$cal" ] && [ ! -e relative ] || no "calibrate --save without a place wrote something"

# bad input: exit 1 and a message naming the file; usage: exit 2
expect() {	# status, message part, command...
	st=$1 msg=$2; shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"; got=$?
	[ $got = "$st" ] || no "$*: status $got, want $st"
	grep -q -- "$msg" "$tmp/err" || no "$*: message '$(cat "$tmp/err")' lacks '$msg'"
}
printf 'not an elf file at all\n' >"$tmp/text"
head -c 200 "$prog" >"$tmp/truncated"
head -c 3000 "$prog" >"$tmp/truncated2"
: >"$tmp/empty"
expect 1 "$tmp/nonexistent: No such file" "$cli" list "$tmp/nonexistent"
expect 1 "not an ELF file" "$cli" list "$tmp/text"
expect 1 "$tmp/truncated: section headers outside the file" "$cli" list "$tmp/truncated"
expect 1 "$tmp/truncated2" "$cli" list "$tmp/truncated2"
expect 1 "not a regular, non-empty file" "$cli" list "$tmp/empty"
expect 1 "not a regular, non-empty file" "$cli" list "$tmp"
# a FIFO is refused at once, not waited on (list and prepatch hung)
rm -f "$tmp/fifo"; mkfifo "$tmp/fifo" || no "mkfifo"
expect 1 "$tmp/fifo: not a regular, non-empty file" timeout 60 "$cli" list "$tmp/fifo"
expect 1 "$tmp/fifo: not a regular, non-empty file" timeout 60 "$cli" prepatch "$tmp/fifo"
expect 2 "usage" "$cli" list
expect 2 "usage" "$cli" frobnicate
expect 2 "usage" "$cli" list "$prog" --no-such-option
# ... and a usage error says what is wrong before the usage
expect 2 "switchyard: no command given" "$cli"
expect 2 "switchyard: unknown command 'frobnicate'" "$cli" frobnicate
expect 2 "switchyard: list takes FILE|PID" "$cli" list
expect 2 "switchyard: unknown option '--no-such-option'" "$cli" list "$prog" --no-such-option
expect 2 "switchyard: set takes PID GLOB on|off|inc|dec" "$cli" set 1 k
expect 2 "switchyard: set: 'maybe' is not on, off, inc or dec" "$cli" set 1 k maybe
expect 2 "switchyard: ps takes no operands" "$cli" ps x
expect 2 "switchyard: -o is an option of prepatch only" "$cli" list "$prog" -o "$tmp/x"
expect 2 "switchyard: -o needs a file name" "$cli" prepatch "$prog" -o
expect 2 "switchyard: too many operands ('e' and after)" "$cli" set 1 k on e
expect 2 "the key pattern is empty" "$cli" set 1 "" on
expect 2 "switchyard: -o needs a file name, not an empty one" "$cli" prepatch "$prog" -o ""
# -- ends the options: a file named -x
cp "$prog" "$tmp/-x" || no "cp"
(cd "$tmp" && "$cli" list -- -x >/dev/null 2>"$tmp/err") || no "list -- -x: $(cat "$tmp/err")"
expect 2 "unknown option '-x'" "$cli" list -x
expect 2 "the call pattern is empty" "$cli" call 1 "" t
expect 2 "the target is empty" "$cli" call 1 c ""
"$cli" --help | grep -q "switchyard list FILE" || no "--help"
"$cli" --version | grep -Eq "^switchyard [0-9]+\.[0-9]+\.[0-9]+$" || no "--version: $("$cli" --version 2>&1)"
# the man page documents every command of --help, and every JSON field
man=$src/../../doc/man/switchyard.1
for c in $("$cli" --help | sed -n 's/.*switchyard \([a-z][a-z]*\).*/\1/p'); do
	grep -q "^\.B $c" "$man" || no "man page: no '$c'"
done
python3 - "$tmp/prog.json" "$man" <<'PY' || no "man page: JSON fields"
import json, sys
d, man = json.load(open(sys.argv[1])), open(sys.argv[2]).read()
fields = set(d)
for k in ("keys", "static_calls", "alternatives", "runtime_consts"):
    for e in d[k]:
        fields |= set(e)
        for s in e.get("sites", []):
            fields |= set(s)
missing = [f for f in sorted(fields) if f'"{f}"' not in man]
if missing:
    print("undocumented:", missing)
sys.exit(1 if missing else 0)
PY

[ $fail = 0 ] && echo "test_cli: all checks passed"
exit $fail
