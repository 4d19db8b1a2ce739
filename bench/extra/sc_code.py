#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""sc_code.py - the code side of e2_calls: instructions and bytes.

    sc_code.py BENCH_SC_CALL [CALLGRIND_DIR]

From `objdump -d` of the binary, for every chain loop x = f(x) (c_*): the
loop body (from the target of its backward branch to the branch), its
instructions and bytes, and the call site in it (the body minus the
direct-call loop's own loop control, compared instruction by instruction);
for the static call, the site from its red-zone step to the restore of
%rsp, its out-of-line detour (from the guard's JMP32 target, plus the
4-byte rseq signature before it), and the instructions on its two paths:
patched (the guard is TEST32 and falls through to the payload's call) and
parked (the guard jumps to the detour, which calls through the key and
jumps back after the payload). For PLT, ifunc and target_clones calls, the
PLT entry the call goes through (shared by every call site of that
function); for the retpoline, the thunk (shared by the translation unit).

With CALLGRIND_DIR (the dumps of `e2_calls --callgrind N1 N2` under
valgrind --tool=callgrind): instructions per call of each variant, the
difference of the counts after N2 and after N1 calls over N2 - N1, and the
patched static calls' counts as valgrind cannot show them (no rseq under
valgrind: the sites run parked): the direct call's count plus the
difference of the two loop bodies on the patched path (the callee is the
same function), plus one for the far target's stub (jmp *0(%rip)).

Exits 1 if the retpoline loop does not call a retpoline thunk
(__x86_indirect_thunk_* from gcc, __llvm_retpoline_* from clang).
"""
import glob
import re
import subprocess
import sys

INSN = re.compile(r"^\s*([0-9a-f]+):\t([0-9a-f ]+?)\s*\t(.*)$")
FUNC = re.compile(r"^([0-9a-f]+) <(.+)>:$")
TARGET = re.compile(r"^(?:call|jmp|j[a-z]+)\s+([0-9a-f]+)\b")

VARIANTS = [
    ("c_direct", "direct call"),
    ("c_static", "static_call, patched (in reach)"),
    ("c_static_far", "static_call, target in a library (stub)"),
    ("c_pointer", "function pointer"),
    ("c_retpoline", "function pointer, retpoline"),
    ("c_plt", "PLT call into a shared library"),
    ("c_ifunc", "GNU ifunc in a shared library"),
    ("c_clones", "target_clones function"),
]


class Insn:
    def __init__(self, addr, raw, text):
        self.addr = addr
        self.size = len(raw.split())
        self.raw = raw
        self.text = re.sub(r"\s+", " ", text.split("#")[0].strip())
        m = TARGET.match(self.text)
        self.target = int(m.group(1), 16) if m else None

    def norm(self):
        """the instruction without addresses (call targets differ)"""
        return re.sub(r"\b[0-9a-f]+ <[^>]*>", "<>", self.text)


def objdump(path, *extra):
    out = subprocess.run(["objdump", "-d", "-w", "--insn-width=16", *extra,
                          path], check=True, capture_output=True,
                         text=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        m = FUNC.match(line)
        if m:
            cur = funcs.setdefault(m.group(2), [])
            continue
        m = INSN.match(line)
        if m and cur is not None:
            cur.append(Insn(int(m.group(1), 16), m.group(2), m.group(3)))
    return funcs


def symbol_sizes(path):
    """st_size of the defined functions (objdump's extent of a function
    runs to the next symbol, padding included)"""
    out = subprocess.run(["nm", "-S", "--defined-only", path], check=True,
                         capture_output=True, text=True).stdout
    sizes = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "tTiW":
            sizes[f[3]] = int(f[1], 16)
    return sizes


def read_vaddr(path, addr, length):
    """length bytes of the file at virtual address addr (its section's)"""
    out = subprocess.run(["readelf", "-S", "-W", path], check=True,
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+([0-9a-f]+)\s+"
                     r"([0-9a-f]+)\s+([0-9a-f]+)", line)
        if not m or m.group(2) == "NOBITS":
            continue
        va, off, size = (int(m.group(i), 16) for i in (3, 4, 5))
        if va <= addr and addr + length <= va + size:
            with open(path, "rb") as f:
                f.seek(off + addr - va)
                return f.read(length)
    raise SystemExit("no section holds %#x" % addr)


def detour_of(path, guard, site_end):
    """the detour a parked guard calls or jumps to: (bytes per site, the
    instructions of it that run when entered from the guard). The rseq
    signature lies at most 20 bytes before the entry; a 4-byte word before
    the signature that points at the end of the site belongs to it too."""
    t = guard.target
    raw = read_vaddr(path, t - 24, 24)
    k = raw.rfind(bytes.fromhex("53300553"))
    if k < 0:
        raise SystemExit("no rseq signature before the detour at %#x" % t)
    sig = t - 24 + k
    start = sig
    if k >= 4:
        w = int.from_bytes(raw[k - 4:k], "little", signed=True)
        if sig - 4 + w == site_end:
            start = sig - 4
    code = []
    for x in decode_at(path, sig + 4, 128):
        code.append(x)
        if x.text.startswith("ret") or (x.text.startswith("jmp")
                                        and x.target == site_end):
            break
    end = code[-1].addr + code[-1].size
    run = [x for x in code if x.addr >= t]
    return end - start, sig - start, code, run


def decode_at(path, addr, length=64):
    out = subprocess.run(["objdump", "-d", "-w", "--insn-width=16",
                          "--start-address=%#x" % addr,
                          "--stop-address=%#x" % (addr + length), path],
                         check=True, capture_output=True, text=True).stdout
    return [Insn(int(m.group(1), 16), m.group(2), m.group(3))
            for m in map(INSN.match, out.splitlines()) if m]


def loop_body(insns):
    """instructions from the target of the last backward branch to it"""
    start = insns[0].addr
    for i in range(len(insns) - 1, -1, -1):
        x = insns[i]
        if (x.text.startswith("j") and not x.text.startswith("jmp")
                and x.target is not None and start <= x.target < x.addr):
            return [y for y in insns if x.target <= y.addr <= x.addr]
    raise SystemExit("no loop found")


def site_of(body, control):
    """the body minus the direct loop's control instructions (multiset)"""
    rest = list(control)
    site = []
    for x in body:
        if x.norm() in rest:
            rest.remove(x.norm())
        else:
            site.append(x)
    return site


def static_site(body):
    """the static call site: from `mov %rsp,SV` + `lea -0x80(%rsp),%rsp`
    to `mov SV,%rsp`"""
    for i, x in enumerate(body[:-1]):
        m = re.match(r"mov %rsp,(%r\w+)$", x.text)
        if m and body[i + 1].text.startswith("lea -0x80(%rsp),%rsp"):
            for j in range(i + 2, len(body)):
                if body[j].text == "mov %s,%%rsp" % m.group(1):
                    return body[i:j + 1]
    raise SystemExit("static call site not found")


def main():
    path = sys.argv[1]
    cgdir = sys.argv[2] if len(sys.argv) > 2 else None
    funcs = objdump(path)
    sizes = symbol_sizes(path)
    by_addr = sorted((f[0].addr, name, f) for name, f in funcs.items() if f)

    def owner(addr):
        for a, name, f in by_addr:
            if a <= addr <= f[-1].addr:
                return name, f
        return None, None

    global VARIANTS
    VARIANTS = [(v, n) for v, n in VARIANTS if v in funcs]  # clang < 16:
    bodies = {v: loop_body(funcs[v]) for v, _ in VARIANTS}  # no clones
    direct = bodies["c_direct"]
    dcall = [x for x in direct if x.text.startswith("call")]
    control = [x.norm() for x in direct if x not in dcall]
    rows, notes, ok = [], [], True
    path_insns = {}
    for v, name in VARIANTS:
        body = bodies[v]
        if v.startswith("c_static"):
            site = static_site(body)
        else:
            site = site_of(body, control)
        out_of_line = ""
        if v.startswith("c_static"):
            payload = site[-2]   # the call before `mov SV,%rsp`
            guard = site[-3]
            dbytes, extra, det, run = detour_of(path, guard,
                                                payload.addr + payload.size)
            out_of_line = ("detour %d B per site (%s4 B signature, %d "
                           "insns)" % (dbytes, "%d B offset, " % extra
                                       if extra else "", len(det)))
            # patched: every body instruction (the guard is TEST32, one
            # instruction); parked: the body but the payload, plus what
            # runs of the detour from the guard's entry (its jz not taken)
            path_insns[v] = {
                "patched": len(body),
                "parked": len(body) - 1 + len(run),
            }
            notes.append("%s detour (from the signature): %s" % (
                v, "; ".join(x.text for x in det)))
            site_calls = [payload]
        else:
            site_calls = [x for x in site if x.text.startswith("call")]
        calls = site_calls
        if calls and calls[0].target is not None:
            tname, tf = owner(calls[0].target)
            if tname and "@plt" in tname:
                out_of_line = "PLT entry %d B, shared (%s)" % (
                    sum(x.size for x in tf), tf[0].text)
            if tname and tname.startswith(("__x86_indirect_thunk",
                                           "__llvm_retpoline_")):
                upto = next((i for i, x in enumerate(tf)
                             if x.text.startswith("ret")), len(tf) - 1)
                out_of_line = "%s %d B, shared by the file" % (
                    tname, sizes.get(tname, sum(x.size
                                                for x in tf[:upto + 1])))
        if v == "c_retpoline" and not any(
                re.search(r"<(__x86_indirect_thunk_|__llvm_retpoline_)",
                          x.text) for x in site):
            ok = False
            notes.append("ERROR: c_retpoline does not call a retpoline "
                         "thunk: " + "; ".join(
                             x.text for x in site))
        rows.append((v, name, len(body), sum(x.size for x in body),
                     len(site), sum(x.size for x in site),
                     "; ".join(x.text for x in site), out_of_line))

    print("== code per variant (objdump -d; loop body = one iteration of "
          "x = f(x))")
    print("| variant | loop body: insns / bytes | call site in the caller: "
          "insns / bytes | out of line |")
    print("| --- | --- | --- | --- |")
    for v, name, bi, bb, si, sb, stext, ool in rows:
        print("| %s | %d / %d | %d / %d | %s |" % (name, bi, bb, si, sb,
                                                   ool or "-"))
    print()
    for v, name, bi, bb, si, sb, stext, ool in rows:
        print("  %-13s site: %s" % (v, stext))
    for n in notes:
        print("  " + n)
    print("  static call loop body (patched path):")
    for x in bodies["c_static"]:
        print("    %-36s %s" % (x.raw, x.text))

    if cgdir:
        counts = {}
        for f in glob.glob(cgdir + "/*"):
            desc = summ = None
            with open(f, errors="replace") as fh:
                for line in fh:
                    pre = "desc: Trigger: Client Request: "
                    if line.startswith(pre):
                        desc = line[len(pre):].strip()
                    elif line.startswith("summary:"):
                        summ = int(line.split()[1])
                        break
            if desc and summ is not None:
                m = re.match(r"(\S+) n=(\d+)$", desc)
                if m:
                    counts.setdefault(m.group(1), {})[int(m.group(2))] = summ
        print()
        print("== instructions per call, x = f(x) loop (callgrind: whole "
              "iteration, callee and loop control included)")
        print("| variant | instructions per call | vs direct |")
        print("| --- | --- | --- |")
        per = {}
        for v, name in VARIANTS:
            c = counts.get(v)
            if not c or len(c) < 2:
                continue
            (n1, c1), (n2, c2) = sorted(c.items())[:2]
            per[v] = (c2 - c1) / (n2 - n1)
        d = per.get("c_direct")
        for v, name in VARIANTS:
            if v not in per:
                continue
            label = name
            if v == "c_static":
                label = "static_call, in reach, PARKED under valgrind"
            if v == "c_static_far":
                label = "static_call, far target, PARKED under valgrind"
            print("| %s | %.2f | %+.2f |" % (label, per[v], per[v] - d))
            if v in ("c_static", "c_static_far") and d is not None:
                # patched: the body (guard TEST32); a far target adds the
                # stub's one instruction (jmp *0(%rip))
                extra = 1 if v == "c_static_far" else 0
                delta = path_insns[v]["patched"] - len(bodies["c_direct"])
                est = d + delta + extra
                print("| %s, patched (disassembly: direct %+d%s) | %.2f | "
                      "%+.2f |" % (label.split(",")[0] + "," +
                                   label.split(",")[1], delta,
                                   " + the stub's jmp" if extra else "",
                                   est, est - d))
        if d is not None and "c_static" in per:
            pk = d + path_insns["c_static"]["parked"] - len(bodies["c_direct"])
            print("  check: the parked path counted by disassembly gives "
                  "%.2f per call; callgrind measured %.2f" % (
                      pk, per["c_static"]))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
