"""The watcher's inputs from other threads, and its one wait (docs/architecture.md "Watcher").

Turn ends arrive through a bounded buffer of 16, fed without blocking (a full buffer drops the
signal); ``close`` (the agent exited) and ``stop`` (cancellation) are flags.  Each input sets
``wake``, the event the watcher's wait through ``Clock.wait`` ends on, so a turn end is handled
as soon as it arrives (docs/architecture.md "Threads and time").
"""

from __future__ import annotations

import queue
import threading
from datetime import datetime

from fullsend.core.watch import settle
from fullsend.ports import Clock

TURN_END_BUFFER = 16  # the runner sends turn ends non-blockingly into a buffer of 16


class Inbox:
    """Turn ends, close and cancel, from the runtime's and the runner's threads.

    Thread-safe.  ``wake`` is set on every input; only :meth:`next_input` (the watcher's
    thread) clears it.
    """

    def __init__(self) -> None:
        self._turn_ends: queue.Queue[datetime] = queue.Queue(TURN_END_BUFFER)
        self.wake = threading.Event()
        self.stopped = threading.Event()
        self.closed = threading.Event()

    def turn_ended(self, at: datetime) -> None:
        """A turn ended at ``at`` (aware UTC).  Non-blocking: with 16 buffered it is dropped; after close, ignored."""
        if not isinstance(at, datetime) or self.closed.is_set():
            return
        try:
            self._turn_ends.put_nowait(at)
        except queue.Full:
            return
        self.wake.set()

    def stop(self) -> None:
        """Cancel the watch."""
        self.stopped.set()
        self.wake.set()

    def close(self) -> None:
        """No further turn end will come (a closed channel)."""
        self.closed.set()
        self.wake.set()

    def next_input(self, clock: Clock, next_tick_s: float, deadline: datetime | None) -> datetime | str | None:
        """Wait for the next input: a turn end (its instant), a tick (``None``) or a settle reason.

        ``next_tick_s`` is on ``clock.monotonic()``'s scale; ``deadline`` is wall-clock (``None``:
        none).  In order: ``cancelled``, ``session-closed`` (buffered turn ends are dropped),
        ``deadline``, a buffered turn end, a due tick; otherwise wait on ``clock`` until the
        earlier of the tick and the deadline, or until an input sets ``wake``.
        """
        while True:
            self.wake.clear()  # before the checks: an input that comes after them sets it again
            if self.stopped.is_set():
                return settle.CANCELLED
            if self.closed.is_set():
                return settle.SESSION_CLOSED
            now = clock.now()
            if settle.deadline_reached(deadline, now):
                return settle.DEADLINE
            try:
                return self._turn_ends.get_nowait()
            except queue.Empty:
                pass
            wait_s = next_tick_s - clock.monotonic()
            if wait_s <= 0:
                return None
            if deadline is not None:
                wait_s = min(wait_s, (deadline - now).total_seconds())
            clock.wait(self.wake, wait_s)
