"""The listing gate and the listing's moving ``created>=`` bound (docs/architecture.md "Listing gate").

Pure: no I/O.  A watcher lists the shim's runs (a counted read whenever any shim run of the
repository changed) only when something on its own work item could have produced a follow-up run:

* the work item's record changed (its conditional reads, free when unchanged, answered a new
  version): the gate opens for :data:`GATE_WINDOW_S` seconds, or until a listing shows a run of
  my item created at or after the change's ``updated_at`` with nothing pending (:func:`settled`);
* a candidate is pending (a run listed but not yet decided);
* the backstop: at most :data:`BACKSTOP_S` seconds after the last listing;
* a forced listing (a turn end, or a tick while a turn end awaits a verdict: every settle
  decision rests on an unconditional listing).

A gate miss can only delay a steer to the backstop or the final listing, never lose it; a
follow-up run that is never absorbed is left to its own queued run (safe).

Times are ``Clock.monotonic`` seconds (floats); instants of the bound are aware UTC datetimes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

GATE_WINDOW_S = 30.0  # an item change opens the gate this long: GitHub creates and lists the run meanwhile
BACKSTOP_S = 600.0  # an unconditional listing at least this often, whatever the gate says
BOUND_MARGIN = timedelta(minutes=10)  # the moving created>= bound stays this far below what it must keep
BOUND_STEP = timedelta(minutes=10)  # … and moves in whole steps from my run's start, so its ETag holds between
BOUND_MOVE_RUNS = 50  # … and only when it drops this many listed runs (half a page): a move is a counted read

OPEN_CHANGED, OPEN_WINDOW, OPEN_PENDING, OPEN_BACKSTOP, OPEN_FORCED, CLOSED = (
    "changed",
    "window",
    "pending",
    "backstop",
    "forced",
    "",
)


@dataclass(frozen=True)
class Gate:
    """The gate's memory.  ``version``: the item's last version read (``""`` before the first
    read); ``open_until_s``: when the window of the last change closes; ``changed_at``: the
    item's ``updated_at`` at that change (``None``: unknown, the window runs its full length);
    ``last_listing_s``: when the last listing was made (``None`` before the first, which is
    always made)."""

    version: str = ""
    open_until_s: float = float("-inf")
    last_listing_s: float | None = None
    changed_at: datetime | None = None


def decide(
    gate: Gate, now_s: float, version: str | None, pending: bool, forced: bool, changed_at: datetime | None = None
) -> tuple[Gate, str]:
    """Whether to list now: ``(new gate, why)``, ``why`` one of the ``OPEN_*`` reasons or
    :data:`CLOSED` (``""``: do not list).

    ``version``: the item's version just read, or ``None`` when it could not be read (then the
    gate opens: an unknown state never keeps it shut).  The first version read is the baseline
    (the first listing is made anyway: the backstop's).  ``pending``: a candidate is undecided.
    ``changed_at``: the item's newest ``updated_at`` in that version (``None``: unknown).
    """
    first = gate.version == "" and version is not None  # the first read: a baseline, not a change
    changed = version is None or (version != gate.version and not first)
    if changed:
        when = changed_at if version is not None else None
        gate = replace(gate, open_until_s=now_s + GATE_WINDOW_S, changed_at=when)
    if version is not None:
        gate = replace(gate, version=version)
    if forced:
        return gate, OPEN_FORCED
    if gate.last_listing_s is None or now_s - gate.last_listing_s >= BACKSTOP_S:
        return gate, OPEN_BACKSTOP
    if changed:
        return gate, OPEN_CHANGED
    if pending:
        return gate, OPEN_PENDING
    return gate, OPEN_WINDOW if now_s < gate.open_until_s else CLOSED


def listed(gate: Gate, now_s: float) -> Gate:
    """The gate after a listing made at ``now_s`` (the backstop counts from it)."""
    return replace(gate, last_listing_s=now_s)


def settled(gate: Gate, now_s: float, mine_created: Iterable[datetime | None], pending: bool) -> Gate:
    """The gate after a listing made at ``now_s`` that showed my item's runs created at
    ``mine_created``: the window of the last change closes when one of them was created at or
    after the change's ``updated_at`` (GitHub created that change's run: the listing was sent
    after the change was read) and no candidate is ``pending``.  Every doubt keeps it open: an
    unknown ``changed_at`` or ``created_at``, a run older than the change, a pending candidate.
    Later changes open it again; the backstop and a turn end's listing still list.
    """
    if pending or gate.changed_at is None or now_s >= gate.open_until_s:
        return gate
    if any(created is not None and created >= gate.changed_at for created in mine_created):
        return replace(gate, open_until_s=now_s)
    return gate


def moved_bound(
    current: datetime,
    floor: datetime,
    listed_at: datetime,
    undecided: Iterable[datetime | None],
    listed: Iterable[datetime | None],
) -> datetime:
    """The next listing's ``created>=`` bound, from ``current`` (the bound just listed with).

    The candidate: ``listed_at`` (when the last complete listing was sent) or the oldest
    undecided run's ``created_at``, whichever is older, minus :data:`BOUND_MARGIN`, rounded down
    to ``floor`` (my run's start) plus whole :data:`BOUND_STEP` steps, never below ``floor``.
    The bound moves there only when at least :data:`BOUND_MOVE_RUNS` runs of the listing
    (``listed``: their ``created_at``) fall below it: a changed bound is a changed request (a
    counted 200), so a short listing keeps its bound and its 304s, and a long one drops to
    about half a page.

    A run never falls below the bound before it is decided: an undecided run keeps it at or
    below its ``created_at``; a run not yet listed was created after the last listing was sent,
    or appears in the listing within the margin (clock skew and listing lag).  An undecided run
    of unknown ``created_at`` keeps the bound where it is.
    """
    oldest = listed_at
    for created in undecided:
        if created is None:
            return current
        oldest = min(oldest, created)
    candidate = floor + BOUND_STEP * max(0, (oldest - BOUND_MARGIN - floor) // BOUND_STEP)
    dropped = sum(1 for created in listed if created is not None and created < candidate)
    return candidate if candidate > current and dropped >= BOUND_MOVE_RUNS else current
