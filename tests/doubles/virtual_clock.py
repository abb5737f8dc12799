"""A virtual ``Clock`` for the rate-limit tests: ``sleep`` moves time forward at once and is recorded.

``now`` starts at the real UTC now (the simulator stamps with real time) plus every second slept;
``monotonic`` moves with it.  Nothing really sleeps, so a 24-minute limit costs nothing to test.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone


class VirtualClock:
    """Implements ``fullsend.ports.Clock``; ``slept`` lists every wait asked for, in seconds."""

    def __init__(self, start: datetime | None = None) -> None:
        self._start = start or datetime.now(timezone.utc).replace(microsecond=0)
        self._offset_s = 0.0
        self._lock = threading.Lock()
        self.slept: list[float] = []

    def now(self) -> datetime:
        with self._lock:
            return self._start + timedelta(seconds=self._offset_s)

    def monotonic(self) -> float:
        with self._lock:
            return self._offset_s

    def sleep(self, seconds: float) -> bool:
        with self._lock:
            self.slept.append(seconds)
            self._offset_s += max(0.0, seconds)
        return True

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` pass without a sleep being asked for (time the test spends elsewhere)."""
        with self._lock:
            self._offset_s += seconds
