"""The virtual clock with every sleep recorded, for the rate-limit tests (issue 18).

``tests.doubles.virtual_clock.VirtualClock`` moves virtual time at once when a thread outside its
world sleeps, as the tests' own threads do; this subclass also keeps what each sleep asked for
in ``slept_s``, so a test can assert the waits GitHub's rate-limit rule calls for.
"""

from __future__ import annotations

from datetime import UTC, datetime

from tests.doubles.virtual_clock import VirtualClock


class RecordingVirtualClock(VirtualClock):
    """``VirtualClock`` starting at ``origin`` (default: the real now, to the second), sleeps recorded."""

    def __init__(self, origin: datetime | None = None) -> None:
        super().__init__(origin or datetime.now(UTC).replace(microsecond=0))
        self.slept_s: list[float] = []

    def sleep(self, seconds: float) -> bool:
        self.slept_s.append(seconds)
        return super().sleep(seconds)
