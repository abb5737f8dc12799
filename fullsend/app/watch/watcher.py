"""The watcher: Start, the watch loop and settle (docs/architecture.md "Watcher").

Ports and core only.  One ``Watcher`` serves one agent iteration; it owns no global state.
Provenance is judged by ``fullsend.core.provenance.verdicts`` (fail closed), one cycle is
``fullsend.app.watch.cycle``, every settle decision is ``fullsend.core.watch.settle``'s.  Every
``steer``/``settle`` call is made holding the sandbox lock (docs/architecture.md "Threads and time").

Threads and time: ``watch()`` runs on its own thread; turn ends reach it through a
bounded queue (16, fed non-blockingly); it waits on that queue with a timeout computed from
``Clock.monotonic`` (ticks) and ``Clock.now`` (the deadline), and never sleeps otherwise.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from fullsend.app.action.timeline import Timeline
from fullsend.app.watch.cycle import poll_and_steer
from fullsend.app.watch.reads import read_my_run, read_start_baseline
from fullsend.core.delta.changes import BaselineState
from fullsend.core.model import DeliveredSteer, WorkflowRun
from fullsend.core.provenance.verdicts import MyRun
from fullsend.core.text.prose import Wording
from fullsend.core.watch import settle
from fullsend.core.watch.settle import Outcome, SettleState
from fullsend.core.watch.start import normalize_self_logins
from fullsend.ports import Clock, Forge, Steerer
from fullsend.wording import default_wording

Log = Callable[[str, str], None]
TURN_END_BUFFER = 16  # the runner sends turn ends non-blockingly into a buffer of 16
SETTLE_TIMEOUT_S = 30.0  # the bound on settling the steerer
_WAKE = object()  # queue sentinel: stop() or close_turn_ends() was called


@dataclass
class Carry:
    """State carried from one iteration's watcher to the next (docs/architecture.md "Agent iterations").

    ``seen``: the judged set (``AlreadySeen``); ``observed``: issue_comment runs by id
    (``AlreadyObserved``); ``baseline``: the delta baseline and content snapshot after the last
    delivery (``DeltaBaseline``, plus head/labels/title/body); ``steers``: steers spent in the run
    (``PriorSteers``, floored at 0 when a watcher takes it).  Watchers update it in place.
    """

    seen: set[int] = field(default_factory=set)
    observed: dict[int, WorkflowRun] = field(default_factory=dict)
    baseline: BaselineState | None = None
    steers: int = 0


@dataclass(frozen=True)
class WatchConfig:
    """Inputs the runner supplies, units in names.

    ``deadline``: wall-clock end of the watch (``settle.watch_deadline``), ``None`` for none.
    ``max_steers`` ≤ 0 → 2; ``min_remaining`` ≤ 0 → 5 min; ``poll_interval_s`` ≤ 0 → 30 s.
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


def _minutes(span: timedelta) -> str:
    minutes, seconds = divmod(int(span.total_seconds()), 60)
    return f"{minutes} min" + (f" {seconds} s" if seconds else "")


class Watcher:
    """Finds authorized follow-up runs for one agent iteration and steers the agent with them.

    Use: ``start()`` (raises ``StartRefused`` or ``ForgeError``: steering is then disabled for
    the iteration), then ``watch()`` on its own thread; feed turn ends with ``turn_ended(at)``;
    ``close_turn_ends()`` when the agent exits; ``stop()`` on cancellation.  ``watch()`` settles
    the steerer exactly once on every exit path; ``settle_reason`` then holds its rule id
    (docs/rules.md#settle).

    Outputs: ``delivered``, ``seen_run_ids``, ``observed_runs``, ``steers``, ``baseline``,
    ``head``; and for the step summary ``left`` ((run id, why) pairs left to the queued run),
    ``left_to_queued`` (ids dropped from a delivered steer) and ``session_lost``.
    """

    def __init__(self, forge: Forge, steerer: Steerer, sandbox_name: str, lock: threading.Lock,
                 clock: Clock, config: WatchConfig, log: Log, timeline: Timeline, carry: Carry | None = None,
                 wording: Wording | None = None) -> None:
        self.forge, self.steerer, self.sandbox_name = forge, steerer, sandbox_name
        self.lock, self.clock, self.config, self.log, self.timeline = lock, clock, config, log, timeline
        self.carry = carry if carry is not None else Carry()
        self.carry.steers = settle.prior_steers(self.carry.steers)
        self.carry.observed = {k: r for k, r in self.carry.observed.items() if r.event == "issue_comment"}
        self.wording = wording or default_wording()
        self.max_steers = settle.effective_max_steers(config.max_steers)
        self.poll_interval_s = settle.effective_poll_interval_s(config.poll_interval_s)
        self.min_remaining = settle.effective_min_remaining(config.min_remaining)
        self.self_logins: frozenset[str] = frozenset()
        self.me: MyRun | None = None
        self.state: BaselineState | None = None
        self.delivered: list[DeliveredSteer] = []
        self.last_steer_at: datetime | None = None
        self.left_to_queued: list[int] = []
        self.left: list[tuple[int, str]] = []
        self.undecided: dict[int, str] = {}
        self.reported: set[tuple[int, str, str]] = set()
        self.session_lost = False
        self.settle_reason = ""
        self._once: set[str] = set()
        self._turn_ends: queue.Queue[object] = queue.Queue(TURN_END_BUFFER)
        self._stopped = threading.Event()
        self._closed = threading.Event()
        self._settled = False
        self._settle_lock = threading.Lock()

    # ---- start ----------------------------------------------------------------------
    def start(self) -> MyRun:
        """Read my own run, its jobs and the work item; fix the facts provenance needs.

        Raises:
            StartRefused: any rule fails (the message is safe to log and names the cause).
        """
        self.self_logins = normalize_self_logins(self.config.self_logins)
        cfg = self.config
        me, notes = read_my_run(self.forge, cfg.run_id, cfg.run_name, cfg.item_number, cfg.started_at,
                                cfg.stage_hints)
        for note in notes:
            self.log("info", note)
        self.me = me
        if self.carry.baseline is None:  # a later iteration keeps the baseline of the last delivery
            since = me.fresh_after or cfg.started_at
            self.carry.baseline = read_start_baseline(self.forge, cfg.item_number,
                                                      cfg.run_name or f"#{cfg.item_number}", since, cfg.env_head_sha)
        self.state = self.carry.baseline
        return me

    # ---- inputs from other threads ----------------------------------------------------------
    def turn_ended(self, at: datetime) -> None:
        """A turn ended at ``at`` (aware UTC).  Non-blocking: with 16 signals buffered it is dropped."""
        if isinstance(at, datetime) and not self._closed.is_set():
            self._offer(at)

    def stop(self) -> None:
        """Cancel the watch (SIGTERM, run cancelled): ``watch()`` returns at once and settles."""
        self._stopped.set()
        self._offer(_WAKE)

    def close_turn_ends(self) -> None:
        """The agent exited: no further turn end will come (a closed channel: ``session-closed``).

        The watch ends at once; turn ends still buffered are dropped (nothing can be steered into
        an agent that has exited, so polling for them would only spend API calls)."""
        self._closed.set()
        self._offer(_WAKE)

    def _offer(self, item: object) -> None:
        try:
            self._turn_ends.put_nowait(item)
        except queue.Full:
            pass

    # ---- the loop --------------------------------------------------------------------
    def watch(self) -> None:
        """Run until a settle decision; always settles exactly once."""
        try:
            self.settle_reason = self._loop()
        except Exception as exc:  # a watcher fault must never crash the agent run
            self.log("warning", f"The watcher stopped on an unexpected error ({type(exc).__name__}: {exc}); "
                     f"settling [{settle.SESSION_CLOSED}]")
            self.settle_reason = settle.SESSION_CLOSED
        finally:
            self.left.extend((run_id, why if why != "accepted" else self.settle_reason or settle.CANCELLED)
                             for run_id, why in sorted(self.undecided.items()) if run_id not in self.carry.seen)
            self.settle()

    def _loop(self) -> str:
        decision = settle.at_start(self.carry.steers, self.max_steers)
        if decision.settles:
            return self._settling(decision.reason)
        st = SettleState()
        next_tick = self.clock.monotonic() + self.poll_interval_s
        while True:
            event = self._next_event(next_tick)
            if isinstance(event, str):
                return self._settling(event)
            if event is None:  # a tick
                next_tick = max(next_tick + self.poll_interval_s, self.clock.monotonic())
                st, decision = self._tick(st)
            else:
                st, decision = self._turn_end(st, event)
            if decision.settles:
                return self._settling(decision.reason)

    def _next_event(self, next_tick: float) -> datetime | str | None:
        """Wait for the next input: a turn end (its instant), a tick (``None``) or a settle reason."""
        while True:
            if self._stopped.is_set():
                return settle.CANCELLED
            if self._closed.is_set():
                return settle.SESSION_CLOSED
            now = self.clock.now()
            if settle.deadline_reached(self.config.deadline, now):
                return settle.DEADLINE
            wait_s = next_tick - self.clock.monotonic()
            if self.config.deadline is not None:
                wait_s = min(wait_s, (self.config.deadline - now).total_seconds())
            try:
                item = self._turn_ends.get(timeout=wait_s) if wait_s > 0 else self._turn_ends.get_nowait()
            except queue.Empty:
                if self.clock.monotonic() >= next_tick:
                    return None
                continue
            if isinstance(item, datetime):
                return item

    def _tick(self, st: SettleState) -> tuple[SettleState, settle.Decision]:
        decision = settle.before_tick(self.clock.now(), self.config.deadline, self.min_remaining)
        if decision.settles:
            return st, decision
        outcome = self.poll_and_steer()
        return settle.after_tick(st, outcome, self.carry.steers, self.max_steers, self._steered_at(outcome))

    def _turn_end(self, st: SettleState, at: datetime) -> tuple[SettleState, settle.Decision]:
        decision = settle.before_turn_end(st, at, self.clock.now(), self.config.deadline, self.min_remaining)
        if decision.action is settle.Action.IGNORE:
            self.log("info", f"Ignoring a turn end at {at.isoformat()}: it is not after the steer delivered at "
                     f"{st.last_steer_at.isoformat() if st.last_steer_at else '?'}, "
                     f"which superseded it [{decision.reason}]")
            return st, decision
        if decision.settles:
            return st, decision
        outcome = self.poll_and_steer()
        return settle.after_turn_end(st, outcome, self.carry.steers, self.max_steers, self._steered_at(outcome))

    def _steered_at(self, outcome: Outcome) -> datetime | None:
        return self.last_steer_at if outcome is Outcome.STEERED else None

    def _settling(self, reason: str) -> str:
        """Log the settle decision in the project's words, tagged with its rule id; return it."""
        says = {
            settle.TURN_END_NOTHING_NEW: "The agent's turn ended and nothing new is pending; settling the run",
            settle.VERDICTLESS_POLLS_EXHAUSTED: f"No verdict after {settle.MAX_RETRY_POLLS} polls; settling rather "
                                                "than holding the run",
            settle.CAP_REACHED: f"Steer cap of {self.max_steers} reached; settling the run",
            settle.DEADLINE: "Steer deadline reached; settling the run",
            settle.LOW_ON_TIME: f"Less than {_minutes(self.min_remaining)} of run budget left; settling instead "
                                "of steering",
            settle.SESSION_CLOSED: "The agent session can take no more steers; settling the run",
            settle.CANCELLED: "The watch was cancelled; settling the run",
        }
        self.log("info", f"{says.get(reason, 'Settling the run')} [{reason}]")
        return reason

    # ---- settle -------------------------------------------------------------------------
    def settle(self) -> None:
        """Tell the steerer no more steers will come; exactly once (idempotent), bounded by 30 s.

        Runs on a helper thread so a cancelled watch still settles on its own; an error or a
        timeout is warned, never raised.
        """
        with self._settle_lock:
            if self._settled:
                return
            self._settled = True
        errors: list[BaseException] = []
        worker = threading.Thread(target=self._settle_steerer, args=(errors,), name="fullsend-settle", daemon=True)
        worker.start()
        worker.join(SETTLE_TIMEOUT_S)
        if worker.is_alive():
            self.log("warning", f"Settling the agent session failed: no answer within {SETTLE_TIMEOUT_S:g} s")
        elif errors:
            self.log("warning", f"Settling the agent session failed: {type(errors[0]).__name__}: {errors[0]}")
        reason = self.settle_reason or settle.CANCELLED
        self.timeline.add(self.clock.now(), "settle", f"settled ({reason})", rule_id=reason)

    def _settle_steerer(self, errors: list[BaseException]) -> None:
        try:
            with self.lock:
                self.steerer.settle(self.sandbox_name)
        except Exception as exc:
            errors.append(exc)

    # ---- one cycle --------------------------------------------------------------------
    def poll_and_steer(self) -> Outcome:
        """One poll-and-steer cycle; see docs/architecture.md "Poll-and-steer cycle" and
        ``fullsend.app.watch.cycle``."""
        return poll_and_steer(self)

    def warn_once(self, kind: str, message: str) -> None:
        """Warn the first time a failure of ``kind`` happens in this watcher (one warning per kind)."""
        self._say_once("warning", kind, message)

    def info_once(self, kind: str, message: str) -> None:
        """Log ``message`` the first time ``kind`` happens in this watcher."""
        self._say_once("info", kind, message)

    def _say_once(self, level: str, kind: str, message: str) -> None:
        if kind not in self._once:
            self._once.add(kind)
            self.log(level, message)

    # ---- outputs -----------------------------------------------------------------------
    @property
    def cancelled(self) -> bool:
        """``stop()`` was called: a poll in flight delivers nothing more."""
        return self._stopped.is_set()

    @property
    def steers(self) -> int:
        """Steers spent across the run, including earlier iterations (``PriorSteers``)."""
        return self.carry.steers

    @property
    def head(self) -> str:
        """The last head the agent was told about ("" for an issue)."""
        return self.state.last_head if self.state else ""

    @property
    def baseline(self) -> datetime | None:
        """The next delta window start (``Baseline()``); ``None`` before Start."""
        return self.state.since if self.state else None

    @property
    def seen_run_ids(self) -> list[int]:
        """The judged set, ascending (``SeenRunIDs()``)."""
        return sorted(self.carry.seen)

    @property
    def observed_runs(self) -> list[WorkflowRun]:
        """Observed issue_comment runs, by id (``ObservedRuns()``)."""
        return [self.carry.observed[k] for k in sorted(self.carry.observed)]
