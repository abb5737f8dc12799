"""What a watcher is given and what it remembers (docs/architecture.md "Watcher").

* :class:`WatchConfig` — the runner's inputs, units in names.
* :class:`WatchPorts` — what the watcher talks to: the forge, the agent's steerer under the
  sandbox lock, the clock, the run's log and timeline, the wording of the steer text.
* :class:`Carry` — what one iteration's watcher hands the next (docs/architecture.md "Agent iterations").
* :class:`WatchResult` — what a watch found and did, frozen, as its callers read it.
* :class:`WatchState` — everything one watcher knows and has done.  The watch loop
  (``fullsend.app.watch.watcher``) and one poll-and-steer cycle (``fullsend.app.watch.cycle``)
  read and update this record and nothing else.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from fullsend.app.timeline import Timeline
from fullsend.core.delta.records import BaselineState
from fullsend.core.model import RunListing, WorkflowRun
from fullsend.core.prose import Wording
from fullsend.core.provenance.verdicts import MyRun
from fullsend.core.watch.gate import Gate
from fullsend.core.watch.settle import SettleState
from fullsend.core.watch.steer import DeliveredSteer
from fullsend.ports import Clock, Forge, Log, Steerer


@dataclass(frozen=True)
class WatchConfig:
    """Inputs the runner supplies, units in names.

    ``deadline``: wall-clock end of the watch (``settle.watch_deadline``), ``None`` for none.
    ``max_steers`` ≤ 0 → 2; ``min_remaining`` ≤ 0 → 5 min; ``poll_interval_s`` ≤ 0 → 5 s (W13).
    ``stage_hints``: ``[$GITHUB_JOB, harness slug]`` for resolving my stage job.
    """

    run_id: int
    run_name: str
    item_number: int
    self_logins: frozenset[str]
    started_at: datetime
    deadline: datetime | None = None
    max_steers: int = 0
    min_remaining: timedelta = timedelta(0)
    poll_interval_s: float = 0.0
    env_head_sha: str = ""
    stage_hints: tuple[str, ...] = ()


@dataclass(frozen=True)
class WatchPorts:
    """What a watcher talks to.  Every ``steerer`` call is made holding ``lock``
    (docs/architecture.md "Threads and time")."""

    forge: Forge
    steerer: Steerer
    sandbox_name: str
    lock: threading.Lock
    clock: Clock
    log: Log
    timeline: Timeline
    wording: Wording


@dataclass
class Carry:
    """State carried from one iteration's watcher to the next (docs/architecture.md "Agent iterations").

    ``seen``: the judged set; ``observed``: issue_comment runs by id; ``baseline``: the delta
    baseline and content snapshot after the last delivery (its ``since``, plus
    head/labels/title/body); ``steers``: steers spent in the run (floored at 0 by
    :func:`fullsend.core.watch.settle.prior_steers` when a watcher takes it).  Watchers update it
    in place.
    """

    seen: set[int] = field(default_factory=set)
    observed: dict[int, WorkflowRun] = field(default_factory=dict)
    baseline: BaselineState | None = None
    steers: int = 0


@dataclass(frozen=True)
class WatchResult:
    """What one watch found and did, as ``Watcher.watch`` returns it (``Watcher.result`` mid-run).

    ``settle_reason``: the rule id it settled with (docs/rules.md#settle; ``""`` while it runs).
    ``delivered``: every steer the steerer accepted, in order; ``last_steer_at`` the last one's
    instant.  ``left``: (follow-up run id, rule id of why) pairs left to the queued run;
    ``left_to_queued``: ids dropped from a delivered steer.  ``session_lost``: the agent session
    was lost during a steer interrupt.  ``me``: my run's facts (``None`` before Start).
    ``steers``: steers spent across the run (``PriorSteers``).  ``head``: the last head the agent
    was told about (``""`` for an issue); ``baseline``: the next delta window start.
    ``seen_run_ids``: the judged set, ascending.
    """

    settle_reason: str = ""
    delivered: tuple[DeliveredSteer, ...] = ()
    last_steer_at: datetime | None = None
    left: tuple[tuple[int, str], ...] = ()
    left_to_queued: tuple[int, ...] = ()
    session_lost: bool = False
    me: MyRun | None = None
    steers: int = 0
    head: str = ""
    baseline: datetime | None = None
    seen_run_ids: tuple[int, ...] = ()


@dataclass
class WatchState:
    """Everything one watcher knows and has done.

    Across iterations (in ``carry``): the judged set, observed runs, the delta baseline, steers
    spent.  Fixed at Start: ``me`` (my run's facts) and ``self_logins``.  Per cycle:
    ``undecided`` (run id → rule id of a pending verdict, or ``accepted`` while its batch is in
    delivery), ``reported`` ((run, rule, outcome) already logged), ``said`` (kinds already
    warned once), ``polls`` (listings made) and ``last_poll_at``.  Deliveries: ``delivered``,
    ``last_steer_at``, ``left_to_queued`` (ids dropped from a delivered steer), ``left`` ((run
    id, why) pairs left to the queued run), ``session_lost``.  The loop: ``settle`` (the
    settle machine's memory), ``next_tick_s`` (``Clock.monotonic`` seconds of the next tick)
    and, once it ends, ``settle_reason`` (a rule id of docs/rules.md#settle).  ``paused_until``:
    when a rate limit GitHub reported ends (the polls wait for it; docs/rules.md#rate-limited).
    ``gate``: the listing gate's memory; ``list_since``: the listing's moving ``created>=`` bound
    (``None``: my run's start) (docs/architecture.md "Listing gate"); ``judged_listing``: the
    last listing judged run by run (the forge returns that object again while its pages are
    unchanged).
    """

    carry: Carry = field(default_factory=Carry)
    me: MyRun | None = None
    self_logins: frozenset[str] = frozenset()
    undecided: dict[int, str] = field(default_factory=dict)
    reported: set[tuple[int, str, str]] = field(default_factory=set)
    said: set[str] = field(default_factory=set)
    polls: int = 0
    last_poll_at: datetime | None = None
    delivered: list[DeliveredSteer] = field(default_factory=list)
    last_steer_at: datetime | None = None
    left_to_queued: list[int] = field(default_factory=list)
    left: list[tuple[int, str]] = field(default_factory=list)
    session_lost: bool = False
    settle: SettleState = field(default_factory=SettleState)
    next_tick_s: float = 0.0
    settle_reason: str = ""
    paused_until: datetime | None = None
    gate: Gate = field(default_factory=Gate)
    list_since: datetime | None = None
    judged_listing: RunListing | None = None

    @property
    def baseline(self) -> BaselineState | None:
        """The delta baseline and content snapshot (the carry's; ``None`` before Start)."""
        return self.carry.baseline

    @property
    def steers(self) -> int:
        """Steers spent across the run, including earlier iterations."""
        return self.carry.steers

    def judged(self, run_ids: Iterable[int]) -> None:
        """Add ``run_ids`` to the judged set; they are no longer undecided."""
        for run_id in run_ids:
            self.carry.seen.add(run_id)
            self.undecided.pop(run_id, None)

    def leave_undecided(self, reason: str) -> None:
        """At the end of the watch: every undecided, unjudged run is left to the queued run.

        Its why is its pending rule id, or ``reason`` (the settle reason) for a run that was
        accepted but never delivered.
        """
        self.left.extend(self.undecided_left(reason))

    def undecided_left(self, reason: str) -> list[tuple[int, str]]:
        """The ``(run id, why)`` pairs :meth:`leave_undecided` would add, without adding them."""
        return [
            (run_id, why if why != "accepted" else reason)
            for run_id, why in sorted(self.undecided.items())
            if run_id not in self.carry.seen
        ]
