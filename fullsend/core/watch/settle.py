"""The settle rule as a pure state machine (docs/architecture.md "Settle").

The app's watch loop (``fullsend.app.watch.watcher``) owns the waiting; this module owns every decision.
For each input the loop asks one question and gets a :class:`Decision`:

* :func:`at_start` — before the first wait: is the per-run steer cap already spent?
* :func:`before_tick` / :func:`before_turn_end` — may this tick / turn end poll at all?
  (``low-on-time``; a stale turn end is ignored)
* :func:`after_tick` / :func:`after_turn_end` — given that poll's :class:`Outcome`, keep
  watching or settle, and with which reason;
* :func:`deadline_reached` — the wall-clock deadline.

Settle reasons are rule ids (docs/rules.md#settle): ``turn-end-nothing-new``,
``verdictless-polls-exhausted``, ``cap-reached``, ``deadline``, ``low-on-time``,
``session-closed``, ``cancelled``, and the project id ``rate-limited`` (a poll found GitHub's rate
limit holding past the steer window).  ``stale-turn-end`` names the ignored input (a project id).

Project decision: :func:`at_start` settles at once with ``cap-reached`` when
earlier validation iterations already spent the cap, instead of waiting for the first tick —
no steer can come, so the session must not be held open for one.

Pure: no clock reads (``now`` is always a parameter), no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import Enum

MAX_RETRY_POLLS = 4  # consecutive verdict-less polls after the agent finished (at least)
AWAITING_BUDGET_S = 120.0  # … and up to this long: 4 polls of the former 30 s default …
RETRY_POLLS_MAX = 24  # … in at most this many polls (120 s at the 5 s default)
DEFAULT_MAX_STEERS = 2
# 5 s: a gated tick of a quiet item costs no counted request (docs/architecture.md "Listing gate").
DEFAULT_POLL_INTERVAL_S = 5.0
DEFAULT_MIN_REMAINING = timedelta(minutes=5)
CODEX_INTERRUPT_COST = timedelta(seconds=12)  # configurable constant (older version: 50 s)
TOKEN_LIFE = timedelta(minutes=60)  # token life
TOKEN_MARGIN = timedelta(minutes=10)  # margin: the watch ends this long before the token does

# Settle reasons.
TURN_END_NOTHING_NEW = "turn-end-nothing-new"
VERDICTLESS_POLLS_EXHAUSTED = "verdictless-polls-exhausted"
CAP_REACHED = "cap-reached"
DEADLINE = "deadline"
LOW_ON_TIME = "low-on-time"
SESSION_CLOSED = "session-closed"
CANCELLED = "cancelled"
RATE_LIMITED = "rate-limited"  # project id: GitHub's rate limit outlasts the steer window
STALE_TURN_END = "stale-turn-end"  # project id: a turn end a steer already superseded (ignored)

SETTLE_REASONS = (
    TURN_END_NOTHING_NEW,
    VERDICTLESS_POLLS_EXHAUSTED,
    CAP_REACHED,
    DEADLINE,
    LOW_ON_TIME,
    SESSION_CLOSED,
    CANCELLED,
    RATE_LIMITED,
)


class Outcome(Enum):
    """One poll-and-steer cycle's outcome."""

    EMPTY = "empty"  # a verdict was reached and there is nothing to wait for
    STEERED = "steered"
    RETRY = "retry"  # no verdict: a transient failure or a pending candidate
    CLOSED = "closed"  # the session can no longer take a steer (terminal)
    LIMITED = "limited"  # GitHub's rate limit holds past the steer window: nothing more can be read (terminal)


class Action(Enum):
    """What the loop does next."""

    POLL = "poll"  # run one poll-and-steer cycle, then call after_tick / after_turn_end
    CONTINUE = "continue"  # keep watching
    IGNORE = "ignore"  # drop this input (a stale turn end) and keep watching
    SETTLE = "settle"  # stop watching; ``reason`` is a settle reason


@dataclass(frozen=True)
class Decision:
    """An :class:`Action` and, for ``SETTLE`` / ``IGNORE``, its rule id."""

    action: Action
    reason: str = ""

    @property
    def settles(self) -> bool:
        return self.action is Action.SETTLE


POLL = Decision(Action.POLL)
CONTINUE = Decision(Action.CONTINUE)
IGNORE_STALE = Decision(Action.IGNORE, STALE_TURN_END)


def settle_for(reason: str) -> Decision:
    """A ``SETTLE`` decision; ``reason`` must be one of :data:`SETTLE_REASONS` (``ValueError`` otherwise)."""
    if reason not in SETTLE_REASONS:
        raise ValueError(f"unknown settle reason {reason!r}")
    return Decision(Action.SETTLE, reason)


@dataclass(frozen=True)
class SettleState:
    """The loop's memory.

    ``awaiting``: a turn end's poll could not conclude, so ticks now count toward
    :data:`MAX_RETRY_POLLS`; ``retries``: verdict-less polls since that turn end (the turn-end
    poll counts as the first); ``last_steer_at``: the delivery instant of the last steer,
    against which stale turn ends are judged.
    """

    awaiting: bool = False
    retries: int = 0
    last_steer_at: datetime | None = None


# ---- configuration defaults (docs/architecture.md "Watcher") ------------------------------------
def effective_max_steers(max_steers: int) -> int:
    """The steer cap in force: ``max_steers``, or 2 when ≤ 0."""
    return max_steers if max_steers > 0 else DEFAULT_MAX_STEERS


def effective_poll_interval_s(poll_interval_s: float) -> float:
    """The poll interval in force, in seconds: ``poll_interval_s``, or 5 when ≤ 0."""
    return poll_interval_s if poll_interval_s > 0 else DEFAULT_POLL_INTERVAL_S


def retry_polls(poll_interval_s: float) -> int:
    """Consecutive verdict-less polls after a turn end before settling: :data:`MAX_RETRY_POLLS`,
    or, at a shorter ``poll_interval_s`` (seconds), as many as cover :data:`AWAITING_BUDGET_S`,
    at most :data:`RETRY_POLLS_MAX`: a pending Route job never gets less time than it did at the
    same interval with 4 polls, and 2 minutes at the 5 s default
    (docs/rules.md#verdictless-polls-exhausted)."""
    if poll_interval_s <= 0:
        return MAX_RETRY_POLLS
    return max(MAX_RETRY_POLLS, min(RETRY_POLLS_MAX, math.ceil(AWAITING_BUDGET_S / poll_interval_s - 1e-9)))


def effective_min_remaining(min_remaining: timedelta) -> timedelta:
    """The time to keep before the deadline: ``min_remaining``, or 5 min when ≤ 0."""
    return min_remaining if min_remaining > timedelta(0) else DEFAULT_MIN_REMAINING


def prior_steers(steers: int) -> int:
    """Steers spent by earlier iterations, floored at 0."""
    return max(0, steers)


# ---- time: low on time, the deadline -------------------------------------------------------
def low_on_time(deadline: datetime | None, now: datetime, min_remaining: timedelta) -> bool:
    """Low on time: a deadline is set and less than ``min_remaining`` is left before it."""
    return deadline is not None and (deadline - now) < min_remaining


def deadline_reached(deadline: datetime | None, now: datetime) -> bool:
    """The watch deadline has passed (``now`` at or after it); never without a deadline."""
    return deadline is not None and now >= deadline


def watch_deadline(
    run_started_at: datetime,
    timeout_minutes: int,
    token_expires_at: datetime | None = None,
    token_life: timedelta = TOKEN_LIFE,
    margin: timedelta = TOKEN_MARGIN,
) -> datetime:
    """The watch deadline: run start + min(timeout, token life − margin = 50 min); no later than
    ``expires_at`` − margin.

    ``token_expires_at`` is the minted token's expiry when known (``None`` for a ``role_token``
    input, whose life is unknown).
    """
    budget = min(timedelta(minutes=timeout_minutes), token_life - margin)
    deadline = run_started_at + budget
    if token_expires_at is not None:
        deadline = min(deadline, token_expires_at - margin)
    return deadline


def min_remaining_for(
    runtime: str, interrupt_cost: timedelta = CODEX_INTERRUPT_COST, interrupts: bool = True
) -> timedelta:
    """The time to keep before the deadline: 5 min; the ``codex`` runtime adds its interrupt cost
    (12 s by default) when its transport steers by interrupting (exec), not on the live app-server
    (``interrupts=False``)."""
    return DEFAULT_MIN_REMAINING + (interrupt_cost if runtime == "codex" and interrupts else timedelta(0))


# ---- the machine ---------------------------------------------------------------------------
def _cap(steers: int, max_steers: int) -> Decision:
    return settle_for(CAP_REACHED) if steers >= max_steers else CONTINUE


def at_start(steers: int, max_steers: int) -> Decision:
    """Before the first wait: ``cap-reached`` when the carried steers already reach the cap."""
    return _cap(steers, max_steers)


def before_tick(now: datetime, deadline: datetime | None, min_remaining: timedelta) -> Decision:
    """A tick fired: ``low-on-time`` settles rather than steers; otherwise poll."""
    return settle_for(LOW_ON_TIME) if low_on_time(deadline, now, min_remaining) else POLL


def turn_end_is_stale(state: SettleState, turn_end_at: datetime) -> bool:
    """A turn end not strictly after the last steer's delivery instant is stale."""
    return state.last_steer_at is not None and not turn_end_at > state.last_steer_at


def before_turn_end(
    state: SettleState, turn_end_at: datetime, now: datetime, deadline: datetime | None, min_remaining: timedelta
) -> Decision:
    """A turn end arrived: ignore it when stale, settle when low on time, else poll."""
    if turn_end_is_stale(state, turn_end_at):
        return IGNORE_STALE
    return settle_for(LOW_ON_TIME) if low_on_time(deadline, now, min_remaining) else POLL


#: While the agent waits at a turn end for a verdict, a rate-limit pause that ends later than this
#: from now settles the run (``rate-limited``): the agent is not held idle for the limit's sake.
AWAITING_PAUSE_MAX = timedelta(seconds=60)


def pause_outlasts_the_wait(awaiting: bool, paused_until: datetime | None, now: datetime) -> bool:
    """True when the agent waits at a turn end (``awaiting``) and the polls are paused by a rate
    limit ending more than :data:`AWAITING_PAUSE_MAX` after ``now`` (aware instants)."""
    return awaiting and paused_until is not None and paused_until - now > AWAITING_PAUSE_MAX


def _steered(state: SettleState, steered_at: datetime | None) -> SettleState:
    return replace(state, awaiting=False, retries=0, last_steer_at=steered_at or state.last_steer_at)


def after_tick(
    state: SettleState,
    outcome: Outcome,
    steers: int,
    max_steers: int,
    steered_at: datetime | None = None,
    max_retries: int = MAX_RETRY_POLLS,
) -> tuple[SettleState, Decision]:
    """Apply a tick's poll outcome.

    Mid-turn (not ``awaiting``) Empty and Retry just continue: a mid-turn steer is the live path.
    Once a turn end is awaiting a verdict, Empty settles (``turn-end-nothing-new``) and the
    ``max_retries``-th consecutive Retry (:func:`retry_polls`; 4 by default) settles
    (``verdictless-polls-exhausted``).  ``steered_at`` is the
    delivery instant when ``outcome`` is STEERED.  Then the cap is checked (``cap-reached``).
    """
    if outcome is Outcome.CLOSED:
        return state, settle_for(SESSION_CLOSED)
    if outcome is Outcome.LIMITED:
        return state, settle_for(RATE_LIMITED)
    if outcome is Outcome.STEERED:
        state = _steered(state, steered_at)
    elif state.awaiting and outcome is Outcome.EMPTY:
        return state, settle_for(TURN_END_NOTHING_NEW)
    elif state.awaiting:
        state = replace(state, retries=state.retries + 1)
        if state.retries >= max_retries:
            return state, settle_for(VERDICTLESS_POLLS_EXHAUSTED)
    return state, _cap(steers, max_steers)


def after_turn_end(
    state: SettleState, outcome: Outcome, steers: int, max_steers: int, steered_at: datetime | None = None
) -> tuple[SettleState, Decision]:
    """Apply the poll made at a (non-stale) turn end.

    Empty settles (``turn-end-nothing-new``: the agent finished and nothing new is conclusively
    pending — permanent listing errors land here too); Closed settles (``session-closed``);
    Retry starts awaiting with one verdict-less poll counted; Steered clears it.  Then the cap.
    """
    if outcome is Outcome.EMPTY:
        return state, settle_for(TURN_END_NOTHING_NEW)
    if outcome is Outcome.CLOSED:
        return state, settle_for(SESSION_CLOSED)
    if outcome is Outcome.LIMITED:
        return state, settle_for(RATE_LIMITED)
    state = replace(state, awaiting=True, retries=1) if outcome is Outcome.RETRY else _steered(state, steered_at)
    return state, _cap(steers, max_steers)
