"""Blocking waits for a child's exit, with a timeout and no timed loop (docs/architecture.md
"Threads and time").

``subprocess.Popen.wait(timeout=…)`` polls: it sleeps up to 50 ms between ``waitpid(WNOHANG)``
calls, about 20 wake-ups and 1 ms of CPU per second for as long as an agent runs.  An
:class:`ExitWatch` instead blocks in the kernel: a pidfd (``os.pidfd_open``, Linux 5.3+) opened
when the process is started — before anyone can reap it, so it can never name a recycled pid —
is polled with the whole timeout and becomes readable when the process ends.  Where pidfds are
missing (another OS, an old kernel, a seccomp filter) one thread blocks in ``wait()`` and sets an
``Event`` the waiters wait on.  Either way the exit code comes from ``Popen.wait()`` itself.
"""

from __future__ import annotations

import math
import os
import select
import subprocess
import threading
import weakref
from typing import Any

_POLL_MS_MAX = 2**31 - 1  # poll(2) takes an int of milliseconds


class ExitWatch:
    """The exit of one ``Popen`` child: :meth:`wait` as ``Popen.wait``, blocking.  Thread-safe.

    Create it right after the ``Popen`` (the pidfd must be opened before the child is reaped).
    """

    def __init__(self, popen: subprocess.Popen[Any]) -> None:
        self._popen = popen
        self._pidfd = _open_pidfd(popen.pid)
        self._exited: threading.Event | None = None
        if self._pidfd is not None:
            weakref.finalize(self, os.close, self._pidfd)
        else:
            self._exited = threading.Event()
            threading.Thread(target=self._reap, name=f"exit-{popen.pid}", daemon=True).start()

    def wait(self, timeout_s: float | None = None) -> int:
        """The exit code, waiting at most ``timeout_s`` seconds (``None``: as long as it takes).

        Raises ``subprocess.TimeoutExpired`` when the process still runs at the timeout.
        """
        if timeout_s is not None and math.isfinite(timeout_s) and not self._ended_within(timeout_s):
            raise subprocess.TimeoutExpired(self._popen.args, timeout_s)
        return self._popen.wait()

    def _ended_within(self, timeout_s: float) -> bool:
        if self._popen.returncode is not None:
            return True
        if self._exited is not None:
            return self._exited.wait(max(0.0, timeout_s))
        poller = select.poll()
        poller.register(self._pidfd, select.POLLIN)  # type: ignore[arg-type]  # set whenever _exited is None
        remaining_ms = math.ceil(max(0.0, timeout_s) * 1000)
        while True:
            chunk_ms = min(remaining_ms, _POLL_MS_MAX)
            if poller.poll(chunk_ms):  # PEP 475: a signal does not end the wait early
                return True
            remaining_ms -= chunk_ms
            if remaining_ms <= 0:
                return False

    def _reap(self) -> None:
        self._popen.wait()
        assert self._exited is not None
        self._exited.set()


def _open_pidfd(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except OSError:  # ENOSYS (old kernel), EPERM (a filter): the waiter thread instead
        return None
