"""The handle of a process launched in a sandbox, local or OpenShell (docs/architecture.md
"Sandboxes"): its stdout, the tail of its stderr and a wait that burns no CPU."""

from __future__ import annotations

import subprocess
import threading
from typing import IO

from fullsend.adapters.confinement import exitwait

_STDERR_KEEP_BYTES = 8192


class LocalProcess:
    """A process launched in a local sandbox (``fullsend.ports.SandboxProcess``).

    ``stdout`` is the agent's binary stdout; stderr is drained by a thread and its last 8 KiB are
    kept for error messages (``stderr_tail``).
    """

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        self._exit = exitwait.ExitWatch(popen)  # at once: before anything can reap the child
        self.pid = popen.pid
        self.stdout: IO[bytes] = popen.stdout  # type: ignore[assignment]  # PIPE: never None
        self._stderr = bytearray()
        self._drain = threading.Thread(target=self._drain_stderr, name=f"stderr-{popen.pid}", daemon=True)
        self._drain.start()

    def _drain_stderr(self) -> None:
        stream = self._popen.stderr
        if stream is None:
            return
        # Popen's pipes are buffered readers (bufsize=-1), so they have read1; IO[bytes] does not say so.
        for chunk in iter(lambda: stream.read1(4096), b""):  # type: ignore[attr-defined]  # a BufferedReader pipe
            self._stderr += chunk
            del self._stderr[:-_STDERR_KEEP_BYTES]

    def stderr_tail(self) -> str:
        """The last ≤ 8 KiB the process wrote to stderr, decoded leniently."""
        self._drain.join(timeout=1.0)
        return bytes(self._stderr).decode("utf-8", errors="replace")

    def wait(self, timeout_s: float | None = None) -> int:
        """Wait for the exit code; raises ``subprocess.TimeoutExpired`` after ``timeout_s``.
        Blocks without a timed loop (``fullsend.adapters.confinement.exitwait``): an idle agent costs no CPU."""
        return self._exit.wait(timeout_s)

    def poll(self) -> int | None:
        """The exit code, or None while running."""
        return self._popen.poll()
