# SPDX-License-Identifier: MIT
"""ctl_raw.py - raw requests to a control socket, for the control tests
(test_control.sh's hostile clients, test_control_nearmiss.sh): a socket is
reached by its name in its directory, since the full path may pass
sun_path's 108 bytes (a checkout at a long path)."""
import os
import socket


def at(path):
    """Work from the socket's directory; its name, to connect to."""
    os.chdir(os.path.dirname(path))
    return os.path.basename(path)


def conn(name, timeout):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    s.connect(name)
    return s


def ask(s, data):
    """Send data, read up to a reply's end (a newline) or the close."""
    s.sendall(data)
    buf = b""
    while not buf.endswith(b"\n"):
        b = s.recv(65536)
        if not b:
            break
        buf += b
    return buf
