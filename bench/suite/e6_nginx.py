# SPDX-License-Identifier: MIT
"""E6: nginx 1.22.1 with its debug checks as flags and as a static key (a
real server nobody here wrote).

nginx's --with-debug build has an ngx_log_debug*() check at each of some
1,300 places of its source: a test of the log's level, a branch around the
call that writes the line. bench/e6/ngx_log.h.patch puts a static key in
front of that test (the key is defined, and control of a worker asked for,
by the nginx add-on bench/e6/ngx_switchyard). Three builds of Debian's
source (the orig tarball of nginx 1.22.1, fetched and checked against the
sha256 of bookworm's .dsc, cached with the builds under
$XDG_CACHE_HOME/switchyard/bench/e6): no debug, --with-debug (flags),
--with-debug + the key. All three are configured alike, nginx's own
compiler flags, --without-http_rewrite_module --without-http_gzip_module
(no PCRE, no zlib: nothing to install, and neither is in the path of a
static file).

Not in --quick, nor in a run that names no experiment: it downloads a
source tarball (a network), builds nginx three times (about a minute
cold, cached after) and takes about 7 minutes. Ask for it by name:
`switchyard bench E6` (with --quick: fewer, shorter rounds). It needs wrk
(installed with apt-get when missing and run as root, else a SKIP), and
valgrind for its instruction counts."""
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from .lanes import BenchFailed, seed_rows
from .machine import pin_cpu
from .stats import compare, find, median, said
# the fetch and the builds; SHA256, TARBALL, VERSION, cache_dir and sha256
# are the smoke test's too (tests/bench/test_bench_e6.py)
from .e6_build import (BUILDS, FLAGS, KEYS, NODEBUG, SHA256,  # noqa: F401
                       Skip, TARBALL, VERSION, build_all, cache_dir, log,
                       need, sha256)

PROGRAMS = []   # nginx is built here, not by CMake
KEY = "ngx_debug_key"


class Config:
    """A configuration: wrk's connections (one wrk thread), keep-alive or
    a connection per request, and the requests of callgrind's short and
    long runs (per connection, round robin)."""

    def __init__(self, name, conns, close, cg):
        self.name, self.conns, self.close, self.cg = name, conns, close, cg
        self.slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


# keep-alive, wrk's default (nginx closes a connection after its 1,000th
# request: keepalive_requests); the same with 1,000 connections: nginx's
# working set (each connection its pool, buffers, log and events) well
# beyond the L2, where a flag's load can miss; a new connection per
# request: nginx's connection set-up and teardown, the densest debug path,
# every time
CONFIGS = (Config("keep-alive, 16 connections", 16, False, (100, 1100)),
           Config("keep-alive, 1,000 connections", 1000, False,
                  (1000, 3000)),
           Config("a connection per request", 16, True, (50, 550)))
CG_RUNS = 3     # callgrind runs of each count, their median taken
CTL_N = 100     # requests per path in the control demonstration
# the control demonstration's paths: requests on one connection, and a
# connection each
PATHS = (("keep-alive", False), ("a connection per request", True))


# ---- running nginx --------------------------------------------------------

def cpus():
    """(server CPU, client CPU): nginx (master and worker) on the CPU the
    suite pins to, wrk on another; (None, None) where pinning is not
    possible."""
    srv = pin_cpu()
    if srv is None:
        return None, None
    other = sorted(c for c in os.sched_getaffinity(0) if c != srv)
    return (srv, other[0]) if other else (None, None)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


CONF = """# written by bench/suite/e6_nginx.py: nginx's own conf/nginx.conf,
# its access log off (a write per request to a file growing by hundreds of
# megabytes), on a port of 127.0.0.1
worker_processes 1;
master_process {master};
daemon off;
error_log {errlog} {level};
pid {prefix}/nginx.pid;
events {{
    worker_connections 4096;
}}
http {{
    include mime.types;
    default_type application/octet-stream;
    access_log off;
    sendfile on;
    keepalive_timeout 65;
    server {{
        listen 127.0.0.1:{port};
        server_name localhost;
        location / {{
            root {html};
            index index.html index.htm;
        }}
        error_page 500 502 503 504 /50x.html;
        location = /50x.html {{
            root {html};
        }}
    }}
}}
"""


class Nginx:
    """One nginx: a prefix of its own (conf, logs, temp files) under a
    directory the workers can read (nginx started as root runs them as
    nobody, as a real server does), the tarball's html/ as its root."""

    def __init__(self, binary, src, top, name, master=True, level="notice",
                 cpu=None, env=None, valgrind=None):
        self.prefix = os.path.join(top, name)
        os.makedirs(os.path.join(self.prefix, "conf"))
        os.makedirs(os.path.join(self.prefix, "logs"))
        html = os.path.join(self.prefix, "html")
        shutil.copytree(os.path.join(src, "html"), html)
        shutil.copy(os.path.join(src, "conf", "mime.types"),
                    os.path.join(self.prefix, "conf"))
        self.port = free_port()
        self.errlog = os.path.join(self.prefix, "logs", "error.log")
        with open(os.path.join(self.prefix, "conf", "nginx.conf"), "w") as f:
            f.write(CONF.format(master="on" if master else "off",
                                errlog=self.errlog, level=level,
                                prefix=self.prefix, port=self.port,
                                html=html))
        cmd = [binary, "-p", self.prefix + "/", "-c", "conf/nginx.conf"]
        if valgrind:
            cmd = valgrind + cmd
        e = {k: v for k, v in os.environ.items()
             if not k.startswith("SWITCHYARD_")}
        e.update(env or {})

        def pre():
            os.setsid()     # its own group: stopped as one at the end
            if cpu is not None:
                os.sched_setaffinity(0, {cpu})
        self.out = open(os.path.join(self.prefix, "logs", "stderr"), "w+")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                     stdout=self.out, stderr=self.out,
                                     env=e, preexec_fn=pre)
        try:
            self.wait_up(120 if valgrind else 20)
            self.worker = self.child() if master else self.proc.pid
        except BenchFailed:
            self.stop()
            raise

    def wait_up(self, secs):
        end = time.monotonic() + secs
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                self.out.seek(0)
                raise BenchFailed(f"nginx exited {self.proc.returncode}: "
                                  + " / ".join(self.out.read().strip()
                                               .splitlines()[-3:]))
            try:
                socket.create_connection(("127.0.0.1", self.port),
                                         timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise BenchFailed(f"nginx did not listen on {self.port} in {secs} s")

    def child(self):
        """The worker: the master's one child."""
        p = self.proc.pid
        for _ in range(100):
            try:
                with open(f"/proc/{p}/task/{p}/children") as f:
                    kids = f.read().split()
            except OSError:
                kids = []
            if kids:
                return int(kids[0])
            time.sleep(0.05)
        raise BenchFailed("nginx started no worker")

    def cpu_ns(self):
        """The worker's time on a CPU so far, ns (user and kernel)."""
        with open(f"/proc/{self.worker}/schedstat") as f:
            return int(f.read().split()[0])

    def stop(self):
        """SIGQUIT: nginx's graceful shutdown (callgrind writes its counts
        at the exit); the group killed if it hangs."""
        for _ in range(60):
            if self.proc.poll() is not None:
                break
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                # a signal that lands between nginx's check of its flags
                # and epoll_wait() with no timer waits for the next event
                # (valgrind, which delivers signals at its own points,
                # makes that window wide): a connection is one
                try:
                    socket.create_connection(("127.0.0.1", self.port),
                                             timeout=1).close()
                except OSError:
                    pass
        else:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.out.close()


def wrk_round(wrk, srv, secs, cfg, cpu):
    """One wrk run against srv: (requests/s, worker us per request)."""
    cmd = [wrk, "-t1", f"-c{cfg.conns}", f"-d{secs}s"]
    if cfg.close:
        cmd += ["-H", "Connection: close"]
    cmd.append(f"http://127.0.0.1:{srv.port}/")
    t0 = srv.cpu_ns()
    p = subprocess.run(cmd, capture_output=True, text=True,
                       timeout=secs + 60,
                       preexec_fn=(lambda: os.sched_setaffinity(0, {cpu}))
                       if cpu is not None else None)
    t1 = srv.cpu_ns()
    got = parse_wrk(p.stdout) if p.returncode == 0 else None
    if not got:
        raise BenchFailed(f"wrk {' '.join(cmd[1:])}: exit {p.returncode}: "
                          + " / ".join((p.stdout + p.stderr).strip()
                                       .splitlines()[-3:]))
    n, rps = got
    return rps, (t1 - t0) / 1e3 / n


def parse_wrk(out):
    """(requests, requests/s) from wrk's report; None when it has none or
    counts any answer other than 2xx or 3xx."""
    n = re.search(r"(\d+) requests in", out)
    rps = re.search(r"Requests/sec:\s*([\d.]+)", out)
    if not n or not rps or int(n.group(1)) == 0 or \
            "Non-2xx or 3xx responses" in out:
        return None
    return int(n.group(1)), float(rps.group(1))


def get(port, n, close, conns=1):
    """n GET / over conns keep-alive connections in turn (one reconnected
    when nginx closes it), or a connection each; checks each status."""
    req = (b"GET / HTTP/1.1\r\nHost: localhost\r\n" +
           (b"Connection: close\r\n" if close else b"") + b"\r\n")
    socks = [None] * conns
    bufs = [b""] * conns
    try:
        for i in range(n):
            k = i % conns
            if socks[k] is None:
                socks[k] = socket.create_connection(("127.0.0.1", port),
                                                    timeout=60)
                bufs[k] = b""
            s, buf = socks[k], bufs[k]
            s.sendall(req)
            while b"\r\n\r\n" not in buf:
                d = s.recv(65536)
                if not d:
                    raise BenchFailed("nginx closed a connection "
                                      "mid-response")
                buf += d
            head, buf = buf.split(b"\r\n\r\n", 1)
            if not head.startswith(b"HTTP/1.1 200"):
                raise BenchFailed(f"nginx answered {head.splitlines()[0]!r}")
            m = re.search(rb"\r\ncontent-length: *(\d+)", head, re.I)
            length = int(m.group(1)) if m else 0
            while len(buf) < length:
                d = s.recv(65536)
                if not d:
                    raise BenchFailed("nginx closed a connection mid-body")
                buf += d
            bufs[k] = buf[length:]
            if close or re.search(rb"\r\nconnection: *close", head, re.I):
                s.close()
                socks[k] = None
    finally:
        for s in socks:
            if s:
                s.close()


# ---- the lanes ------------------------------------------------------------

def clock(builds, src, top, wrk, rounds, secs):
    """Interleaved rounds: per round, per configuration, each build in turn
    (A B C A B C ...), all three servers up throughout."""
    srv_cpu, cli_cpu = cpus()
    servers = {}
    recs = {}
    try:
        for v, slug in BUILDS:
            servers[v] = Nginx(builds[v], src, top, f"clock-{slug}",
                               cpu=srv_cpu)
        for cfg in CONFIGS:     # warm-up, not kept
            for v, _ in BUILDS:
                wrk_round(wrk, servers[v], 1, cfg, cli_cpu)
        for r in range(rounds):
            for cfg in CONFIGS:
                for v, _ in BUILDS:
                    rps, us = wrk_round(wrk, servers[v], secs, cfg,
                                        cli_cpu)
                    recs.setdefault((cfg.name, "requests/s", v),
                                    []).append(rps)
                    recs.setdefault((cfg.name, "us/request", v),
                                    []).append(us)
    finally:
        for s in servers.values():
            s.stop()
    out = []
    for cfg in CONFIGS:
        for unit, what in (("requests/s", "requests/s"),
                           ("us/request", "worker CPU per request")):
            for v, _ in BUILDS:
                out.append({"loop": f"{cfg.name}: {what}", "variant": v,
                            "unit": unit,
                            "samples": recs[(cfg.name, unit, v)]})
    return out, srv_cpu, cli_cpu


def cg_total(path):
    with open(path) as f:
        for line in f:
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
    raise BenchFailed(f"{path}: no totals line")


def cg_run(binary, src, top, valgrind, name, n, cfg):
    """One nginx (master_process off) under callgrind serving n requests:
    its instruction count. A run that fails is tried once more (a port
    taken between free_port() and nginx's bind, a machine too busy), and
    says why if it fails again."""
    why = None
    for attempt in (1, 2):
        cgf = os.path.join(top, f"{name}-{attempt}.out")
        srv = None
        try:
            srv = Nginx(binary, src, top, f"{name}-{attempt}", master=False,
                        valgrind=[valgrind, "--tool=callgrind",
                                  "--smc-check=all",
                                  f"--callgrind-out-file={cgf}"])
            # the wait for the port made a connection: the same in every
            # run, it cancels out
            get(srv.port, n, cfg.close, 1 if cfg.close else cfg.conns)
            srv.stop()
            return cg_total(cgf)
        except (OSError, BenchFailed) as e:
            why = str(e)
            if srv:
                srv.stop()
                with open(srv.out.name) as f:
                    why += " (valgrind: " + " / ".join(
                        f.read().strip().splitlines()[-3:]) + ")"
        log(f"callgrind run {name} failed: {why}")
    raise BenchFailed(f"callgrind: {why}")


def callgrind(builds, src, top, valgrind):
    """Instructions per request: nginx as one process (master_process
    off) under callgrind, serving n1 and then n2 requests, three runs of
    each (the event loop's timing moves a count by a few thousand);
    per request = (I(n2) - I(n1)) / (n2 - n1) from the medians: start-up
    and exit cancel out. {(configuration, variant): (per request,
    start-up and exit)}."""
    out = {}
    for cfg in CONFIGS:
        n1, n2 = cfg.cg
        for v, slug in BUILDS:
            tot = []
            for n in (n1, n2):
                tot.append(median([cg_run(
                    builds[v], src, top, valgrind,
                    f"cg-{slug}-{cfg.slug}-{n}-{k}", n, cfg)
                    for k in range(CG_RUNS)]))
            per = (tot[1] - tot[0]) / (n2 - n1)
            out[(cfg.name, v)] = (per, tot[0] - n1 * per)
    return out


def tool(bindir):
    for c in (os.path.join(bindir, "..", "tools", "switchyard"),
              os.path.join(bindir, "..", "..", "..", "bin", "switchyard"),
              shutil.which("switchyard") or ""):
        if c and os.access(c, os.X_OK):
            return os.path.normpath(c)
    return None


def sites(sy, pid):
    """The key in process pid, from `switchyard list --json PID`:
    {"enabled", "sites", "jumping" (sites that jump now), "first" (the
    first site: function+offset and its bytes)}."""
    p = subprocess.run([sy, "list", "--json", str(pid)],
                       capture_output=True, text=True, timeout=60)
    if p.returncode:
        raise BenchFailed(f"switchyard list {pid}: {p.stderr.strip()}")
    for k in json.loads(p.stdout).get("keys", []):
        if k.get("name") == KEY:
            ss = k.get("site_list") or []
            f = ss[0] if ss else {}
            return {"enabled": bool(k.get("enabled")),
                    "sites": k.get("sites"),
                    "jumping": sum(1 for s in ss if s.get("jumps")),
                    "first": f"{f.get('function')}+{f.get('offset', 0):#x} "
                             f"[{f.get('bytes')}]"}
    raise BenchFailed(f"switchyard list {pid}: no key {KEY}")


def debug_lines(path):
    with open(path, errors="replace") as f:
        return sum(1 for line in f if "[debug]" in line)


def set_key(sy, pid, state):
    """`switchyard set PID KEY on|off`, or BenchFailed with its message."""
    p = subprocess.run([sy, "set", str(pid), KEY, state],
                       capture_output=True, text=True, timeout=60)
    if p.returncode:
        raise BenchFailed(f"switchyard set {pid} {KEY} {state}: "
                          f"{p.stderr.strip()}")


def control(bindir, builds, src, top):
    """The keyed nginx as a server runs: master and one worker (as nobody
    when started as root), SWITCHYARD_CONTROL=1, error_log at debug level.
    The worker's key listed, turned on and off with the tool, the debug
    lines of its log counted per request on both paths. A dict for the
    report, or None with why not."""
    sy = tool(bindir)
    if not sy:
        return None, "the switchyard tool was not found"
    srv = Nginx(builds[KEYS], src, top, "control", level="debug",
                env={"SWITCHYARD_CONTROL": "1"})
    n = CTL_N
    res = {"worker": srv.worker, "master": srv.proc.pid}
    try:
        res["before"] = sites(sy, srv.worker)
        d0 = debug_lines(srv.errlog)
        for _, close in PATHS:
            get(srv.port, n, close)
        res["lines_off"] = debug_lines(srv.errlog) - d0
        set_key(sy, srv.worker, "on")
        res["after"] = sites(sy, srv.worker)
        res["master_after"] = sites(sy, srv.proc.pid)
        for path, close in PATHS:
            d0 = debug_lines(srv.errlog)
            get(srv.port, n, close)
            res[f"lines_on {path}"] = (debug_lines(srv.errlog) - d0) / n
        set_key(sy, srv.worker, "off")
        res["off_again"] = sites(sy, srv.worker)
        d0 = debug_lines(srv.errlog)
        get(srv.port, n, False)
        res["lines_off_again"] = debug_lines(srv.errlog) - d0
    finally:
        srv.stop()
    # what has to hold: off, no site jumps and no debug line is written;
    # on, every site of the worker jumps and the lines come, the master's
    # key untouched
    b, a, m, o = (res[k] for k in ("before", "after", "master_after",
                                   "off_again"))
    bad = [w for w, ok in (
        ("off at start", not b["enabled"] and b["jumping"] == 0),
        ("on after set", a["enabled"] and a["jumping"] == a["sites"] > 0),
        ("the master's key left off", not m["enabled"]),
        ("no debug line while off", res["lines_off"] == 0 and
         res["lines_off_again"] == 0),
        ("debug lines while on", all(res[f"lines_on {p}"] > 0
                                     for p, _ in PATHS)),
        ("off again", not o["enabled"] and o["jumping"] == 0)) if not ok]
    res["failed"] = bad
    if bad:
        log(f"control: FAILED: not {', not '.join(bad)}")
    return res, None


def text_bytes(path):
    """.text of an ELF file (size -A)."""
    p = subprocess.run(["size", "-A", path], capture_output=True, text=True)
    m = re.search(r"^\.text\s+(\d+)", p.stdout, re.M)
    return float(m.group(1)) if m else None


def static_row(name, unit, v, lane="static"):
    return {"name": name, "unit": unit, "median": v, "ci_low": v,
            "ci_high": v, "n": 1, "outliers": 0, "lane": lane}


# ---- the experiment -------------------------------------------------------

def run(bindir, quick, tmp):
    """Requests/s and the worker's CPU time per request, from wrk (one
    thread) on one CPU against nginx (master and one worker) on the other,
    in interleaved rounds (15 of 2 s; --quick 5 of 1 s), in three
    configurations (CONFIGS); instructions per request from callgrind;
    .text bytes and key sites; the key turned on and off in a running
    worker with the switchyard tool."""
    title = ("nginx with its debug checks as flags and as keys "
             f"(nginx {VERSION}, wrk; callgrind; control of a worker)")
    try:
        wrk = need("wrk", "wrk")
        builds, src = build_all(bindir)
    except Skip as e:
        log(f"SKIP: {e}")
        return {"id": "E6", "seed": "-", "title": title, "rows": [],
                "comparisons": [], "verdict": f"SKIP: {e}"}
    rounds, secs = (5, 1) if quick else (15, 2)
    # 1,000 connections: a descriptor each in wrk, nginx and the callgrind
    # client (all children of this process), beyond a soft limit of 1,024
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 8192 if hard == resource.RLIM_INFINITY else min(hard, 8192)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    # a directory nginx's workers can read when they run as nobody
    top = tempfile.mkdtemp(prefix="sy-e6-", dir=tmp)
    os.chmod(tmp, 0o755)
    os.chmod(top, 0o755)
    log(f"{rounds} rounds of {secs} s x {len(CONFIGS)} configurations x "
        f"{len(BUILDS)} builds")
    recs, srv_cpu, cli_cpu = clock(builds, src, top, wrk, rounds, secs)
    rows, comps, aa = seed_rows(recs)
    got = {f"{r['loop']}: {r['variant']}": r["samples"] for r in recs}
    for cfg in CONFIGS:
        for what in ("requests/s", "worker CPU per request"):
            a = f"{cfg.name}: {what}: {KEYS}"
            b = f"{cfg.name}: {what}: {FLAGS}"
            comps.append(dict(compare(a, got[a], b, got[b]), lane="clock"))
    valgrind = shutil.which("valgrind")
    cg, cg_why = {}, "valgrind not installed"
    if valgrind:
        log("callgrind: instructions per request")
        try:
            cg = callgrind(builds, src, top, valgrind)
        except BenchFailed as e:
            cg_why = str(e)
        for (cfg, v), (per, start) in cg.items():
            rows.append(static_row(f"{cfg}: instructions per request: {v}",
                                   "instructions/request", per, "callgrind"))
        for (cfg, v), (per, start) in cg.items():
            if cfg == CONFIGS[0].name:
                rows.append(static_row(f"start-up and exit: {v}",
                                       "instructions", start, "callgrind"))
    for v, _ in BUILDS:
        t = text_bytes(builds[v])
        if t is not None:
            rows.append(static_row(f".text: {v}", "bytes", t))
    log("control of a running worker")
    try:
        ctl, why = control(bindir, builds, src, top)
    except (OSError, BenchFailed) as e:
        ctl, why = None, str(e)
    if ctl:
        rows.append(static_row(f"key sites in the binary ({KEY})", "sites",
                               float(ctl["before"]["sites"])))
        for path, _ in PATHS:
            rows.append(static_row(
                f"{path}: debug lines per request, key on, error_log debug",
                "lines/request", ctl[f"lines_on {path}"], "control"))
    pin = (f"nginx (master and worker) pinned to CPU {srv_cpu}, wrk to CPU "
           f"{cli_cpu}" if srv_cpu is not None else "unpinned (one CPU or "
           "pinning refused)")
    cgn = "; ".join(f"{c.name}: {c.cg[0]:,} and {c.cg[1]:,}"
                    for c in CONFIGS)
    note = (
        f"nginx {VERSION} (Debian's orig tarball, sha256 {SHA256[:16]}...), "
        "built three ways by nginx's own configure and compiler flags (-O), "
        "all --without-http_rewrite_module --without-http_gzip_module: no "
        "debug; --with-debug (each ngx_log_debug*() site tests its log's "
        "level: a test of memory and a branch); --with-debug with "
        "bench/e6/ngx_log.h.patch and the add-on bench/e6/ngx_switchyard "
        f"({KEY} in front of that test; off, a site is one 2-byte TEST that "
        "does not branch). One patched source tree for the three. Clock "
        "lane: each build an nginx with master_process on and "
        f"worker_processes 1, {pin}; wrk -t1 for {secs} s per sample, "
        f"{rounds} interleaved rounds (per round and configuration each "
        "build in turn, the three servers up throughout, one warm-up run "
        "each), nginx's shipped nginx.conf serving its index.html (615 "
        "bytes) with the access log off. Configurations: keep-alive with "
        "16 connections (wrk's default; nginx closes a connection after "
        "1,000 requests); keep-alive with 1,000 connections (the pressure on "
        "caches: nginx's working set, each connection its pool, buffers, "
        "log and events, well beyond the L2, where a flag's load can miss "
        "as in E1's dense case); a new connection per request (16 at a "
        "time, Connection: close: the accept, set-up and teardown path, "
        "where nginx's debug sites are densest, every time). Worker CPU per "
        "request: the worker's time on a CPU (/proc/PID/schedstat: user "
        "and kernel, its share of the TCP work included) over wrk's request "
        "count: what the server spends, whichever side limits the rate. "
        "Callgrind lane: nginx as one process (master_process off) under "
        "valgrind --tool=callgrind --smc-check=all, serving n1 then n2 "
        f"requests (round robin over the configuration's connections; {cgn}"
        f") from a client of the suite, {CG_RUNS} runs of each, their "
        "medians: per request (I(n2) - I(n1)) / (n2 - n1), nginx's "
        "user-space instructions and its libraries', none of the kernel's; "
        "start-up and exit what is left of I(n1) (the keyed build's "
        f"includes the library registering and writing the {KEY} sites: "
        "each is emitted as a jump, `switchyard prepatch` would write the "
        "TEST into the file). Static lane: size -A; the key's sites "
        "(switchyard list PID). Control lane: debug lines written per "
        f"request ({CTL_N} requests) with the key on and error_log at "
        "debug, every check passing: the checks a request runs")
    return {"id": "E6", "seed": "-", "title": title, "rows": rows,
            "comparisons": comps, "aa": aa, "lane_note": note,
            "control": ctl,
            "verdict": verdict(comps, cg, cg_why, ctl, why)}


def verdict(comps, cg, cg_why, ctl, why):
    parts = []
    w = "worker CPU per request"
    for cfg in CONFIGS:
        def r(a, b, what="requests/s"):
            return said(find(comps, f"{cfg.name}: {what}: {a}",
                             f"{cfg.name}: {what}: {b}"))
        s = (f"{cfg.name}: requests/s flags vs no debug "
             f"{r(FLAGS, NODEBUG)}, keys vs flags {r(KEYS, FLAGS)}, keys vs "
             f"no debug {r(KEYS, NODEBUG)}; worker CPU per request flags vs "
             f"no debug {r(FLAGS, NODEBUG, w)}, keys vs flags "
             f"{r(KEYS, FLAGS, w)}")
        if cg:
            nd, fl, ky = (cg[(cfg.name, v)][0]
                          for v in (NODEBUG, FLAGS, KEYS))
            s += (f"; user-space instructions per request {nd:,.0f} / "
                  f"{fl:,.0f} / {ky:,.0f} (no debug / flags / keys: "
                  f"flags {fl - nd:+,.0f}, {100 * (fl - nd) / nd:+.1f}%; "
                  f"keys {ky - nd:+,.0f}, {100 * (ky - nd) / nd:+.1f}%)")
        parts.append(s)
    out = ". ".join(parts) + "."
    if not cg:
        out += f" Instructions per request not measured: {cg_why}."
    if ctl:
        def st(x):
            return (f"{'on' if x['enabled'] else 'off'}, {x['jumping']} of "
                    f"{x['sites']} sites jumping, the first {x['first']}")
        out += (f" Control: the running worker (PID {ctl['worker']}, its "
                f"master {ctl['master']}) through its socket: `switchyard "
                f"list PID`: {KEY} {st(ctl['before'])}; `switchyard set PID "
                f"{KEY} on`: {st(ctl['after'])} (the master's: "
                f"{st(ctl['master_after'])}); debug lines in the error log "
                f"(error_log debug): {ctl['lines_off']} in "
                f"{len(PATHS) * CTL_N} requests while off, with it on "
                + ", ".join(f"{ctl['lines_on ' + p]:.1f} per request ({p})"
                            for p, _ in PATHS)
                + f"; set off again: {st(ctl['off_again'])}, "
                f"{ctl['lines_off_again']} lines in {CTL_N} requests"
                + (f". Control FAILED: not {', not '.join(ctl['failed'])}."
                   if ctl["failed"] else ": as expected."))
    else:
        out += f" Control not shown: {why}."
    # what it means, from the first configuration's figures
    c0 = CONFIGS[0].name
    ka = find(comps, f"{c0}: {w}: {FLAGS}", f"{c0}: {w}: {NODEBUG}")
    if ka:
        out += (f" In short: a syscall-bound server; the debug checks as "
                f"flags change the worker's CPU per request by "
                f"{100 * (ka['ratio'] - 1):+.1f}% ({c0}, "
                + ("not significant)" if ka["verdict"] == "~" else
                   f"p = {ka['p_value']:.2g})"))
        if cg and ctl:
            nd, fl, ky = (cg[(c0, v)][0] for v in (NODEBUG, FLAGS, KEYS))
            n = ctl[f"lines_on {PATHS[0][0]}"]
            out += (f"; in user space the debug build adds {fl - nd:,.0f} "
                    f"instructions per request, of which the key removes "
                    f"{fl - ky:,.0f} ({(fl - ky) / n:.1f} per check, "
                    f"{n:.0f} checks a request): the rest is debug code "
                    "that runs whether or not a line is written, out of "
                    "the key's reach")
        out += "."
    return out
