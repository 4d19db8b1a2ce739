#!/bin/sh
# test_cli_aarch64.sh - `switchyard list` and `prepatch` on AArch64 files:
# a shared object (a64_cli_lib.c: keys of its own and another object's,
# a static call site, an alternative, a run-time constant) and a program
# linked without PIE that holds a copy of the library's key (a64_cli_prog.c),
# both built here with the AArch64 compiler. The x86-64 build runs it with
# its x86-64 tool (cross-built products inspected on the build machine);
# the AArch64 build with its own tool, through the emulator.
#   test_cli_aarch64.sh <switchyard> <runner|-> <aarch64 cc|-> <include dir>
#                       <source dir> <tmp dir>
# runner: the words of the command that runs the tool (the cross build's
# emulator, split at spaces here), - to run it directly, ! when nothing
# can (a cross build without an emulator).
set -u
cli=$1 runner=$2 cc=$3 inc=$4 src=$5 tmp=$6
fail=0
no() { echo "FAIL: $*"; fail=1; }
# shellcheck disable=SC2086 # the runner's words, split on purpose
sy() { if [ "$runner" = - ]; then "$cli" "$@"; else $runner "$cli" "$@"; fi; }
if [ "$runner" = ! ]; then
	echo "SKIP: a cross build without an emulator cannot run the tool"
	exit 77
fi
if [ "$cc" = - ] || ! command -v "$cc" >/dev/null 2>&1; then
	echo "SKIP: no AArch64 C compiler (Debian: gcc-aarch64-linux-gnu)"
	exit 77
fi
command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1

# the fixtures: never run, so the library is not linked (its symbols are
# left undefined, as in any object that uses it before it is loaded)
"$cc" -I "$inc" -g -O1 -fPIC -shared -Wall -Wextra -Werror \
	-o "$tmp/liba64cli.so" "$src/a64_cli_lib.c" || { echo "FAIL: build the library"; exit 1; }
"$cc" -I "$inc" -g -O1 -fno-pie -no-pie -Wall -Wextra -Werror \
	-o "$tmp/a64prog" "$src/a64_cli_prog.c" -L "$tmp" -la64cli \
	-Wl,-rpath,'$ORIGIN' -Wl,--unresolved-symbols=ignore-in-object-files \
	-Wl,--allow-shlib-undefined || { echo "FAIL: build the program"; exit 1; }

sy list "$tmp/liba64cli.so" --json >"$tmp/lib.json" 2>"$tmp/err" || no "list library: $(cat "$tmp/err")"
sy list "$tmp/a64prog" --json >"$tmp/prog.json" 2>"$tmp/err" || no "list program: $(cat "$tmp/err")"

# check.py FILE.json SRC KIND STATE: the listing's facts against the
# source's marks; STATE "compiled" (every site a B to its target) or
# "prepatched" (the sites of keys the file defines in their initial form)
cat >"$tmp/check.py" <<'PY'
import json, re, sys
path, src, kind, state = sys.argv[1:5]
d = json.load(open(path))
bad = []
def marks(f):
    out = {}
    for n, l in enumerate(open(f"{src}/{f}"), 1):
        for m in re.finditer(r"(SITE|CALL|ALT|RC)_(\w+?)(?:_(\d))?\b", l):
            out.setdefault((m.group(1), m.group(2)), set()).add(n)
    return out
def le_word(b):
    x = bytes(int(h, 16) for h in b.split())
    return int.from_bytes(x, "little") if len(x) == 4 else None
def branch_target(w, pc):
    imm = w & 0x03ffffff
    if imm & 0x02000000:
        imm -= 0x04000000
    return pc + imm * 4
if d.get("machine") != "AArch64":
    bad.append(f"machine {d.get('machine')!r}")
if kind == "lib":
    f = "a64_cli_lib.c"
    # name: (initial, defined, likely, copy)
    want = {"a64_off": ("off", True, False, False),
            "a64_on": ("on", True, True, False),
            "a64_ext": ("unknown", False, False, False)}
else:
    f = "a64_cli_prog.c"
    want = {"a64_prog_key": ("off", True, True, False),
            "a64_on": ("unknown", False, True, True)}
m = marks(f)
keys = {k["name"]: k for k in d["keys"]}
if set(keys) != set(want):
    bad.append(f"keys {sorted(keys)} != {sorted(want)}")
for name, (initial, defined, likely, copy) in want.items():
    k = keys.get(name)
    if not k:
        continue
    if (k["initial"], k["defined"], k["copy_relocation"]) != (initial, defined, copy):
        bad.append(f"{name}: initial {k['initial']} defined {k['defined']} copy {k['copy_relocation']}")
    if copy and not (k["defined_in"] or "").endswith("liba64cli.so"):
        bad.append(f"{name}: defined_in {k['defined_in']!r}")
    got = {s["line"] for s in k["sites"]}
    if got != m.get(("SITE", name), set()):
        bad.append(f"{name}: site lines {sorted(got)} != {sorted(m.get(('SITE', name), set()))}")
    for s in k["sites"]:
        addr = int(s["address"], 16)
        w = le_word(s["bytes"])
        # the straight-line path is taken when the state equals likely
        nop = state == "prepatched" and initial != "unknown" and \
              (initial == "on") == likely
        ok = s["length"] == 4 and addr % 4 == 0 and w is not None and \
             s["likely"] == likely and s["function"] and s["file"].endswith(f)
        if nop:
            ok = ok and w == 0xd503201f and s["disasm"] == "nop"
        else:
            ok = ok and w is not None and (w & 0xfc000000) == 0x14000000 and \
                 s["disasm"] == "b #0x%x" % branch_target(w, addr)
        if not ok:
            bad.append(f"{name}: site {s} ({state})")
if kind == "prog" and keys.get("a64_on") and \
   int(keys["a64_on"]["address"], 16) == 0:
    bad.append("a64_on: the copy's address is 0")
calls, alts, rcs = d["static_calls"], d["alternatives"], d["runtime_consts"]
if kind == "lib":
    if len(calls) != 1:
        bad.append(f"static calls: {calls}")
    else:
        c = calls[0]
        w = le_word(c["bytes"])
        if (c["name"], c["initial_target"], c["line"]) != \
           ("a64_sc", "a64_impl", min(m[("CALL", "a64_sc")])) or \
           w is None or (w & 0xfc000000) != 0x94000000 or \
           c["veneer"] is None or \
           branch_target(w, int(c["address"], 16)) != int(c["veneer"], 16) or \
           c["disasm"] != "bl %s" % ("#" + c["veneer"]):
            bad.append(f"static call: {c}")
    if len(alts) != 1:
        bad.append(f"alternatives: {alts}")
    else:
        a = alts[0]
        # feature 3 of the file's machine, absent: by number, or by name
        # when the tool is an AArch64 one (its library's names)
        if not re.fullmatch(r"!(feature 3|[a-z0-9_]+)", a["feature"]) or \
           (a["length"], a["replacement_length"]) != (8, 8) or \
           a["line"] != min(m[("ALT", "1")]) or a["disasm"] != "nop; nop" or \
           not re.fullmatch(r"bl #0x[0-9a-f]+; nop", a["replacement_disasm"]):
            bad.append(f"alternative: {a}")
    if len(rcs) != 1:
        bad.append(f"run-time constants: {rcs}")
    else:
        c = rcs[0]
        if (c["name"], c["size"], c["line"]) != \
           ("a64_limit", 4, min(m[("RC", "a64_limit")])) or \
           not re.fullmatch(r"mov[z]? w\d+, #0x4567; movk w\d+, #0x123, lsl #16",
                            c["disasm"]):
            bad.append(f"run-time constant: {c}")
    descs = {k["name"]: k["description"] for k in d["keys"]}
    if descs.get("a64_off") != 'an AArch64 key, "off"' or descs.get("a64_on") is not None:
        bad.append(f"descriptions {descs}")
elif calls or alts or rcs:
    bad.append("the program has no static call, alternative or run-time constant")
for b in bad:
    print(f"FAIL: {kind} ({state}):", b)
sys.exit(1 if bad else 0)
PY
python3 "$tmp/check.py" "$tmp/lib.json" "$src" lib compiled || fail=1
python3 "$tmp/check.py" "$tmp/prog.json" "$src" prog compiled || fail=1

# text: the same facts, for a reader
sy list "$tmp/liba64cli.so" >"$tmp/lib.txt" || no "list (text)"
grep -q "^$tmp/liba64cli.so (AArch64): 3 static keys with 4 sites, 1 static call site, 1 alternative, 1 run-time constant site$" "$tmp/lib.txt" ||
	no "text: header: $(head -1 "$tmp/lib.txt")"
grep -q '^key a64_off  initial off, 2 sites$' "$tmp/lib.txt" || no "text: a64_off"
grep -q '^  -- an AArch64 key, "off"$' "$tmp/lib.txt" || no "text: description"
grep -Eq '^  0x[0-9a-f]+ +a64_one\+0x[0-9a-f]+ +.*a64_cli_lib.c:[0-9]+ +([0-9a-f]{2} ){3}14 +b #0x[0-9a-f]+ +unlikely$' "$tmp/lib.txt" ||
	no "text: a64_off's site in a64_one"
grep -q '^key a64_ext (defined in another object)  initial unknown, 1 site$' "$tmp/lib.txt" || no "text: a64_ext"
grep -Eq '^  a64_sc +0x[0-9a-f]+ +a64_three\+0x[0-9a-f]+ .*a64_cli_lib.c:[0-9]+ +-> a64_impl  bl #0x[0-9a-f]+ \(veneer\)$' "$tmp/lib.txt" ||
	no "text: static call line"
grep -Eq '^      site:  nop; nop$' "$tmp/lib.txt" || no "text: the alternative's site"
grep -Eq '^      movz? w[0-9]+, #0x4567; movk w[0-9]+, #0x123, lsl #16$' "$tmp/lib.txt" || no "text: the run-time constant's instructions"
sy list "$tmp/a64prog" >"$tmp/prog.txt" || no "list program (text)"
grep -q "^key a64_on (defined in $tmp/liba64cli.so, copied into this file by a copy relocation)  initial unknown, 1 site$" "$tmp/prog.txt" ||
	no "text: the copied key: $(grep '^key a64_on' "$tmp/prog.txt")"

mkdir -p "$tmp/pp"
# prepatch: the sites of the keys each file defines in their initial form
# (NOP where the state equals the likely bit), the others as compiled
sy prepatch "$tmp/liba64cli.so" -o "$tmp/pp/liba64cli.so" --json >"$tmp/pp-lib.json" 2>"$tmp/err" ||
	no "prepatch library: $(cat "$tmp/err")"
sy prepatch "$tmp/a64prog" -o "$tmp/pp/a64prog" --json >"$tmp/pp-prog.json" 2>"$tmp/err" ||
	no "prepatch program: $(cat "$tmp/err")"
python3 - "$tmp/pp-lib.json" "$tmp/pp-prog.json" <<'PY' || fail=1
import json, sys
lib, prog = (json.load(open(p)) for p in sys.argv[1:3])
bad = []
# library: a64_off's 2 sites (off, unlikely) and a64_on's (on, likely) are
# NOPs, a64_ext's is another object's; program: a64_prog_key's (off,
# likely) stays a B, a64_on's is a copy's
if (lib["sites"], lib["written"], lib["already"], lib["elsewhere"],
    lib["static_calls"], lib["alternatives"], lib["runtime_consts"]) != (4, 3, 0, 1, 1, 1, 1):
    bad.append(f"library: {lib}")
if (prog["sites"], prog["written"], prog["already"], prog["elsewhere"]) != (2, 0, 1, 1):
    bad.append(f"program: {prog}")
for b in bad:
    print("FAIL: prepatch:", b)
sys.exit(1 if bad else 0)
PY
sy list "$tmp/pp/liba64cli.so" --json >"$tmp/pp-lib-list.json" 2>"$tmp/err" || no "list prepatched: $(cat "$tmp/err")"
sy list "$tmp/pp/a64prog" --json >"$tmp/pp-prog-list.json" 2>"$tmp/err" || no "list prepatched program: $(cat "$tmp/err")"
python3 "$tmp/check.py" "$tmp/pp-lib-list.json" "$src" lib prepatched || fail=1
python3 "$tmp/check.py" "$tmp/pp-prog-list.json" "$src" prog prepatched || fail=1
# only the site words changed: 3 words, each a B become d503201f
python3 - "$tmp/liba64cli.so" "$tmp/pp/liba64cli.so" <<'PY' || fail=1
import sys
a, b = (open(p, "rb").read() for p in sys.argv[1:3])
words = sorted({i & ~3 for i in range(len(a)) if a[i] != b[i]})
ok = len(a) == len(b) and len(words) == 3 and all(
    b[w:w + 4] == bytes.fromhex("1f2003d5") and a[w + 3] == 0x14 for w in words)
if not ok:
    print(f"FAIL: prepatch changed words at {[hex(w) for w in words]}")
sys.exit(0 if ok else 1)
PY
# again: nothing to write, the file as it was
cp "$tmp/pp/liba64cli.so" "$tmp/pp/again.so"
sy prepatch "$tmp/pp/again.so" --json >"$tmp/pp-again.json" 2>"$tmp/err" || no "prepatch again: $(cat "$tmp/err")"
grep -q '"written": 0, "already": 3, "elsewhere": 1' "$tmp/pp-again.json" || no "prepatch again: $(cat "$tmp/pp-again.json")"
cmp -s "$tmp/pp/again.so" "$tmp/pp/liba64cli.so" || no "prepatch again changed the file"

# malformed AArch64 files: exit 1 and the reason, nothing written
expect() {	# status, message part, command...
	st=$1 msg=$2; shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"; got=$?
	[ $got = "$st" ] || no "$*: status $got, want $st"
	grep -q -- "$msg" "$tmp/err" || no "$*: message '$(cat "$tmp/err")' lacks '$msg'"
}
python3 - "$tmp/liba64cli.so" "$tmp" <<'PY' || fail=1
# bad-machine.so: e_machine 243 (RISC-V); bad-site.so: the first site's
# word neither its B nor a NOP; bad-reloc.so: a key field's relocation of
# a type that cannot fill a pointer (R_AARCH64_PREL32)
import struct, sys
src, tmp = sys.argv[1:3]
img = bytearray(open(src, "rb").read())
def sections(img):
    shoff, = struct.unpack_from("<Q", img, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", img, 0x3a)
    sh = [struct.unpack_from("<IIQQQQIIQQ", img, shoff + i * shentsize)
          for i in range(shnum)]
    stroff = sh[shstrndx][4]
    def name(o):
        e = img.index(b"\0", stroff + o)
        return img[stroff + o:e].decode()
    return {name(s[0]): s for s in sh}
sec = sections(img)
bad = bytearray(img)
struct.pack_into("<H", bad, 0x12, 243)
open(f"{tmp}/bad-machine.so", "wb").write(bad)
jt = sec["sy_jump_entries"]
code, = struct.unpack_from("<i", img, jt[4])
site = jt[3] + code
text = [s for s in sec.values() if s[3] <= site < s[3] + s[5] and s[1] == 1][0]
off = text[4] + site - text[3]
bad = bytearray(img)
struct.pack_into("<I", bad, off, 0xd503203f)	# YIELD: not a site's form
open(f"{tmp}/bad-site.so", "wb").write(bad)
rela = sec[".rela.dyn"]
bad = bytearray(img)
done = False
for i in range(rela[5] // 24):
    o = rela[4] + i * 24
    r_offset, r_info = struct.unpack_from("<QQ", img, o)
    if jt[3] <= r_offset < jt[3] + jt[5] and (r_info & 0xffffffff) == 257:
        struct.pack_into("<Q", bad, o + 8, (r_info & ~0xffffffff) | 261)
        done = True
        break
if not done:
    print("FAIL: no ABS64 relocation of a key field to spoil")
    sys.exit(1)
open(f"{tmp}/bad-reloc.so", "wb").write(bad)
PY
head -c 3000 "$tmp/liba64cli.so" >"$tmp/truncated.so"
expect 1 "not a 64-bit x86-64 or AArch64 ELF file" sy list "$tmp/bad-machine.so"
expect 1 "$tmp/truncated.so: section headers outside the file" sy list "$tmp/truncated.so"
expect 1 "a relocation of sy_jump_entries is malformed" sy list "$tmp/bad-reloc.so"
expect 1 "a relocation of sy_jump_entries is malformed" sy prepatch "$tmp/bad-reloc.so" -o "$tmp/out.so"
[ ! -e "$tmp/out.so" ] || no "prepatch of a malformed file wrote $tmp/out.so"
# a site that holds neither form: listed as not a site's form, never
# prepatched
sy list "$tmp/bad-site.so" --json >"$tmp/bad-site.json" 2>"$tmp/err" || no "list bad-site: $(cat "$tmp/err")"
python3 - "$tmp/bad-site.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
sites = [s for k in d["keys"] for s in k["sites"] if s["length"] == 0]
if len(sites) != 1 or sites[0]["bytes"] != "" or sites[0]["disasm"] == "nop" or \
   sites[0]["disasm"].startswith("b "):
    print(f"FAIL: bad-site.so: {sites}")
    sys.exit(1)
PY
cp "$tmp/bad-site.so" "$tmp/bad-site-copy.so"
expect 1 "holds neither the B the compiler emitted nor its NOP form: nothing written" \
	sy prepatch "$tmp/bad-site-copy.so"
cmp -s "$tmp/bad-site.so" "$tmp/bad-site-copy.so" || no "prepatch changed a file it refused"

[ $fail = 0 ] && echo "PASS: test_cli_aarch64"
exit $fail
