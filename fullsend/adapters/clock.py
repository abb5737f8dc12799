"""The system clock: the only place that reads wall time or sleeps (docs/architecture.md "Layers")."""

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
