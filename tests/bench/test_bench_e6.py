#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_bench_e6.py BENCH INCLUDE LIBDIR - E6's parts that need neither
the network nor nginx's source, in a second: the experiment registered
(by name only), its patch well-formed and in step with its nginx add-on,
the patched debug macros compiled against switchyard's headers and run
(off: no call; on: the log's level still decides), the parsers of wrk's
and callgrind's output. With nginx's tarball already in E6's cache the
patch is also applied to it (--dry-run); without, that part says SKIP.
The whole experiment runs with `switchyard bench E6`."""
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

bench, include, libdir = (os.path.abspath(p) for p in sys.argv[1:4])
sys.path.insert(0, bench)
spec = importlib.util.spec_from_file_location(
    "sybench", os.path.join(bench, "sybench.py"))
sb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sb)
e6 = sb.EXPERIMENTS.get("E6")
bad = []


def check(cond, what):
    if not cond:
        bad.append(what)


# registered, asked for by name only (it downloads and builds nginx)
check(e6 is not None and e6.__name__.endswith("e6_nginx"), "E6 registered")
check("E6" not in sb.QUICK and "E6" in sb.BY_NAME, "E6 only by name")

# the patch: one file, hunks whose line counts match their headers
with open(os.path.join(bench, "e6", "ngx_log.h.patch")) as f:
    patch = f.read().splitlines()
files = [l[4:].split()[0] for l in patch if l.startswith(("--- ", "+++ "))]
check(files == ["a/src/core/ngx_log.h", "b/src/core/ngx_log.h"],
      f"the patch's files: {files}")
hunks, new = [], []
i = next(k for k, l in enumerate(patch) if l.startswith("@@"))
while i < len(patch):
    m = re.match(r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@", patch[i])
    check(m is not None, f"hunk header {patch[i]!r}")
    if not m:
        break
    want_old, want_new = int(m.group(1) or 1), int(m.group(2) or 1)
    old_n = new_n = 0
    body = []
    i += 1
    while i < len(patch) and not patch[i].startswith("@@"):
        l = patch[i]
        if l.startswith(("-", " ")) or l == "":
            old_n += 1
        if l.startswith(("+", " ")) or l == "":
            new_n += 1
            body.append(l[1:])
        i += 1
    check((old_n, new_n) == (want_old, want_new),
          f"hunk {len(hunks) + 1}: {old_n},{new_n} lines for "
          f"{want_old},{want_new}")
    hunks.append(body)
    new += body
text = "\n".join(new)
key = e6.KEY if e6 else "ngx_debug_key"
check(f"DECLARE_STATIC_KEY_FALSE({key});" in text,
      "the patch declares the key")
check(f"static_branch_unlikely(&{key})" in text, "the patch tests the key")
with open(os.path.join(bench, "e6", "ngx_switchyard",
                       "ngx_switchyard_module.c")) as f:
    check(f"DEFINE_STATIC_KEY_FALSE({key});" in f.read(),
          "the add-on defines the key the patch declares")
with open(os.path.join(bench, "e6", "ngx_switchyard", "config")) as f:
    check("have=NGX_SWITCHYARD" in f.read(),
          "the add-on defines NGX_SWITCHYARD for the patched header")

# the patched macros, compiled and run: the NGX_SWITCHYARD block and both
# variadic forms of ngx_log_debug, as the patch leaves them
block = re.search(r"#if \(NGX_SWITCHYARD\)\n.*?#endif\n", text + "\n", re.S)
macros = re.findall(r"#define ngx_log_debug\(.*?[^\\]\n", text + "\n", re.S)
check(block is not None, "the NGX_SWITCHYARD block")
check(len(macros) == 2, f"{len(macros)} ngx_log_debug macros, want 2")
if block and len(macros) == 2:
    tests = []
    for k, mac in enumerate(macros):
        tests.append(mac.replace("ngx_log_debug(", f"ngx_log_debug_{k}(", 1))
    prog = ("#include <stdio.h>\n"
            "#include <switchyard/static_key.h>\n"
            "typedef struct { unsigned long log_level; } ngx_log_t;\n"
            "#define NGX_LOG_DEBUG 8\n"
            "static int calls;\n"
            "static void ngx_log_error_core(unsigned long level,\n"
            "    ngx_log_t *log, int err, const char *fmt, ...)\n"
            "{ (void)level; (void)log; (void)err; (void)fmt; calls++; }\n"
            "#define NGX_SWITCHYARD 1\n" +
            block.group(0).replace("#include <switchyard/static_key.h>",
                                   "") +
            "".join(tests) +
            f"DEFINE_STATIC_KEY_FALSE({key});\n" +
            "".join(
                f"static int try_{k}(void)\n{{\n"
                "\tngx_log_t log = { 0x10 };\n\n"
                "\tcalls = 0;\n"
                f"\tngx_log_debug_{k}(0x10, &log, 0, \"off\");\n"
                "\tif (calls != 0)\n\t\treturn 1;\n"
                f"\tstatic_branch_enable(&{key});\n"
                f"\tngx_log_debug_{k}(0x10, &log, 0, \"on\");\n"
                "\tif (calls != 1)\n\t\treturn 2;\n"
                f"\tngx_log_debug_{k}(0x20, &log, 0, \"level not set\");\n"
                "\tif (calls != 1)\n\t\treturn 3;\n"
                f"\tstatic_branch_disable(&{key});\n"
                f"\tngx_log_debug_{k}(0x10, &log, 0, \"off again\");\n"
                "\tif (calls != 1)\n\t\treturn 4;\n"
                "\treturn 0;\n}\n" for k in range(len(tests))) +
            "int main(void)\n{\n"
            "\tint r = try_0();\n\n"
            "\tif (r == 0)\n\t\tr = try_1();\n"
            "\tif (r)\n\t\treturn r;\n"
            "\tputs(\"ok\");\n\treturn 0;\n}\n")
    with tempfile.TemporaryDirectory() as d:
        c = os.path.join(d, "t.c")
        with open(c, "w") as f:
            f.write(prog)
        exe = os.path.join(d, "t")
        p = subprocess.run(["cc", "-O2", "-Wall", "-Werror", f"-I{include}",
                            c, "-o", exe, f"-L{libdir}", "-lswitchyard",
                            f"-Wl,-rpath,{libdir}"],
                           capture_output=True, text=True)
        check(p.returncode == 0, f"the patched macros do not compile: "
              f"{p.stderr.strip()[:500]}")
        if p.returncode == 0:
            r = subprocess.run([exe], capture_output=True, text=True)
            check(r.returncode == 0 and r.stdout.strip() == "ok",
                  f"the patched macros misbehave: exit {r.returncode} "
                  "(1: a call while off, 2: none while on, 3: the level "
                  "ignored, 4: a call after off)")

# the parsers
if e6:
    out = ("Running 2s test @ http://127.0.0.1:8080/\n"
           "  1 threads and 16 connections\n"
           "  39190 requests in 2.01s, 31.88MB read\n"
           "Requests/sec:  19519.74\nTransfer/sec:     15.86MB\n")
    check(e6.parse_wrk(out) == (39190, 19519.74), f"wrk: {e6.parse_wrk(out)}")
    check(e6.parse_wrk(out + "  Non-2xx or 3xx responses: 5\n") is None,
          "wrk: errors answered must fail")
    check(e6.parse_wrk("unable to connect") is None, "wrk: no report")
    with tempfile.TemporaryDirectory() as d:
        cg = os.path.join(d, "cg.out")
        with open(cg, "w") as f:
            f.write("version: 1\ncreator: callgrind\nevents: Ir\n"
                    "fn=main\n1 5\n\ntotals: 123456\n")
        check(e6.cg_total(cg) == 123456, "callgrind totals")

# the patch against nginx's own header, when E6 has fetched it before
tgz = os.path.join(e6.cache_dir(), e6.TARBALL) if e6 else ""
if not shutil.which("patch"):
    print("SKIP: the patch not applied to nginx's ngx_log.h: no patch(1)")
elif e6 and os.path.exists(tgz) and e6.sha256(tgz) == e6.SHA256:
    with tempfile.TemporaryDirectory() as d, tarfile.open(tgz) as t:
        name = f"nginx-{e6.VERSION}/src/core/ngx_log.h"
        with open(os.path.join(d, "ngx_log.h"), "wb") as f:
            f.write(t.extractfile(name).read())
        p = subprocess.run(["patch", "--dry-run", "-p3", "-s", "-i",
                            os.path.join(bench, "e6", "ngx_log.h.patch")],
                           cwd=d, capture_output=True, text=True)
        check(p.returncode == 0, f"the patch does not apply to nginx "
              f"{e6.VERSION}: {(p.stdout + p.stderr).strip()}")
else:
    print("SKIP: the patch not applied to nginx's ngx_log.h: E6 has not "
          "fetched nginx here (switchyard bench E6)")

for b in bad:
    print("FAIL:", b)
print("test_bench_e6:", "FAIL" if bad else "ok")
sys.exit(1 if bad else 0)
