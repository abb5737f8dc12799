"""The clock: the only place that reads wall time or waits (docs/architecture.md "Layers", "Threads and time").

:class:`SystemClock` is real time and implements ``fullsend.ports.Clock``.  Every wait is an
``Event.wait``, so whoever sets the event (a turn end, a closed session, a cancellation) ends the
wait at once.  The tests' virtual time is ``tests/doubles/virtual_clock.py``.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime


class SystemClock:
    """Real time.  ``sleep`` is an ``Event.wait`` so :meth:`wake` can interrupt it.

    Implements ``fullsend.ports.Clock``.
    """

    def __init__(self) -> None:
        self._stop = threading.Event()

    def now(self) -> datetime:
        """Aware UTC now."""
        return datetime.now(UTC)

    def monotonic(self) -> float:
        """Monotonic seconds (for durations only)."""
        return time.monotonic()

    def sleep(self, seconds: float) -> bool:
        """Wait ``seconds``; return False when woken early by :meth:`wake`."""
        if seconds <= 0:
            return not self._stop.is_set()
        return not self._stop.wait(seconds)

    def wake(self) -> None:
        """Interrupt every current and future sleep (used on cancellation)."""
        self._stop.set()

    def wait(self, wake: threading.Event, timeout_s: float) -> bool:
        """Wait until ``wake`` is set or ``timeout_s`` seconds pass; True when ``wake`` is set."""
        return wake.wait(timeout_s) if timeout_s > 0 else wake.is_set()

    def join(self, thread: threading.Thread, timeout_s: float) -> bool:
        """Wait at most ``timeout_s`` seconds for ``thread``; True when it has finished."""
        thread.join(max(0.0, timeout_s))
        return not thread.is_alive()
