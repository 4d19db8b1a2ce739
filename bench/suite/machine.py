# SPDX-License-Identifier: MIT
"""The machine record of every report: CPU, flags, kernel, libc,
compiler, governor/turbo where readable, hardware counters or not."""
import os
import platform
import re
import shutil
import subprocess


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True,
                              timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def perf_counters():
    """Whether perf_event_open gives hardware counters here."""
    if not shutil.which("perf"):
        return "no perf tool"
    out = run(["perf", "stat", "-x,", "-e", "cycles,instructions", "true"])
    out += run(["sh", "-c", "perf stat -x, -e cycles true 2>&1 >/dev/null"])
    if "not supported" in out or "<not" in out or not re.search(r"^\d+,", out, re.M):
        return "not available (cycles not supported: a VM without a PMU)"
    return "available"


def pin_cpu():
    """The CPU single-threaded benchmark programs are pinned to: the last
    one this process may run on (CPU 0 takes more of the machine's
    interrupts), or None where pinning is not allowed (a cpuset that
    refuses it) or pointless (one CPU). Tried on this process and undone."""
    try:
        allowed = os.sched_getaffinity(0)
        if len(allowed) < 2:
            return None
        cpu = max(allowed)
        os.sched_setaffinity(0, {cpu})
        os.sched_setaffinity(0, allowed)
        return cpu
    except (AttributeError, OSError):
        return None


def pinned(cpu):
    """A preexec_fn pinning the child to cpu (None: no pinning)."""
    if cpu is None:
        return None
    return lambda: os.sched_setaffinity(0, {cpu})


def machine(bindir):
    cpu = flags = None
    cores = 0
    for line in (read("/proc/cpuinfo") or "").splitlines():
        if line.startswith("model name") and cpu is None:
            cpu = line.split(":", 1)[1].strip()
        if line.startswith("flags") and flags is None:
            flags = line.split(":", 1)[1].split()
        if line.startswith("processor"):
            cores += 1
    fam = re.search(r"cpu family\s*:\s*(\d+)", read("/proc/cpuinfo") or "")
    mod = re.search(r"^model\s*:\s*(\d+)", read("/proc/cpuinfo") or "", re.M)
    cache = os.path.join(bindir, "..", "CMakeCache.txt")
    cc, cflags = None, None
    for line in (read(cache) or "").splitlines():
        if line.startswith("CMAKE_C_COMPILER:"):
            cc = line.split("=", 1)[1]
        if line.startswith("CMAKE_C_FLAGS_RELEASE:") or \
           (line.startswith("CMAKE_BUILD_TYPE:") and cflags is None):
            cflags = line.split("=", 1)[1]
    return {
        "cpu": f"{cpu} (family {fam.group(1) if fam else '?'}, "
               f"model {mod.group(1) if mod else '?'})",
        "flags": flags or [],
        "cores": cores,
        "kernel": platform.release(),
        "libc": " ".join(platform.libc_ver()),
        "compiler": (run([cc or "cc", "--version"]).splitlines() or ["?"])[0],
        "build": cflags,
        "governor": read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
                    or "not readable (no cpufreq: a VM)",
        "turbo": read("/sys/devices/system/cpu/intel_pstate/no_turbo")
                 or "not readable",
        "perf_counters": perf_counters(),
        "pinning": (f"single-threaded programs pinned to CPU {pin_cpu()}; "
                    "multi-threaded ones pin their own threads or run "
                    "unpinned (said per experiment)"
                    if pin_cpu() is not None else "not allowed or one CPU: "
                    "unpinned"),
    }
