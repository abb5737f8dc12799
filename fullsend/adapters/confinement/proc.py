"""The single subprocess choke point (docs/architecture.md "Sandboxes").

Every child process the action starts goes through this module, so three rules hold in one
place:

* a process is started in a process group chosen by the caller (``process_group=0`` makes it the
  leader of a new group in the action's session; a positive pgid joins an existing group, which is
  how the local sandbox keeps every exec in one group);
* a group is stopped as a whole: SIGTERM, a grace period, then SIGKILL, then verified empty
  ("no pid of the group left");
* a short command always has a timeout, and on timeout it is killed, never left behind;
* with a ``user`` (``fullsend.adapters.confinement.isolation.ChildUser``) the process runs under that uid,
  without capabilities and with ``no_new_privs`` (started through ``setpriv``, which execs in
  place: the pid, and so the process group, are the same).

Nothing here reads or writes the action's own environment: callers pass ``env`` explicitly.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, NamedTuple

from fullsend.adapters.confinement.isolation import ChildUser
from fullsend.errors import SandboxError

PIPE = subprocess.PIPE
DEVNULL = subprocess.DEVNULL
_POLL_S = 0.02


class ExecResult(NamedTuple):
    """Outcome of one finished short command: decoded ``stdout``/``stderr`` and ``exit_code``."""

    stdout: str
    stderr: str
    exit_code: int


class CommandTimeout(SandboxError):
    """A short command ran past its ``timeout_s`` and was killed (its output is discarded)."""


def spawn(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path | str | None = None,
    process_group: int = 0,
    stdin: int | IO[bytes] | None = DEVNULL,
    stdout: int | IO[bytes] | None = PIPE,
    stderr: int | IO[bytes] | None = PIPE,
    user: ChildUser | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` with exactly ``env`` in process group ``process_group``, as ``user`` when
    given (else as the action's own user).

    ``process_group=0`` makes the child the leader of a new group (pgid == pid); a positive value
    joins that existing group (it must live in the action's session).  Streams are binary.
    Raises ``SandboxError`` when the program cannot be started (missing, not executable, bad cwd;
    under a ``user``, a missing program is instead ``setpriv``'s exit 127).
    """
    try:
        return subprocess.Popen(  # argv is data, never a shell string
            user.argv(argv) if user is not None else list(argv),
            env=dict(env),
            cwd=str(cwd) if cwd is not None else None,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            process_group=process_group,
            close_fds=True,
        )
    except (OSError, ValueError) as exc:
        reason = (exc.strerror if isinstance(exc, OSError) else None) or exc
        raise SandboxError(f"could not start {Path(argv[0]).name}: {reason}") from exc


def run_command(
    argv: Sequence[str],
    *,
    timeout_s: float,
    env: Mapping[str, str],
    cwd: Path | str | None = None,
    input_bytes: bytes | None = None,
    process_group: int = 0,
    user: ChildUser | None = None,
) -> ExecResult:
    """Run a short command to completion (as ``user`` when given) and return its ``ExecResult``.

    With ``process_group=0`` the command leads its own group and the whole group is killed on
    timeout; when it joins an existing group (a sandbox) only the command's own pid is killed, so
    the sandbox survives.  Raises ``CommandTimeout`` after ``timeout_s`` seconds and
    ``SandboxError`` when it cannot be started.
    """
    proc = spawn(
        argv,
        env=env,
        cwd=cwd,
        process_group=process_group,
        stdin=PIPE if input_bytes is not None else DEVNULL,
        user=user,
    )
    try:
        out, err = proc.communicate(input=input_bytes, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _end(proc, process_group)
        raise CommandTimeout(f"{Path(argv[0]).name} did not finish within {timeout_s:g} s") from None
    except BaseException:  # e.g. the run was cancelled while waiting: never leave the command behind
        _end(proc, process_group)
        raise
    return ExecResult(_decode(out), _decode(err), proc.returncode)


def _end(proc: subprocess.Popen[bytes], process_group: int) -> None:
    """Kill a short command (its whole group when it leads one, else its tree) and reap it."""
    if process_group == 0:
        kill_group(proc.pid, grace_s=0.5)
    else:
        kill_tree(proc.pid)
    try:
        proc.communicate(timeout=2.0)
    except subprocess.TimeoutExpired:
        proc.kill()


def _decode(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")


def signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to every process of group ``pgid``; False when the group no longer exists."""
    if pgid <= 1:
        raise ValueError("refusing to signal process group <= 1")
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) pids whose process group is ``pgid``, read from ``/proc``.

    A zombie has already ended and holds nothing, so it does not count as left behind.
    """
    return [pid for pid, fields in _proc_stats() if len(fields) >= 3 and fields[0] != "Z" and int(fields[2]) == pgid]


def _proc_stats() -> Iterator[tuple[int, list[str]]]:
    """Each live pid of ``/proc`` with the fields of its ``stat`` after the parenthesised command
    (state, ppid, pgrp, ...); a process that ends while it is read is left out."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        yield int(entry.name), stat[stat.rfind(")") + 2 :].split()


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` and every descendant (found through ``/proc``), leaves first."""
    children: dict[int, list[int]] = {}
    for child, fields in _proc_stats():
        if len(fields) >= 2:
            children.setdefault(int(fields[1]), []).append(child)
    order, stack = [], [pid]
    while stack:
        current = stack.pop()
        order.append(current)
        stack.extend(children.get(current, []))
    for victim in reversed(order):
        try:
            os.kill(victim, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def kill_group(pgid: int, grace_s: float) -> bool:
    """Stop a whole process group: SIGTERM, wait up to ``grace_s``, then SIGKILL.

    Returns True once no live member is left (verified through ``/proc``), False if members
    survive a further second after SIGKILL (for example an uninterruptible sleep).
    """
    if not signal_group(pgid, signal.SIGTERM):
        return True
    if _wait_group_empty(pgid, grace_s):
        return True
    signal_group(pgid, signal.SIGKILL)
    return _wait_group_empty(pgid, 1.0)


def _wait_group_empty(pgid: int, limit_s: float) -> bool:
    waiter = threading.Event()
    remaining = limit_s
    while True:
        if not group_members(pgid):
            return True
        if remaining <= 0:
            return False
        waiter.wait(_POLL_S)
        remaining -= _POLL_S
