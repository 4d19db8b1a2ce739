#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mutate.py - mutation testing of the default suite (see scripts/mutate.sh).

Each mutant is one planted bug: an exact-text replacement in one file of
src/. A mutant whose old text is not found exactly once "does not apply":
it is reported and the run exits 2, so that mutants rot visibly when the
code changes instead of silently testing nothing. For each mutant the copy
is rebuilt (only the changed file recompiles) and the fast default subset
runs; KILLED when a test fails or times out, SURVIVED otherwise.
"""
import os
import shlex
import subprocess
import sys

# id: (file, description, old, new)
MUTANTS = {
    1: ("static_key.c", "first enable publishes count 1 before the sites are written",
        "__atomic_store_n(&key->enabled, -1, __ATOMIC_RELAXED);\n\tr = sy_jump_label_update(key, true);",
        "__atomic_store_n(&key->enabled, 1, __ATOMIC_RELEASE);\n\tr = sy_jump_label_update(key, true);"),
    2: ("poke.c", "no undo after a write that fails part-way",
        "if (fail && fail->wrote &&\n", "if (0 && fail && fail->wrote &&\n"),
    3: ("poke_write.c", "SWITCHYARD_PATCH_METHOD ignored",
        "const char *s = secure_getenv(\"SWITCHYARD_PATCH_METHOD\");",
        "const char *s = NULL;"),
    4: ("poke_write.c", "core sync skipped (still counted)",
        "counters.sync_calls++;\n\tif (SY__POKE_NOSYNC)\n\t\treturn;\n\tr = sy_arch_sync_cores();",
        "counters.sync_calls++;\n\treturn;\n\tr = sy_arch_sync_cores();"),
    5: ("load.c", "registration not under the re-entry guard",
        "\tif (sy_enter()) {\n\t\treentered(\"refusing to register an object's sites\");",
        "\tif (0) {\n\t\treentered(\"refusing to register an object's sites\");"),
    6: ("deferred.c", "worker decrements without the patch lock",
        "while ((r = sy_lock_timed(20)) == -ETIMEDOUT &&\n"
        "\t\t\t       !__atomic_load_n(&quitting, __ATOMIC_RELAXED))\n"
        "\t\t\t\t;\n\t\t\tif (!r) {\n\t\t\t\trun_due();\n\t\t\t\tsy_unlock();\n"
        "\t\t\t\tsy_report_flush();\n\t\t\t}",
        "run_due();\n\t\t\t(void)r;"),
    7: ("deferred.c", "queued works of an unloaded object kept",
        "void sy_deferred_forget(const struct sy_obj *o)\n{\n",
        "void sy_deferred_forget(const struct sy_obj *o)\n{\n\treturn;\n"),
    8: ("poke_write.c", "/proc/self/mem descriptor trusted by its number",
        "return mem_fd >= 0 && fstat(mem_fd, &st) == 0 && st.st_dev == mem_dev &&\n"
        "\t       st.st_ino == mem_ino;",
        "(void)st;\n\treturn mem_fd >= 0;"),
    9: ("registry.c", "failed registration write: table not marked stale",
        "\t\tt->stale = true;\n", "\t\t(void)0;\n"),
    10: ("static_key.c", "last disable stores 0 instead of compare-and-swap",
         "if (!__atomic_compare_exchange_n(&key->enabled, v, 0, false,\n\t\t\t\t\t __ATOMIC_RELAXED, __ATOMIC_RELAXED))\n\t\treturn 1;",
         "__atomic_store_n(&key->enabled, 0, __ATOMIC_RELAXED);"),
    11: ("guard.c", "fork prepare handler does not raise the re-entry guard",
         "\tint saved = depth;\n\n\tdepth = 1;", "\tint saved = depth;\n"),
    12: ("poke.c", "a site holding unexpected bytes is accepted",
         "\t\tcase SY_SITE_FOREIGN:\n\t\tdefault:\n\t\t\treturn refuse(&d, c);",
         "\t\t\treturn refuse(&d, c);\n\t\tcase SY_SITE_FOREIGN:\n\t\tdefault:\n"
         "\t\t\tskip = false;\n\t\t\tbreak;"),
    13: ("registry.c", "stale tables not retried by later changes",
         "if (t->stale || t->order == ORDER_SCAN) {", "if (t->order == ORDER_SCAN) {"),
    14: ("registry.c", "index allocation failure drops the table (the original defect)",
         "\t\tt->order = ORDER_SCAN;\n", "\t\ttable_free(t);\n\t\treturn -ENOMEM;\n"),
    15: ("poke_write.c", "an inherited descriptor is closed without checking it is ours",
         "\t\tif (ours)\n\t\t\tclose(mem_fd);", "\t\tclose(mem_fd);"),
    16: ("registry.c", "sites written with the wrong form",
         "sy_arch_jump_encode_pair(code, target, d->len, !jump, jump, d->old,",
         "sy_arch_jump_encode_pair(code, target, d->len, jump, !jump, d->old,"),
    17: ("introspect.c", "key state snapshot reports the opposite state",
         "s->v[i].enabled = s->v[i].count > 0;", "s->v[i].enabled = s->v[i].count <= 0;"),
    18: ("deferred.c", "flush does not take the work off the queue",
         "\tif (work->sy_pending) {\n\t\tk = work->sy_key;\n\t\tunqueue(work);\n\t}",
         "\tif (0) {\n\t\tk = work->sy_key;\n\t\tunqueue(work);\n\t}"),
    19: ("arch/x86_64/sy_arch.h", "under a breakpoint hiding a JMP, the rel is not zeroed",
         "memset(fix->bytes, 0, len - 1);\n\t\t\treturn SY_SITE_FIX;",
         "memset(fix->bytes, 0, len - 1);\n\t\t\treturn SY_SITE_NEW;"),
    20: ("arch/x86_64/sy_arch.h", "the opcode under a breakpoint is overwritten",
         "return SY_SITE_TRAPPED;", "return SY_SITE_OLD;"),
    21: ("poke.c", "non-canonical sites are not brought back",
         "\t\t\tfix_add(preps, nprep, &d, &fx);", "\t\t\t(void)nprep;"),
    22: ("internal.h", "queued reports are never written",
         "\tsy_report_flush();\n\tsy_guard_exit();", "\tsy_guard_exit();"),
    23: ("load.c", "an empty table past the last segment: its object not found at unload",
         "\tif (!o.found)\n\t\tsy_obj_lookup((uintptr_t)start - 1, &o);\n", ""),
    24: ("arch/x86_64/memcpy_vec.c", "libc_min routes the sizes below it, not from it",
         "\"jae \" libc \"\\n\"", "\"jb \" libc \"\\n\""),
    25: ("copy/memcpy_entry.c", "the resolver ignores libc_min 0: the name stays the dispatcher",
         "return !sy_arch_mc_entry() || !sy_mc_decided()->libc_min;",
         "return !sy_arch_mc_entry();"),
    26: ("cpu.c", "the environment not read before environ is set (IFUNC resolvers see none)",
         "\tif (environ)\n\t\treturn secure_getenv(name);",
         "\tif (1)\n\t\treturn secure_getenv(name);"),
    27: ("arch/x86_64/memcpy_vec.c", "the downward loop stops a block early (bytes 256..511 of a copy left)",
         "\"leaq 256(%rdi), %r9\\n\\t\"", "\"leaq 512(%rdi), %r9\\n\\t\""),
}

# The second set (ids 101..): written from src/ and doc/DESIGN.md alone,
# without sight of the tests or of the mutants above (scripts/mutants_fresh.py).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mutants_fresh import FRESH  # noqa: E402
MUTANTS.update(FRESH)

# *_broken*: negative controls (they pass when their own planted fault is
# caught); a mutant must not be credited to them. The whole-project builds
# (clang, AArch64, options, matrix) and install checks test the build, not
# the code, and take minutes.
EXCLUDE = ("test_build_matrix|test_build_clang|test_cross_aarch64|"
           "test_configure_options|test_install|test_compile_fail|"
           "test_under_gdb|test_under_valgrind|test_fastpath_callgrind|"
           "_broken")
# First pass per mutant: the tests of its area, stopping at the first
# failure (a kill there is a kill by the default suite); a mutant that
# survives it runs the whole default subset.
COPY_FILES = ("copy/memcpy.c", "copy/calibrate.c", "copy/io.c",
              "arch/x86_64/memcpy_vec.c")
COPY_TESTS = "memcpy|calib|cpu|io"


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, text=True, capture_output=True, **kw)


def ctest(build, select):
    r = sh(f"ctest -LE torture {select} --timeout 120 -j2 --stop-on-failure",
           cwd=build)
    failed = [l.split("-", 1)[1].split("(")[0].strip()
              for l in r.stdout.splitlines() if l.startswith("\t") and " - " in l]
    return r.returncode == 0, failed


def run_suite(build, f=None):
    if f is not None:
        first = (f"-R '{COPY_TESTS}' -E '{EXCLUDE}'" if f in COPY_FILES
                 else f"-E '{EXCLUDE}|memcpy'")
        ok, failed = ctest(build, first)
        if not ok:
            return ok, failed
    return ctest(build, f"-E '{EXCLUDE}'")


def main():
    args = sys.argv[1:]
    check = args[:1] == ["--check"]	# mutate.sh: the ids, before the copy
    if check:
        args = args[1:]
    fresh = "--fresh" in args
    if "--list" in args:
        for i, m in MUTANTS.items():
            if not fresh or i in FRESH:
                print(f"{i:3}  src/{m[0]:14} {m[1]}")
        return 0
    if fresh:
        if args != ["--fresh"]:
            print("--fresh takes no ids (it runs the whole second set)",
                  file=sys.stderr)
            return 2
        args = [str(i) for i in FRESH]
    ids = [int(a) for a in args if a.isdigit() and int(a) in MUTANTS]
    if len(ids) != len(args):
        print("unknown mutant id among: " + " ".join(args) +
              " (see --list, --help)", file=sys.stderr)
        return 2
    if check:
        return 0
    repo, work = os.environ["SY_REPO"], os.environ["SY_WORK"]
    ids = ids or list(MUTANTS)
    src, build = os.path.join(work, "src"), os.path.join(work, "build")
    # every mutant must apply before anything runs
    bad = []
    for i in ids:
        f, _, old, _ = MUTANTS[i]
        text = open(os.path.join(src, "src", f)).read()
        if text.count(old) != 1:
            bad.append(i)
            print(f"mutant {i} does not apply (src/{f}: old text found "
                  f"{text.count(old)} times)")
    if bad:
        return 2
    # warnings are no errors here: a mutant may leave a helper unused
    # no relinking of every test when only the library's code changes
    qsrc, qbuild = shlex.quote(src), shlex.quote(build)
    print("building the copy and running the unmutated suite first "
          "(a few minutes)", flush=True)
    r = sh(f"cmake -S {qsrc} -B {qbuild} -G Ninja -DSWITCHYARD_BUILD_BENCH=OFF "
           "-DSWITCHYARD_WERROR=OFF -DCMAKE_LINK_DEPENDS_NO_SHARED=ON")
    if not r.returncode:
        r = sh(f"cmake --build {qbuild}")
    if r.returncode:
        print(r.stdout[-3000:] + r.stderr[-3000:])
        return 2
    ok, failed = run_suite(build)
    if not ok:
        print("baseline fails: " + ", ".join(failed))
        return 2
    print("baseline passes")
    killed = 0
    rows = []
    for i in ids:
        f, desc, old, new = MUTANTS[i]
        path = os.path.join(src, "src", f)
        orig = open(path).read()
        open(path, "w").write(orig.replace(old, new))
        try:
            r = sh(f"cmake --build {qbuild}")
            if r.returncode:
                verdict, who = "BUILD-FAIL", "(does not compile: fix the mutant)"
            else:
                ok, failed = run_suite(build, f)
                verdict = "SURVIVED" if ok else "KILLED"
                who = ", ".join(failed)
                killed += not ok
        finally:
            open(path, "w").write(orig)
        rows.append((i, desc, verdict, who))
        print(f"{i:3}  {verdict:10} {desc}: {who}", flush=True)
    print()
    print("| id | planted bug | verdict | killed by (the first tests to fail) |")
    print("| --- | --- | --- | --- |")
    for i, desc, verdict, who in rows:
        print(f"| {i} | {desc} | {verdict} | {who} |")
    print(f"\nkilled {killed} of {len(rows)}")
    sh(f"cmake --build {qbuild}")	# leave the copy unmutated
    return 2 if any(r[2] == "BUILD-FAIL" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
