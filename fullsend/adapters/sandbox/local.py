"""The ``local`` sandbox: the agent as a child process group of the action
(docs/architecture.md "Sandboxes").

One sandbox is one process group.  ``create`` makes a fresh private root (``tempfile.mkdtemp``)
and starts the group's leader (a sleeping placeholder that keeps the group alive); every exec,
the feeder and the agent join that group.  ``stop`` ends the whole group (SIGTERM, then SIGKILL,
then verified empty), ``start`` starts a new leader with the same root (disk kept), and
``phase`` is ``Ready`` while the leader lives, else ``Stopped`` (a local sandbox never lands in
``Error``; the tests' double of one that does is ``tests/doubles/error_sandbox.py``).

With a child user (``fullsend.adapters.confinement.isolation``), every process of the group — the leader,
each exec, the feeder and the agent — runs under that uid without capabilities, and the root
and everything the sandbox makes under it belong to that user.

Mapping of the OpenShell operations: ``sandbox exec`` = ``sh -c <command>`` in the group;
``sandbox upload`` = a file copy under the root; the feeder is ``tail -n +1 -f <mailbox>`` in the
group, its pid written to the feeder pid file, its stdout piped into the agent's stdin.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from fullsend.adapters.confinement import proc
from fullsend.adapters.confinement.isolation import ChildUser, end_processes_of
from fullsend.adapters.sandbox.files import write_without_following
from fullsend.adapters.sandbox.process import LocalProcess
from fullsend.errors import SandboxError
from fullsend.ports import Launch

PHASE_READY = "Ready"
PHASE_STOPPED = "Stopped"
EXEC_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C"}


class LocalSandbox:
    """``sandbox: local`` (implements ``fullsend.ports.Sandbox``).

    ``root`` is a fresh private directory under ``root_parent`` (default: the system temp dir,
    never ``RUNNER_TEMP``); ``clock`` (default ``SystemClock()``) times the forced ``Error`` of
    the test hooks; with ``user`` the root belongs to that user and every process runs as it.
    Methods raise ``SandboxError``.
    """

    kind = "local"

    def __init__(
        self,
        name: str,
        root_parent: Path | None = None,
        tail_path: str | None = None,
        user: ChildUser | None = None,
    ) -> None:
        self.name = name
        self.user = user
        self.root = Path(tempfile.mkdtemp(prefix="fullsend-sandbox-", dir=root_parent))
        self._give(self.root)
        self._tail = tail_path or shutil.which("tail", path=EXEC_ENV["PATH"]) or "tail"
        self._lock = threading.Lock()
        self._leader: subprocess.Popen[bytes] | None = None
        self._children: list[subprocess.Popen[bytes]] = []
        self._start_leader()

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def pgid(self) -> int:
        """The process group id of the running group (raises ``SandboxError`` when stopped)."""
        leader = self._leader
        if leader is None or leader.poll() is not None:
            raise SandboxError(f"sandbox {self.name!r} is not running")
        return leader.pid

    def _start_leader(self) -> None:
        self._leader = proc.spawn(
            ["sleep", "infinity"],
            env=EXEC_ENV,
            cwd=self.root,
            process_group=0,
            stdin=proc.DEVNULL,
            stdout=proc.DEVNULL,
            stderr=proc.DEVNULL,
            user=self.user,
        )

    def phase(self) -> str:
        """``Ready`` while the group's leader lives, ``Stopped`` otherwise."""
        leader = self._leader
        return PHASE_READY if leader is not None and leader.poll() is None else PHASE_STOPPED

    def stop(self, timeout_s: float) -> None:
        """End every process of the group within ``timeout_s`` and verify none is left; with a
        child user, also every process of its uid that belongs to this run (one that left the
        group with ``setsid`` and holds the agent's stdout included: docs/architecture.md
        "Child isolation"), so a timeout binds the whole tree."""
        with self._lock:
            leader = self._leader
            if leader is None or leader.poll() is not None:
                self._end_escaped()
                return
            grace_s = max(0.1, timeout_s - 1.5)
            self._end_escaped()  # first, while their parents in the group still hold them as descendants
            emptied = proc.kill_group(leader.pid, grace_s=grace_s)
            self._end_escaped()
            self._reap()
        if not emptied:
            raise SandboxError(f"processes of sandbox {self.name!r} survived the stop")

    def _end_escaped(self) -> None:
        if self.user is not None:
            end_processes_of(self.user.uid)

    def start(self, timeout_s: float) -> None:
        """Start a fresh process group with the same root (disk state kept)."""
        del timeout_s  # starting a leader is immediate
        with self._lock:
            if self._leader is not None and self._leader.poll() is None:
                raise SandboxError(f"sandbox {self.name!r} is already running")
            self._start_leader()

    def delete(self) -> None:
        """Stop every process and remove the root."""
        self.stop(timeout_s=2.0)
        shutil.rmtree(self.root, ignore_errors=True)

    def _reap(self) -> None:
        for child in [self._leader, *self._children]:
            if child is not None:
                try:
                    child.wait(timeout=0.5)
                except subprocess.TimeoutExpired:
                    pass
        self._children = [c for c in self._children if c.poll() is None]

    # -- operations ----------------------------------------------------------------------------

    def exec(self, command: str, timeout_s: float) -> proc.ExecResult:
        """Run ``sh -c command`` in the group; raises ``SandboxError`` if not Ready or on timeout."""
        return proc.run_command(
            ["/bin/sh", "-c", command],
            timeout_s=timeout_s,
            env=EXEC_ENV,
            cwd=self.root,
            process_group=self.pgid,
            user=self.user,
        )

    def make_dir(self, path: Path) -> None:
        """Create a directory (and parents) under the root (the child user's, when there is one),
        one component at a time from the root, never through a link a child planted (raises
        ``SandboxError`` naming the component that is a link or not a folder)."""
        root = self.root.resolve()
        target = Path(os.path.normpath(Path(path) if Path(path).is_absolute() else root / path))
        if not target.is_relative_to(root):
            raise SandboxError(f"{path} is outside the sandbox root")
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        for part in target.relative_to(root).parts:
            fd = self._enter(fd, part)  # closes the fd it was given, also when it raises
        os.close(fd)

    def _enter(self, dir_fd: int, name: str) -> int:
        """The fd of folder ``name`` in ``dir_fd`` (made, and given to the child user, if missing);
        closes ``dir_fd``."""
        try:
            try:
                os.mkdir(name, 0o755, dir_fd=dir_fd)
                if self.user is not None:
                    os.chown(name, self.user.uid, self.user.gid, dir_fd=dir_fd, follow_symlinks=False)
            except FileExistsError:
                pass
            return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        except OSError as exc:
            raise SandboxError(
                f"cannot make the sandbox folder {name!r} without following a link: {exc.strerror}"
            ) from None
        finally:
            os.close(dir_fd)

    def upload(self, src: Path, dest: Path) -> None:
        """Copy ``src`` to ``dest`` (which must lie under the root) as a fresh file, never through
        a link a child planted (the folders via ``make_dir``, the file via ``write_without_following``)."""
        root = self.root.resolve()
        target = Path(os.path.normpath(Path(dest) if Path(dest).is_absolute() else root / dest))
        if not target.is_relative_to(root) or target == root:
            raise SandboxError("upload target is outside the sandbox root")
        self.make_dir(target.parent)
        write_without_following(target, Path(src).read_bytes())
        if self.user is not None:
            os.chown(target, self.user.uid, self.user.gid, follow_symlinks=False)

    def _give(self, path: Path) -> None:
        """With a child user: ``path`` and its parents up to the root become that user's."""
        if self.user is None:
            return
        root = self.root.resolve()
        current = path.resolve()
        try:
            while current.is_relative_to(root):
                os.chown(current, self.user.uid, self.user.gid, follow_symlinks=False)
                if current == root:
                    break
                current = current.parent
        except OSError as exc:
            raise SandboxError(f"could not hand {current.name} to the child user: {exc.strerror}") from exc

    def launch(self, launch: Launch) -> LocalProcess:
        """Start ``launch.argv`` in the group with exactly its ``env`` and ``cwd`` (a local sandbox
        runs no pinned script).

        With ``mailbox`` the agent's stdin is a feeder ``tail -n +1 -f <mailbox>`` (pid written
        to ``feeder_pid_file``); else ``stdin_bytes`` (or nothing) is its whole stdin.
        """
        argv, env, cwd, pgid = launch.argv, launch.env, launch.cwd, self.pgid
        with self._lock:
            if launch.mailbox is not None:
                return self._launch_fed(argv, env, cwd, pgid, launch.mailbox, launch.feeder_pid_file)
            popen = proc.spawn(argv, env=env, cwd=cwd, process_group=pgid, stdin=proc.PIPE, user=self.user)
            self._children.append(popen)
        assert popen.stdin is not None
        threading.Thread(target=_write_and_close, args=(popen.stdin, launch.stdin_bytes or b""), daemon=True).start()
        return LocalProcess(popen)

    def _launch_fed(
        self,
        argv: Sequence[str],
        env: Mapping[str, str],
        cwd: Path,
        pgid: int,
        mailbox: Path,
        pid_file: Path | None,
    ) -> LocalProcess:
        feeder = proc.spawn(
            [self._tail, "-n", "+1", "-s", "0.1", "-f", str(mailbox)],
            env=EXEC_ENV,
            cwd=self.root,
            process_group=pgid,
            stdin=proc.DEVNULL,
            stdout=proc.PIPE,
            stderr=proc.DEVNULL,
            user=self.user,
        )
        self._children.append(feeder)
        if pid_file is not None:
            try:
                write_without_following(pid_file, f"{feeder.pid}\n".encode())
            except SandboxError:
                feeder.kill()
                raise
        try:
            agent = proc.spawn(argv, env=env, cwd=cwd, process_group=pgid, stdin=feeder.stdout, user=self.user)
        except SandboxError:
            feeder.kill()
            raise
        finally:
            assert feeder.stdout is not None
            feeder.stdout.close()
        self._children.append(agent)
        return LocalProcess(agent)


def _write_and_close(stream: IO[bytes], data: bytes) -> None:
    try:
        stream.write(data)
        stream.close()
    except OSError:
        pass


def local_sandbox_factory(
    root_parent: Path | None = None, user: ChildUser | None = None
) -> Callable[[str], LocalSandbox]:
    """``name -> LocalSandbox`` under ``root_parent``, the runtimes' default sandbox factory; its
    processes run as ``user`` when given."""

    def make(name: str) -> LocalSandbox:
        return LocalSandbox(name, root_parent, user=user)

    return make


def env_with_sandbox_flag(env: Mapping[str, str]) -> dict[str, str]:
    """The agent's environment in the local sandbox: ``env`` plus ``IS_SANDBOX=1``."""
    return {**env, "IS_SANDBOX": "1"}


__all__ = [
    "PHASE_READY",
    "PHASE_STOPPED",
    "LocalSandbox",
    "env_with_sandbox_flag",
    "local_sandbox_factory",
]
