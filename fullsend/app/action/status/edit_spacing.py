"""The spacing between a run's status comment edits (docs/architecture.md "Status comments").

:class:`EditSpacing` is the run's one spacing clock: when GitHub answered its last edit, of either
status comment, and how long the next edit waits so that it comes ``interval_s`` after it (never
more than ``interval_s``, nothing when that was long ago).  :class:`EndEdits` makes the edits that
come once the progress editor is closed — the terminal status written in place, the start
comment's closing edit, the receipt link — in the order they were asked for, each spaced from the
one before, on a thread of its own, so the end work (the receipt) goes on meanwhile.  A cancelled
run drops them: an edit that would wait is not made, one in flight completes.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

from fullsend.ports import Clock


class EditSpacing:
    """When GitHub answered the run's last status comment edit (monotonic seconds)."""

    def __init__(self, clock: Clock, interval_s: float) -> None:
        self._clock, self.interval_s = clock, interval_s
        self._last: float | None = None

    def left(self) -> float:
        """Seconds until ``interval_s`` has passed since GitHub answered the last edit: 0 when
        there was none or it was long ago, never more than ``interval_s``."""
        last = self._last
        if last is None:
            return 0.0
        return min(self.interval_s, max(0.0, self.interval_s - (self._clock.monotonic() - last)))

    def answered(self) -> None:
        """GitHub answered an edit now (taken or refused): the next one is ``interval_s`` after it."""
        self._last = self._clock.monotonic()


class EndEdits:
    """The run's last edits, made one after another by one thread once the spacing allows."""

    def __init__(self, spacing: EditSpacing, clock: Clock) -> None:
        self._spacing, self._clock = spacing, clock
        self._queue: deque[Callable[[], object]] = deque()
        self._lock = threading.Lock()
        self._drop = threading.Event()
        self._thread: threading.Thread | None = None

    def add(self, write: Callable[[], object]) -> None:
        """Make the edit ``write`` after those asked for before it, once ``interval_s`` has passed
        since the previous one was answered (the wait is at most ``interval_s``)."""
        with self._lock:
            self._queue.append(write)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="fullsend-status-end", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    self._thread = None
                    return
                write = self._queue.popleft()
            delay = self._spacing.left()
            if delay > 0 and (self._drop.is_set() or self._clock.wait(self._drop, delay)):
                continue  # dropped (a cancelled run): an edit that would wait is not made
            write()
            self._spacing.answered()

    def wait(self, drop: bool = False) -> None:
        """Wait until every edit asked for is made or dropped (each spacing wait at most
        ``interval_s``, each request bounded by the forge's timeouts); ``drop``: from now on an
        edit that would wait out the spacing is not made (a cancelled run), one in flight completes."""
        if drop:
            self._drop.set()
        with self._lock:
            thread = self._thread
        if thread is not None and thread.is_alive():  # never started: a signal landed in add
            thread.join()
