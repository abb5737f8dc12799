"""Limit what every later child of an action without a child user can hold.

Without per-uid isolation (``allow_shared_uid``: an image without ``fullsend-agent``), a child of
an action running as root would run as root with every capability the container grants.  With
``CAP_SYS_PTRACE`` it could read the action's memory, where the job token lives, although the
action is non-dumpable (``fullsend.adapters.secrets``).  So before its first child the action
limits its own bounding set to the four capabilities that let root work on files it does not own
(``chown``, ``dac_override``, ``fowner``, ``fsetid``: the workspace belongs to the runner's uid),
empties its inheritable and ambient sets and sets ``no_new_privs``.  The action keeps what it
holds; every program it or a child executes from then on gets at most the four, and no setuid
or file capability adds any.  A non-root action sets ``no_new_privs`` and empties the same two
sets, so no setuid binary (``sudo``) gives a child of its uid the capability back.  A process of
uid 0 without ``CAP_SYS_PTRACE`` can read neither the ``environ`` nor the memory of a
non-dumpable process (docs/architecture.md "Child isolation").

This changes the whole process for good, so it is done only in the action's own process
(:func:`own_process`, called by ``fullsend run``'s entry), never in a process that runs the
action in-process (``fullsend demo``, the tests).
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Any

#: Capabilities a later child of a root action keeps (linux/capability.h numbers): file work only.
KEPT_CAPABILITIES = {0: "chown", 1: "dac_override", 3: "fowner", 4: "fsetid"}
#: Capabilities that would give a child the action's memory, or the kernel's: one left is a refusal.
DANGEROUS_CAPABILITIES = {
    2: "dac_read_search",
    16: "sys_module",
    17: "sys_rawio",
    19: "sys_ptrace",
    21: "sys_admin",
    38: "perfmon",
    39: "bpf",
}
_PR_CAPBSET_READ, _PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS, _PR_GET_NO_NEW_PRIVS = 23, 24, 38, 39
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_CAP_VERSION_3 = 0x20080522
_OWNED = {"process": False}


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def own_process() -> None:
    """Mark this process as the action's own (``fullsend run``'s entry): :func:`applies` may say yes."""
    _OWNED["process"] = True


def applies() -> bool:
    """True in the action's own process on Linux: the limit is then due (any uid)."""
    return _OWNED["process"] and sys.platform == "linux"


def limit_children_capabilities() -> list[str]:
    """Set ``no_new_privs`` and empty the inheritable and ambient sets; as root also drop from
    the bounding set every capability but :data:`KEPT_CAPABILITIES`.  Per thread, as the kernel
    keeps these: call it on the main thread before any other thread starts a child.

    Returns the names of the :data:`DANGEROUS_CAPABILITIES` a later child could still get
    (``[]``: done; a name left in the bounding set means the action lacks ``CAP_SETPCAP``), or
    ``["unknown"]`` when the kernel would not say or a call failed.  Never raises."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        last = _last_capability(libc)
        if os.geteuid() == 0:
            for cap in range(last + 1):
                if cap not in KEPT_CAPABILITIES and libc.prctl(_PR_CAPBSET_READ, cap, 0, 0, 0) == 1:
                    libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)  # judged below, by what is left
        libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # EINVAL before Linux 4.3: none to clear
        header, data = _Header(_CAP_VERSION_3, 0), (_Data * 2)()
        if libc.capget(ctypes.byref(header), data) != 0:
            return ["unknown"]
        for part in data:
            part.inheritable = 0
        if libc.capset(ctypes.byref(header), data) != 0 or libc.capget(ctypes.byref(header), data) != 0:
            return ["unknown"]
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.prctl(_PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1:
            return ["unknown"]
        inheritable = data[0].inheritable | data[1].inheritable << 32
        return [
            name
            for cap, name in sorted(DANGEROUS_CAPABILITIES.items())
            if inheritable >> cap & 1 or (os.geteuid() == 0 and libc.prctl(_PR_CAPBSET_READ, cap, 0, 0, 0) != 0)
        ]
    except (OSError, ValueError, AttributeError):
        return ["unknown"]


#: The kernel's settings a uid-0 child could turn into a program the kernel runs with every
#: capability (``kernel.core_pattern``, ``kernel.modprobe``, ``/sys/kernel/uevent_helper`` …).
KERNEL_SETTINGS = ("/proc/sys", "/sys")
#: The best known of them, named in the refusal.
CORE_PATTERN = "/proc/sys/kernel/core_pattern"
_CLONE_NEWNS, _MS_RDONLY, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 0x20000, 1, 32, 4096, 16384, 1 << 18


def seal_kernel_settings() -> str:
    """As root: move this process into a mount namespace of its own where every mount at or below
    :data:`KERNEL_SETTINGS` (``binfmt_misc``, cgroups, tracefs … included) is read-only, so no
    later child (without ``CAP_SYS_ADMIN``, see :func:`limit_children_capabilities`) can write
    them.  Only while this process has a single thread: a mount namespace is per thread.

    Returns "" when no such mount is writable for this process and its children from now on
    (also when none was, or the action is not root), else why not; the caller refuses.  Never
    raises."""
    if os.geteuid() != 0 or not writable_kernel_mounts():
        return ""
    try:
        threads = len(os.listdir("/proc/self/task"))
        if threads != 1:
            return f"the action has {threads} threads, and a mount namespace is per thread"
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(_CLONE_NEWNS) != 0:
            return f"unshare: {os.strerror(ctypes.get_errno())}"
        if libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
            return f"private /: {os.strerror(ctypes.get_errno())}"
        for path in KERNEL_SETTINGS:
            if libc.mount(path.encode(), path.encode(), None, _MS_BIND | _MS_REC, None) != 0:
                return f"bind {path}: {os.strerror(ctypes.get_errno())}"
        for target, flags in _kernel_mounts():  # the bind's top, then every mount below it
            if libc.mount(None, target.encode(), None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | flags, None) != 0:
                return f"read-only {target}: {os.strerror(ctypes.get_errno())}"
    except (OSError, AttributeError) as exc:
        return str(exc)
    left = writable_kernel_mounts()
    return f"still writable: {', '.join(left)}" if left else ""


def writable_kernel_mounts() -> list[str]:
    """The mount points at or below :data:`KERNEL_SETTINGS` that this process sees read-write,
    and :data:`CORE_PATTERN` when it is writable (``/proc/sys`` need not be a mount of its own)."""
    found = [target for target, options in _kernel_mounts(with_options=True) if "ro" not in options]
    return found + ([CORE_PATTERN] if os.access(CORE_PATTERN, os.W_OK) else [])


_KEPT_FLAGS = {"nosuid": 2, "nodev": 4, "noexec": 8}


def _kernel_mounts(with_options: bool = False) -> list[tuple[str, Any]]:
    """``(mount point, flags to keep)`` — or ``(mount point, options)`` — of the visible mount at
    each mount point at or below :data:`KERNEL_SETTINGS` (``/proc/self/mountinfo`` lists a mount
    after the ones it covers), shallowest first."""
    found: dict[str, Any] = {}
    with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            fields = line.split()
            if len(fields) < 6:
                continue
            target = fields[4].replace("\\040", " ")
            if not any(target == root or target.startswith(root + "/") for root in KERNEL_SETTINGS):
                continue
            options = set(fields[5].split(","))
            found.pop(target, None)  # the later mount covers the earlier one
            found[target] = (
                options if with_options else sum(flag for name, flag in _KEPT_FLAGS.items() if name in options)
            )
    return sorted(found.items(), key=lambda item: item[0].count("/"))


def _last_capability(libc: ctypes.CDLL) -> int:
    """The kernel's highest capability number: ``cap_last_cap``, else the last one
    ``PR_CAPBSET_READ`` knows.  Raises ``OSError`` when neither says."""
    try:
        with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as fh:
            return int(fh.read())
    except (OSError, ValueError):
        known = [cap for cap in range(64) if libc.prctl(_PR_CAPBSET_READ, cap, 0, 0, 0) >= 0]
        if not known:
            raise OSError("the kernel names no capability") from None
        return max(known)
