"""Every child of the action under a uid of its own, out of reach of the action's secrets.

The agent and the pre-, post- and validation scripts (which often run workspace files the agent
just edited) run as the dedicated unprivileged user ``fullsend-agent`` that the image creates:
started through ``setpriv`` (util-linux) with that uid and gid, no supplementary groups, no
capabilities (inheritable, ambient and bounding sets emptied) and ``no_new_privs``.  A process of
another uid without ``CAP_SYS_PTRACE`` can read neither ``/proc/<pid>/environ`` nor the memory of
the action (root), on any kernel, and cannot write the runner's file-command files, which belong
to the runner's uid.

The children reach the workspace and ``HOME`` because the action hands their ownership to the
child user for the run (``hand_over``) and back afterwards (``Handover.hand_back``): entries go
back to the owner they had, and entries the children created go to the owner of the tree's root
(``GITHUB_WORKSPACE``'s uid and gid), so later steps of the job can clean them.  Before handing
back, every process of the child uid is killed (``end_processes_of``), so nothing of theirs can
race the walk, which never follows a symbolic link.

Isolation needs root (to change uid and owners) and ``setpriv``; without them the action says
once why, and the children run as the action's own user, as before.  A deployment composed in
code (``fullsend.app.action.confinement.deployment``, never an input) may name a numeric uid (and
the same gid) as the child user, for hosts whose ``/etc/passwd`` has no ``fullsend-agent``.
"""

from __future__ import annotations

import ctypes
import os
import pwd
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: The child user the Dockerfile creates (the uid is fixed there, above every runner account).
CHILD_USER = "fullsend-agent"
_SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
_PROBE_TIMEOUT_S = 10.0
_KILL_ROUNDS = 50
_KILL_POLL_S = 0.02
_PR_SET_CHILD_SUBREAPER = 36


@dataclass(frozen=True)
class ChildUser:
    """The uid and gid every child runs as, and the ``setpriv`` that starts it."""

    uid: int
    gid: int
    name: str
    setpriv: str

    def argv(self, argv: Sequence[str]) -> list[str]:
        """``argv`` started as this user: no groups, no capabilities, ``no_new_privs``."""
        return [
            self.setpriv,
            f"--reuid={self.uid}",
            f"--regid={self.gid}",
            "--clear-groups",
            "--no-new-privs",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--",
            *argv,
        ]


def resolve_child_user(given_uid: int | None = None) -> tuple[ChildUser | None, str]:
    """``(user, "")`` when children can run under their own uid, else ``(None, why not)``.
    ``given_uid``: that uid (and gid) is the child user, else the system's ``fullsend-agent``.

    Probes ``setpriv`` once with the real flags, so a runtime that refuses them (for example no
    ``CAP_SETPCAP`` to empty the bounding set) turns isolation off with its reason.
    """
    if os.geteuid() != 0:
        return None, "the action does not run as root, so it cannot start its children under another uid"
    setpriv = shutil.which("setpriv", path=_SYSTEM_PATH)
    if not setpriv:
        return None, "setpriv (util-linux) is not installed in the image"
    if given_uid is not None:
        user = ChildUser(given_uid, given_uid, "", setpriv)
    else:
        try:
            entry = pwd.getpwnam(CHILD_USER)
        except KeyError:
            return None, f"the image has no user {CHILD_USER} (the action's Dockerfile creates it)"
        user = ChildUser(entry.pw_uid, entry.pw_gid, CHILD_USER, setpriv)
    if user.uid == 0:
        return None, f"{CHILD_USER} is root"
    try:
        probe = subprocess.run(
            user.argv(["true"]), env={"PATH": _SYSTEM_PATH}, capture_output=True, timeout=_PROBE_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"setpriv could not be run ({exc})"
    if probe.returncode != 0:
        return None, f"setpriv refused to drop privileges ({probe.stderr.decode(errors='replace').strip()})"
    return user, ""


def become_subreaper() -> bool:
    """Make this process the child subreaper of its descendants (``PR_SET_CHILD_SUBREAPER``): a
    child's child that double-forks away from its parent is re-parented here, not to PID 1, so
    ``end_processes_of`` still finds it among this run's descendants.  False where the kernel
    refuses (the kill then relies on a private PID namespace alone)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def end_processes_of(uid: int, root_pid: int | None = None) -> int:
    """SIGKILL, until none is left, every live process whose real or effective uid is ``uid`` and
    that belongs to this run: one descended from ``root_pid`` (default this process; a process that
    left its group with ``setsid`` included, and with ``become_subreaper`` one whose parent died),
    or any process of ``uid`` when this PID namespace holds nothing but this run (a container's
    own), docs/architecture.md "Child isolation".  Another run's processes sharing the uid and
    the namespace are left alone.  Returns how many were killed."""
    root = os.getpid() if root_pid is None else root_pid
    killed: set[int] = set()
    waiter = threading.Event()
    for _ in range(_KILL_ROUNDS):
        pids = _processes_of(uid, root)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except (ProcessLookupError, PermissionError):
                pass
        waiter.wait(_KILL_POLL_S)
    return len(killed)


def _processes_of(uid: int, root_pid: int) -> list[int]:
    """The live processes of ``uid`` that belong to the run of ``root_pid`` (see ``end_processes_of``)."""
    table = _process_table()
    ours, above = _descendants(table, root_pid), _ancestors(table, root_pid)
    private = all(pid in ours or pid in above or uid in ids for pid, (_, ids) in table.items())
    return sorted(pid for pid, (_, ids) in table.items() if uid in ids and (private or pid in ours))


def _process_table() -> dict[int, tuple[int, tuple[int, int]]]:
    """pid -> (parent pid, (real uid, effective uid)) of every live, non-zombie process in /proc."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        ids, ppid = fields.get("Uid", "").split(), fields.get("PPid", "").strip()
        if fields.get("State", "").strip().startswith("Z") or len(ids) < 2 or not ppid.isdigit():
            continue
        table[int(entry.name)] = (int(ppid), (int(ids[0]), int(ids[1])))
    return table


def _descendants(table: dict[int, tuple[int, tuple[int, int]]], root_pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = {root_pid}, [root_pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _ancestors(table: dict[int, tuple[int, tuple[int, int]]], pid: int) -> set[int]:
    found: set[int] = set()
    while pid in table and pid not in found:
        found.add(pid)
        pid = table[pid][0]
    return found


@dataclass
class Handover:
    """Trees whose ownership the child user holds for the run.  ``owners`` maps each root to its
    own ``(uid, gid)``; ``kept`` holds, per root, the entries whose owner differed from it."""

    user: ChildUser
    owners: dict[Path, tuple[int, int]] = field(default_factory=dict)
    kept: dict[Path, dict[str, tuple[int, int]]] = field(default_factory=dict)
    failures: int = 0

    def hand_back(self) -> int:
        """Give every entry the child user owns back: to the owner it had, else (created by a
        child) to the owner of its tree's root.  Call once no child process is left.  Returns
        how many entries could not be changed."""
        failures = 0
        uid = self.user.uid
        for root, owner in self.owners.items():
            kept = self.kept.get(root, {})

            def give_back(
                rel: str, st: os.stat_result, kept: dict[str, tuple[int, int]] = kept, owner: tuple[int, int] = owner
            ) -> tuple[int, int] | None:
                return kept.get(rel, owner) if st.st_uid == uid else None

            failures += _walk_chown(root, give_back)
        return failures


def hand_over(roots: Sequence[Path], user: ChildUser) -> Handover:
    """Make ``user`` the owner of every entry under each existing root (links not followed)."""
    handover = Handover(user)
    for root in roots:
        try:
            root = root.resolve(strict=True)
            info = root.stat()
        except (OSError, RuntimeError):
            continue
        if not root.is_dir() or root in handover.owners:
            continue
        owner = (info.st_uid, info.st_gid)
        handover.owners[root] = owner
        kept = handover.kept.setdefault(root, {})

        def take(
            rel: str, st: os.stat_result, owner: tuple[int, int] = owner, kept: dict[str, tuple[int, int]] = kept
        ) -> tuple[int, int]:
            if (st.st_uid, st.st_gid) != owner:
                kept[rel] = (st.st_uid, st.st_gid)
            return (user.uid, user.gid)

        handover.failures += _walk_chown(root, take)
    return handover


Decide = Callable[[str, os.stat_result], "tuple[int, int] | None"]


def _walk_chown(root: Path, decide: Decide) -> int:
    """``lchown`` the root and every entry below it to ``decide(relative path, lstat)`` (``None``:
    leave it).  Never follows a link; returns how many entries could not be changed."""
    failures = _chown_one(str(root), ".", decide, None)
    for dirpath, dirnames, filenames, dirfd in os.fwalk(root, follow_symlinks=False):
        rel_dir = os.path.relpath(dirpath, root)
        for name in dirnames + filenames:
            failures += _chown_one(name, os.path.normpath(os.path.join(rel_dir, name)), decide, dirfd)
    return failures


def _chown_one(name: str, rel: str, decide: Decide, dirfd: int | None) -> int:
    try:
        st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
        target = decide(rel, st)
        if target is not None and (st.st_uid, st.st_gid) != target:
            os.chown(name, *target, dir_fd=dirfd, follow_symlinks=False)
    except OSError:
        return 1
    return 0
