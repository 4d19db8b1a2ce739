# SPDX-License-Identifier: MIT
"""The machine record of every report: CPU, flags, kernel, libc,
compiler, governor/turbo where readable, hardware counters or not."""
import ctypes
import errno
import os
import platform
import re
import struct
import subprocess
import sys


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


# The events of bench/common/perfctr.h (its table, in its order): name, type,
# config, hardware or not. PERF_TYPE_HARDWARE 0, SOFTWARE 1, HW_CACHE 3;
# L1I read misses: L1I (1) | OP_READ (0) << 8 | RESULT_MISS (1) << 16.
PERF_EVENTS = [("cycles", 0, 0, True), ("instructions", 0, 1, True),
               ("branches", 0, 4, True), ("branch-misses", 0, 5, True),
               ("L1-icache-load-misses", 3, 0x10001, True),
               ("page-faults", 1, 2, False), ("task-clock", 1, 1, False),
               ("minor-faults", 1, 5, False)]
PERF_NR = {"x86_64": 298, "aarch64": 241, "riscv64": 241}


def perf_probe():
    """Each event of bench/common/perfctr.h opened alone, as the programs open
    it (the calling thread, user space, disabled), and closed: {name:
    "opened" or the errno's name}; None where it cannot be asked (no
    syscall number known here, a big-endian attr layout)."""
    nr = PERF_NR.get(platform.machine())
    if nr is None or sys.byteorder != "little":
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    libc.syscall.restype = ctypes.c_long
    got = {}
    for name, typ, config, _ in PERF_EVENTS:
        # struct perf_event_attr, PERF_ATTR_SIZE_VER0 (64 bytes): type,
        # size, config; the flag bits at offset 40: disabled (bit 0),
        # exclude_kernel (5), exclude_hv (6), as perfctr.h sets them
        attr = bytearray(64)
        struct.pack_into("<IIQ", attr, 0, typ, 64, config)
        struct.pack_into("<Q", attr, 40, 1 | 1 << 5 | 1 << 6)
        buf = ctypes.create_string_buffer(bytes(attr), 64)
        fd = libc.syscall(ctypes.c_long(nr), buf, ctypes.c_int(0),
                          ctypes.c_int(-1), ctypes.c_int(-1),
                          ctypes.c_ulong(8))  # PERF_FLAG_FD_CLOEXEC
        if fd >= 0:
            os.close(fd)
            got[name] = "opened"
        else:
            got[name] = errno.errorcode.get(ctypes.get_errno(), "?")
    return got


def perf_counters(probe=None):
    """Whether perf_event_open gives hardware counters here, and which
    events open (perf_probe(), or the probe given)."""
    p = perf_probe() if probe is None else probe
    if not p:
        return "not probed (perf_event_open's number unknown here)"
    hw = [n for n, _, _, h in PERF_EVENTS if h]
    sw = [n for n, _, _, h in PERF_EVENTS if not h]
    hw_ok = [n for n in hw if p.get(n) == "opened"]
    sw_ok = [n for n in sw if p.get(n) == "opened"]
    hw_no = [f"{n}: {p.get(n)}" for n in hw if p.get(n) != "opened"]
    paranoid = read("/proc/sys/kernel/perf_event_paranoid")
    tail = f"perf_event_paranoid {paranoid}" if paranoid else ""
    if hw_ok and not hw_no:
        return f"available: {', '.join(hw_ok)}" + (f" ({tail})" if tail else "")
    if hw_ok:
        return (f"partly: {', '.join(hw_ok)} open; not {', '.join(hw_no)}"
                + (f" ({tail})" if tail else ""))
    errs = sorted({p.get(n) for n in hw})
    why = {"ENOENT": "no PMU driver: a VM?", "EACCES": "forbidden",
           "EPERM": "forbidden"}.get(errs[0], "") if len(errs) == 1 else ""
    return (f"not available (hardware events: "
            f"{', '.join(hw_no) if len(errs) > 1 else errs[0]}"
            f"{' (' + why + ')' if why else ''}; software events "
            f"{'open: ' + ', '.join(sw_ok) if sw_ok else 'do not open'}"
            f"{'; ' + tail if tail else ''})")


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
    probe = perf_probe()
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
    # installed programs have no build tree: bench/CMakeLists.txt wrote
    # what they were built with beside them
    for line in ((read(os.path.join(bindir, "build-info.txt")) or "")
                 .splitlines() if cc is None else []):
        k, _, v = line.partition("=")
        if k == "compiler":
            cc = v.strip()
        elif k == "build":
            cflags = " ".join(v.split())
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
        "perf_counters": perf_counters(probe),
        "perf_events": probe or {},
        "pinning": (f"single-threaded programs pinned to CPU {pin_cpu()}; "
                    "multi-threaded ones pin their own threads or run "
                    "unpinned (said per experiment)"
                    if pin_cpu() is not None else "not allowed or one CPU: "
                    "unpinned"),
    }
