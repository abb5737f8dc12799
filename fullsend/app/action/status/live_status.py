"""The status comment kept up to date while the run works (docs/architecture.md "Status comments").

:class:`LiveStatus` listens to the run's timeline and edits the start comment with the phase and
each steer sent (which follow-up runs, when), marked acknowledged as soon as the runtime
acknowledges it, while the agent still runs (the ``ack`` row the iteration adds live; one that
comes before its steer's row waits for it), and marked withdrawn when that acknowledgement no
longer counts (a ``withdrawn`` row); the receipt is linked from the terminal status.  Edits are
coalesced and rate-limited: at most one per ``interval_s`` seconds (GitHub's secondary limits on
content creation; docs/adopting.md "The status comment, and what steering saved"), made by a
thread of its own, so a listener call never waits on the network and the watcher is never held.
A failed edit is warned once and never fails the run; :meth:`LiveStatus.close` waits for an edit
in flight, so the terminal status, written after it, is never overwritten by a late progress edit.
Every edit of the run, progress or not, keeps the spacing of one clock (:attr:`LiveStatus.spacing`);
the closing edit (:meth:`LiveStatus.last_word`) and the terminal status's edits go through
:attr:`LiveStatus.end`, a thread of its own while the run's end work goes on;
:meth:`LiveStatus.wait_last_word` waits for them at the very end.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from typing import Protocol

from fullsend.app.action.status.edit_spacing import EditSpacing, EndEdits
from fullsend.app.timeline import Event
from fullsend.ports import Clock, Log

#: Phases in the order a run goes through them, as the comment shows them.
WORKING, SETTLING, FINISHING = "agent working", "settling: no further steers", "checking the result"
#: The start comment's last word when the terminal status had to go in a comment of its own.
DONE_BELOW = "finished: the final status is in a later comment"


@dataclass
class SteerRow:
    """One steer as the comment lists it: its number, the follow-up run ids, when it was sent and,
    once the runtime said so, when it was acknowledged; ``withdrawn`` once an acknowledgement of it
    was taken back (then ``acknowledged_at`` is ``None`` again); ``authors``: who made the updates
    (logins, as the forge gives them; shown inert)."""

    number: int
    run_ids: tuple[int, ...]
    sent_at: datetime
    acknowledged_at: datetime | None = None
    withdrawn: bool = False
    authors: tuple[str, ...] = ()


@dataclass
class Progress:
    """What the live comment shows; changed only under :class:`LiveStatus`'s lock."""

    phase: str = WORKING
    steers: list[SteerRow] = field(default_factory=list)
    version: int = 0
    early: dict[int, datetime] = field(default_factory=dict)  # acks whose steer row has not come yet


class ProgressWriter(Protocol):
    """What ``LiveStatus`` edits through (``fullsend.app.action.status.status.StatusComment``)."""

    def progress(self, phase: str, steers: Sequence[SteerRow]) -> bool:
        """Show ``phase`` and ``steers`` in the start comment; True when GitHub took the edit."""
        ...


class LiveStatus:
    """Edits one run's start comment as its timeline grows, through ``status`` (the run's
    ``StatusComment``); one daemon thread, started on creation."""

    def __init__(self, status: ProgressWriter, clock: Clock, interval_s: float, log: Log) -> None:
        self._status, self._clock, self._interval_s, self._log = status, clock, interval_s, log
        self._progress = Progress()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._closed = False
        self._shown = 0  # the progress version last written
        self.spacing = EditSpacing(clock, interval_s)  # the run's one spacing clock, every edit's
        self.end = EndEdits(self.spacing, clock)  # the edits once closed: closing, terminal, receipt link
        self._last_word_asked = False
        self.edits = 0  # edits made (for the summary and tests)
        self._thread = threading.Thread(target=self._run, name="fullsend-live-status", daemon=True)
        self._thread.start()

    # ---- listener (any thread; never blocks on I/O) ---------------------------------
    def on_event(self, event: Event) -> None:
        """Fold one timeline event into the progress and ask for an edit when it changed."""
        with self._lock:
            if self._closed or not self._apply(event):
                return
            self._progress.version += 1
        self._wake.set()

    def _apply(self, event: Event) -> bool:
        p = self._progress
        if event.kind == "steer":
            early = [p.early.pop(i) for i in event.run_ids if i in p.early]
            acked = min(early, default=None)
            p.steers.append(SteerRow(len(p.steers) + 1, event.run_ids, event.at, acked, authors=event.authors))
            return True
        if event.kind in ("ack", "withdrawn"):
            return _acknowledge(p, event)
        if event.kind == "settle" and p.phase == WORKING:
            p.phase = SETTLING
            return True
        if event.kind == "agent" and event.text.startswith("agent exited"):
            p.phase = FINISHING
            return True
        if event.kind == "agent" and event.text.startswith("agent launched") and p.phase != WORKING:
            p.phase = WORKING  # the next iteration of a validation loop
            return True
        return False

    # ---- the editing thread -----------------------------------------------------------
    def _run(self) -> None:
        """Wait for a change (a blocking wait, no timed loop), keep ``interval_s`` since the last
        edit was answered, then write the latest progress: changes in between are coalesced into
        one edit."""
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._stop.is_set():
                return
            remaining = self.spacing.left()
            if remaining > 0 and self._clock.wait(self._stop, remaining):
                return
            with self._lock:
                version, snapshot = self._progress.version, _copy(self._progress)
            if version != self._shown:
                if self._status.progress(snapshot.phase, snapshot.steers):
                    self.edits += 1
                self.spacing.answered()  # once GitHub has the edit: the next is interval_s after it
                self._shown = version

    def snapshot(self) -> Progress:
        """A copy of the progress as it stands."""
        with self._lock:
            return _copy(self._progress)

    def close(self) -> None:
        """Stop editing: an edit in flight finishes first (bounded by the forge's timeouts), so the
        terminal status written next is the comment's last word."""
        with self._lock:
            self._closed = True
        self._stop.set()
        self._wake.set()
        self._thread.join()

    def last_word(self, write: Callable[[list[SteerRow]], bool]) -> None:
        """After :meth:`close`: the closing edit, ``write`` of the steers as they stand, made by
        :attr:`end` once ``interval_s`` has passed since the last edit (at once when that was long
        ago; the wait is at most ``interval_s``), so the end work goes on meanwhile.  Once per
        run, and only after a progress edit."""
        with self._lock:
            if not self._closed or self._last_word_asked or not self.edits:
                return
            self._last_word_asked = True
            steers = _copy(self._progress).steers
        self.end.add(partial(self._write_last, write, steers))

    def _write_last(self, write: Callable[[list[SteerRow]], bool], steers: list[SteerRow]) -> None:
        if write(steers):
            self.edits += 1

    def wait_last_word(self, drop: bool = False) -> None:
        """Wait for the edits :attr:`end` was asked for (the closing one, the terminal status's),
        each spacing wait at most ``interval_s``, each request bounded by the forge's timeouts;
        ``drop``: one that would wait out the spacing is not made (a cancelled run)."""
        self.end.wait(drop)


def _acknowledge(p: Progress, event: Event) -> bool:
    """Mark the first steer row ``event`` (an ``ack`` or ``withdrawn`` row) concerns; an ack that
    comes before its steer's row (the runtime can acknowledge before ``steer`` returns) is kept
    for it.  True when a row changed."""
    acked = event.kind == "ack"
    for row in p.steers:
        if (row.acknowledged_at is None) == acked and set(event.run_ids) & set(row.run_ids):
            row.acknowledged_at, row.withdrawn = (event.at, False) if acked else (None, True)
            return True
    for message_id in event.run_ids:
        if acked:
            p.early.setdefault(message_id, event.at)
        else:
            p.early.pop(message_id, None)
    return False


def _copy(progress: Progress) -> Progress:
    rows = [replace(r) for r in progress.steers]
    return Progress(progress.phase, rows, progress.version)
