"""Start a child of a root action that has no child user without root's capabilities.

Without per-uid isolation (``allow_shared_uid``: an image without ``fullsend-agent``), a child of
an action running as root would run as root with every capability the container grants.  With
``CAP_SYS_PTRACE`` it could read the action's memory, where the job token lives, although the
action is non-dumpable (``fullsend.adapters.secrets``).  So such a child is started through a
small launcher that empties its ambient set, drops every capability from its bounding set except
the four that let root work on files it does not own (``chown``, ``dac_override``, ``fowner``,
``fsetid``: the workspace belongs to the runner's uid), clears its inheritable set, sets
``no_new_privs``, and only then executes the program in place (same pid, so the same process
group).  A process of uid 0 without ``CAP_SYS_PTRACE`` can read neither the ``environ`` nor the
memory of a non-dumpable process (docs/architecture.md "Child isolation").

The launcher is this interpreter in isolated mode (``-I -S``: no site, no environment variables
read), so it needs no ``setpriv``.  If a capability it must drop cannot be dropped (the action
lacks ``CAP_SETPCAP``), it starts nothing and exits 126, naming the capability; a program it
cannot execute is exit 127, as a shell says.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

#: Capabilities a child of a root action keeps (linux/capability.h numbers): file work only.
KEPT_CAPABILITIES = {0: "chown", 1: "dac_override", 3: "fowner", 4: "fsetid"}

_LAUNCHER = r"""
import ctypes, os, sys
KEPT = {@KEPT@}
libc = ctypes.CDLL(None, use_errno=True)
def fail(what):
    sys.stderr.write("fullsend: could not start the child without capabilities: " + what + "\n")
    os._exit(126)
if libc.prctl(47, 4, 0, 0, 0) != 0 and ctypes.get_errno() != 22:  # PR_CAP_AMBIENT, CLEAR_ALL
    fail("the ambient set could not be cleared")
with open("/proc/sys/kernel/cap_last_cap") as fh:
    last = int(fh.read())
for cap in range(last + 1):
    if cap not in KEPT and libc.prctl(23, cap, 0, 0, 0) == 1 and libc.prctl(24, cap, 0, 0, 0) != 0:
        fail("capability %d stays in the bounding set (the action lacks CAP_SETPCAP)" % cap)
class Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]
class Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]
header, data = Header(0x20080522, 0), (Data * 2)()
if libc.capget(ctypes.byref(header), data) != 0:
    fail("capget failed")
mask = sum(1 << cap for cap in KEPT)
for i, part in enumerate(data):
    part.inheritable = 0
    part.permitted &= mask if i == 0 else 0
    part.effective &= mask if i == 0 else 0
if libc.capset(ctypes.byref(header), data) != 0:
    fail("capset failed")
if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
    fail("no_new_privs could not be set")
try:
    os.execvp(sys.argv[1], sys.argv[1:])
except OSError as exc:
    sys.stderr.write("fullsend: could not start %s: %s\n" % (sys.argv[1], exc.strerror))
    os._exit(127)
""".replace("@KEPT@", ", ".join(str(cap) for cap in sorted(KEPT_CAPABILITIES)))


def without_capabilities(argv: Sequence[str]) -> list[str]:
    """``argv`` behind the launcher: ``[python, -I, -S, -c, <launcher>, *argv]``.  The child runs
    ``argv`` in place with only :data:`KEPT_CAPABILITIES`, an empty inheritable and ambient set
    and ``no_new_privs``; exit 126 when that cannot be had, 127 when ``argv[0]`` cannot be run."""
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, *argv]
