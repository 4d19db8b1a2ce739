# SPDX-License-Identifier: MIT
"""E6's nginx: the pinned source fetched and checked, patched, and built
three ways (no debug, debug checks as flags, as a static key) in the
user's cache; the experiment itself is e6_nginx.py."""
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request

from .lanes import BenchFailed

VERSION = "1.22.1"
TARBALL = f"nginx_{VERSION}.orig.tar.gz"
# Checksums-Sha256 of nginx_1.22.1-9+deb12u9.dsc (bookworm)
SHA256 = "9ebb333a9e82b952acd3e2b4aeb1d4ff6406f72491bab6cd9fe69f0dea737f31"
URL = f"https://deb.debian.org/debian/pool/main/n/nginx/{TARBALL}"
COMMON = ["--without-http_rewrite_module", "--without-http_gzip_module"]
NODEBUG = "no debug"
FLAGS = "debug checks as flags"
KEYS = "debug checks as a static key"
BUILDS = ((NODEBUG, "nodebug"), (FLAGS, "flags"), (KEYS, "keys"))

def log(msg):
    print(f"== E6: {msg}", file=sys.stderr, flush=True)


class Skip(Exception):
    """Something E6 needs is missing: the experiment says SKIP and why."""


# ---- fetching and building ------------------------------------------------

def cache_dir():
    return os.path.join(os.environ.get("XDG_CACHE_HOME") or
                        os.path.join(os.path.expanduser("~"), ".cache"),
                        "switchyard", "bench", "e6")


def blank_free(*paths):
    """The paths as they are, or, where one holds a blank, each through a
    symbolic link in a new private directory (mkdtemp: mode 0700, a
    random name) under /tmp, which is kept."""
    if not any(any(c.isspace() for c in p) for p in paths):
        return paths
    d = tempfile.mkdtemp(prefix="switchyard-e6-", dir="/tmp")
    out = []
    for i, p in enumerate(paths):
        link = os.path.join(d, str(i))
        os.symlink(os.path.abspath(p), link)
        out.append(link)
    log(f"paths with blanks (which nginx's configure refuses) given "
        f"blank-free names in {d}")
    return tuple(out)


def e6_dir(bindir):
    """bench/e6 (the patch and the add-on): beside suite/ in a source tree
    and an install, else under the source directory a build tree's
    CMakeCache.txt names."""
    cands = [os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "e6")]
    src = cmake_home(bindir)
    if src:
        cands.append(os.path.join(src, "bench", "e6"))
    return next((c for c in cands
                 if os.path.exists(os.path.join(c, "ngx_log.h.patch"))),
                None)


def cmake_home(bindir):
    try:
        with open(os.path.join(bindir, "..", "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("CMAKE_HOME_DIRECTORY:"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return None


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 16), b""):
            h.update(b)
    return h.hexdigest()


def fetch(cache):
    """The pinned tarball, downloaded once (or put there by hand)."""
    path = os.path.join(cache, TARBALL)
    if os.path.exists(path) and sha256(path) == SHA256:
        return path
    log(f"downloading {URL}")
    part = path + ".part"
    try:
        with urllib.request.urlopen(URL, timeout=120) as r, \
                open(part, "wb") as f:
            shutil.copyfileobj(r, f)
    except OSError as e:
        raise Skip(f"cannot download {URL} ({e}); put the file in {cache} "
                   f"(sha256 {SHA256})")
    got = sha256(part)
    if got != SHA256:
        os.unlink(part)
        raise BenchFailed(f"{URL}: sha256 {got}, expected {SHA256}")
    os.replace(part, path)
    return path


def switchyard_dev(bindir):
    """(include directory, library directory) of the switchyard that
    built bindir's programs: a build tree's sources and library, or an
    install's (its switchyard.pc)."""
    src = cmake_home(bindir)
    build = os.path.abspath(os.path.join(bindir, ".."))
    if src:
        if not os.path.exists(os.path.join(build, "libswitchyard.so")):
            subprocess.run(["cmake", "--build", build, "--target",
                            "switchyard"], stdout=sys.stderr)
        if os.path.exists(os.path.join(build, "libswitchyard.so")):
            return os.path.join(src, "include"), build
        raise BenchFailed(f"no libswitchyard.so in {build}")
    # an install: <prefix>/libexec/switchyard/bench
    prefix = os.path.abspath(os.path.join(bindir, "..", "..", ".."))
    for pc in sorted(glob.glob(os.path.join(prefix, "lib*", "pkgconfig",
                                            "switchyard.pc")) +
                     glob.glob(os.path.join(prefix, "lib", "*", "pkgconfig",
                                            "switchyard.pc"))):
        var = {"pcfiledir": os.path.dirname(pc)}     # a relocatable .pc
        with open(pc) as f:
            for line in f:
                m = re.match(r"(\w+)=(.*)", line.strip())
                if m:
                    var[m.group(1)] = re.sub(r"\$\{(\w+)\}",
                                             lambda x: var.get(x.group(1),
                                                               ""),
                                             m.group(2))
        if "libdir" in var and "includedir" in var:
            return (os.path.normpath(var["includedir"]),
                    os.path.normpath(var["libdir"]))
    raise Skip(f"no switchyard.pc under {prefix}")


def tree_hash(paths):
    h = hashlib.sha256()
    for p in paths:
        for root, dirs, files in sorted(os.walk(p)) if os.path.isdir(p) \
                else [(os.path.dirname(p), [], [os.path.basename(p)])]:
            dirs.sort()
            for n in sorted(files):
                h.update(n.encode())
                with open(os.path.join(root, n), "rb") as f:
                    h.update(f.read())
    return h.hexdigest()


def need(tool, pkg):
    """The path of tool; apt-get installs it when missing and allowed (as
    root, with apt-get); else Skip."""
    path = shutil.which(tool)
    if path:
        return path
    if os.geteuid() == 0 and shutil.which("apt-get"):
        log(f"{tool} not installed: apt-get install -y {pkg}")
        subprocess.run(["apt-get", "install", "-y", pkg], stdout=sys.stderr,
                       env=dict(os.environ,
                                DEBIAN_FRONTEND="noninteractive"))
        path = shutil.which(tool)
    if not path:
        raise Skip(f"{tool} not installed (Debian package {pkg})")
    return path


def build_all(bindir):
    """The three nginx builds: {variant: path of the nginx binary}, and the
    patched source tree. One patched tree, three build directories
    (configure --builddir): without NGX_SWITCHYARD the patched macros
    expand as before."""
    for tool, pkg in (("cc", "gcc"), ("make", "make"), ("patch", "patch")):
        need(tool, pkg)
    e6 = e6_dir(bindir)
    if not e6:
        raise BenchFailed("bench/e6 (the patch and the nginx add-on) not "
                          "found")
    cache = cache_dir()
    os.makedirs(cache, exist_ok=True)
    tgz = fetch(cache)
    inc, lib = switchyard_dev(bindir)
    mine = tree_hash([os.path.join(e6, "ngx_log.h.patch"),
                      os.path.join(e6, "ngx_switchyard")])
    src = os.path.join(cache, f"nginx-{VERSION}-{mine[:12]}")
    if not os.path.exists(os.path.join(src, ".e6-patched")):
        log(f"unpacking and patching nginx {VERSION} in {src}")
        shutil.rmtree(src, ignore_errors=True)
        tmp = tempfile.mkdtemp(dir=cache)
        with tarfile.open(tgz) as t:
            if hasattr(tarfile, "data_filter"):
                t.extractall(tmp, filter="data")
            else:
                t.extractall(tmp)
        os.replace(os.path.join(tmp, f"nginx-{VERSION}"), src)
        os.rmdir(tmp)
        with open(os.path.join(e6, "ngx_log.h.patch")) as f:
            p = subprocess.run(["patch", "-p1", "-s"], cwd=src, stdin=f,
                               capture_output=True, text=True)
        if p.returncode:
            raise BenchFailed(f"ngx_log.h.patch does not apply: "
                              f"{(p.stdout + p.stderr).strip()}")
        open(os.path.join(src, ".e6-patched"), "w").close()
    # the keyed build depends on switchyard's headers (how a site is
    # emitted); the library is loaded at run time (RUNPATH)
    hdrs = tree_hash([os.path.join(inc, "switchyard")])
    # nginx's configure takes no blank in a path (--builddir, -I, -L,
    # --add-module: "the invalid value"); where one has one, it is given
    # a blank-free name: a symbolic link in a new private directory under
    # /tmp, kept (the keyed build's RUNPATH names it; a later run makes a
    # new one and rebuilds: the stamp holds the arguments)
    bsrc, inc, lib, e6m = blank_free(src, inc, lib, e6)
    out = {}
    for variant, slug in BUILDS:
        args = list(COMMON)
        if slug != "nodebug":
            args.append("--with-debug")
        if slug == "keys":
            args += [f"--add-module={os.path.join(e6m, 'ngx_switchyard')}",
                     f"--with-cc-opt=-I{inc}",
                     f"--with-ld-opt=-L{lib} -Wl,-rpath,{lib}"]
        bdir = os.path.join(src, f"objs-{slug}")
        stamp = json.dumps({"args": args,
                            "headers": hdrs if slug == "keys" else None})
        nginx = os.path.join(bdir, "nginx")
        try:
            with open(os.path.join(bdir, ".e6-stamp")) as f:
                if f.read() == stamp and os.path.exists(nginx):
                    out[variant] = nginx
                    continue
        except OSError:
            pass
        log(f"building nginx: {variant}")
        shutil.rmtree(bdir, ignore_errors=True)
        blank_bdir = os.path.join(bsrc, f"objs-{slug}")
        for cmd in (["./configure", f"--builddir={blank_bdir}", *args],
                    ["make", "-f", os.path.join(blank_bdir, "Makefile"),
                     "-j2"]):
            p = subprocess.run(cmd, cwd=bsrc, capture_output=True, text=True)
            if p.returncode:
                tail = (p.stdout + p.stderr).strip().splitlines()[-5:]
                raise BenchFailed(f"nginx {variant}: {cmd[0]} failed: "
                                  + " / ".join(tail))
        with open(os.path.join(bdir, ".e6-stamp"), "w") as f:
            f.write(stamp)
        out[variant] = nginx
    return out, src
