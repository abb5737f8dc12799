"""Cancellation from the first instruction of ``fullsend run`` to the last.

Any SIGTERM or SIGINT, whenever it lands, gives ``outcome=failed``, exit 1, outputs and step
summary written, no receipt, no traceback, and the status comment marked cancelled.  Three
kinds of section decide what a signal does at the moment it lands:

* **raising** (the default once the run is planned): the handler raises ``RunCancelled`` in the
  main thread, which abandons whatever the action was waiting for (an API request, a script) and
  reaches the cancel path of ``lifecycle.run_action``;
* **deferred** (the agent iteration, and the cancel path itself): the handler only records the
  cancellation and calls the ``on_cancel`` callbacks (stop the watcher, which settles, and the
  agent's process group); when the outermost deferred section ends inside a raising one, a
  recorded cancellation raises there;
* before the handlers are installed: ``block_signals`` holds both signals pending (the mask
  survives the re-exec), and ``install`` lets them in once the handlers are in place.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: The signals a cancelled job's runner sends (SIGINT first, then SIGTERM, then a kill).
SIGNALS = (signal.SIGTERM, signal.SIGINT)


class RunCancelled(BaseException):
    """A SIGTERM/SIGINT landed in a raising section (a ``BaseException``, so no ``except
    Exception`` on the way swallows it)."""


def block_signals() -> None:
    """Hold SIGTERM and SIGINT pending from now on, across ``execve``, until ``install``."""
    signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)


class Cancellation:
    """The run's cancellation: ``requested`` is set by the first SIGTERM/SIGINT; ``signal_name``
    names it (``SIGTERM``/``SIGINT``).  Without ``install`` it only serves as a flag."""

    def __init__(self) -> None:
        self.requested = threading.Event()
        self.signal_name = ""
        self._raising = False
        self._callbacks: list[Callable[[], None]] = []
        self._previous: dict[int, Any] = {}

    def install(self) -> bool:
        """Handle SIGTERM/SIGINT from now on, then unblock them (a held signal lands at once).
        Main thread only: returns False, doing nothing, on any other thread."""
        if threading.current_thread() is not threading.main_thread():
            return False
        for sig in SIGNALS:
            self._previous[sig] = signal.signal(sig, self._handle)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)
        return True

    def uninstall(self) -> None:
        """Give back the handlers ``install`` replaced (for in-process callers such as the demo)."""
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def on_cancel(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` when a signal lands (at once when one already has).  It runs inside
        the signal handler, so it must be quick and must not raise (exceptions are dropped)."""
        self._callbacks.append(callback)
        if self.requested.is_set():
            _quietly(callback)

    def cancel(self, signal_name: str) -> None:
        """Record a cancellation and run the callbacks (what the handler does before raising)."""
        self.signal_name = self.signal_name or signal_name
        self.requested.set()
        for callback in list(self._callbacks):
            _quietly(callback)

    def _handle(self, signum: int, frame: object) -> None:
        del frame
        self.cancel(signal.Signals(signum).name)
        if self._raising:
            self._raising = False  # once: the cancel path that catches it runs deferred
            raise RunCancelled(self.signal_name)

    @contextmanager
    def raising(self) -> Iterator[None]:
        """A section a signal interrupts with ``RunCancelled`` (raised at entry when one already
        landed)."""
        previous, self._raising = self._raising, True
        try:
            if self.requested.is_set():
                self._raising = False
                raise RunCancelled(self.signal_name)
            yield
        finally:
            self._raising = previous

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """A section a signal does not interrupt; a cancellation recorded in it raises
        ``RunCancelled`` when it ends inside a raising section."""
        previous, self._raising = self._raising, False
        try:
            yield
        finally:
            self._raising = previous
        if previous and self.requested.is_set():
            self._raising = False
            raise RunCancelled(self.signal_name)


def _quietly(callback: Callable[[], None]) -> None:
    try:
        callback()
    except Exception:
        pass
