"""What the run saw and did, in order: fed to the log, the step summary and ``fullsend demo``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True)
class Event:
    """One timeline row: when, what kind (``poll``, ``judge``, ``steer``, ``ack``, ``withdrawn``
    (an acknowledgement that no longer counts), ``settle``, ``skip``, ``receipt``, ``agent``,
    ``left``), the rule id when a decision is reported, and text; a ``steer`` row also names who
    made the updates it carried (``authors``: logins, as the forge gives them)."""

    at: datetime
    kind: str
    text: str
    rule_id: str = ""
    run_ids: tuple[int, ...] = ()
    authors: tuple[str, ...] = ()


@dataclass
class Timeline:
    """A thread-safe list of events with an optional live listener (the demo prints as it goes)."""

    events: list[Event] = field(default_factory=list)
    listener: Callable[[Event], None] | None = None
    _subscribers: list[Callable[[Event], None]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def subscribe(self, listener: Callable[[Event], None]) -> None:
        """Also call ``listener`` with every event added from now on (after :attr:`listener`)."""
        with self._lock:
            self._subscribers.append(listener)

    def add(
        self,
        at: datetime,
        kind: str,
        text: str,
        rule_id: str = "",
        run_ids: tuple[int, ...] = (),
        authors: tuple[str, ...] = (),
    ) -> Event:
        event = Event(at, kind, text, rule_id, tuple(run_ids), tuple(authors))
        with self._lock:
            self.events.append(event)
            subscribers = list(self._subscribers)
        if self.listener:
            self.listener(event)
        for listener in subscribers:
            listener(event)
        return event

    def of_kind(self, *kinds: str) -> list[Event]:
        with self._lock:
            return [e for e in self.events if e.kind in kinds]
