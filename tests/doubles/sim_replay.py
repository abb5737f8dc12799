"""Replay a watched agent run on virtual time: the real ``Watcher`` against the simulator.

Used by the conditional-polling test (issue 9: an idle hour costs no counted request) and by the
benchmarks (``bench/policies.py``, ``bench/api_cost.py``).  Nothing here sleeps: a
:class:`VirtualClock` is the one clock of the simulator, the GitHub adapter and the watcher, and
:class:`ReplaySession` moves it from one event to the next.

What is real and what is modelled:

* real: every poll is ``Watcher.poll_and_steer`` (listing, provenance, binding, delta, envelope
  text, cap) through ``GitHubForge`` over HTTP to the simulator; every keep-watching / settle
  decision is ``fullsend.core.watch.settle``'s (``before_tick`` / ``after_tick`` /
  ``before_turn_end`` / ``after_turn_end``), applied in the order of ``Watcher.watch``'s loop
  (spec/watcher.md §12); the watcher's own ``settle()`` is called on the way out.
* modelled: the agent.  :class:`VirtualAgent` replays the scripted agent's ``boundary`` echo
  (``fullsend.simulator.agent.main`` with ``SCRIPTED_AGENT_ECHO=boundary``, the real CLI's
  order, implementation-notes §9): a turn works ``turn_s``; lines that arrived meanwhile are
  consumed (acknowledged) at the end of that step and answered with one more ``turn_s / 2``; a
  line arriving while the agent is idle is consumed at once and starts a new turn of ``turn_s``;
  after ``settle`` the agent finishes what it holds and exits.

Why not ``Watcher.watch`` itself: its loop waits on the turn-end queue with a timeout in real
seconds computed from ``Clock.monotonic``, so an accelerated clock cannot shorten its waits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from fullsend.app.action.timeline import Timeline
from fullsend.app.watch.watcher import WatchConfig, Watcher
from fullsend.core.model import SteerMessage
from fullsend.core.watch import settle
from fullsend.core.watch.settle import Outcome, SettleState
from fullsend.core.watch.start import StartRefused
from fullsend.errors import ForgeError, SteerAfterSettle
from fullsend.ports import Forge


class VirtualClock:
    """``fullsend.ports.Clock`` on virtual time: ``now()`` = ``origin`` + t, ``monotonic()`` = t.

    ``sleep(s)`` (the adapter's retry backoff) advances t and returns at once; ``advance_to``
    moves t forward (never back).  Safe to read from the simulator's threads.
    """

    def __init__(self, origin: datetime) -> None:
        self.origin = origin
        self.t_s = 0.0
        self.slept_s: list[float] = []
        self._lock = threading.Lock()

    def now(self) -> datetime:
        return self.origin + timedelta(seconds=self.t_s)

    def monotonic(self) -> float:
        return self.t_s

    def sleep(self, seconds: float) -> bool:
        with self._lock:
            self.slept_s.append(seconds)
            self.t_s += max(0.0, seconds)
        return True

    def advance_to(self, t_s: float) -> None:
        with self._lock:
            self.t_s = max(self.t_s, t_s)


@dataclass
class VirtualAgent:
    """The scripted agent's ``boundary`` behaviour on virtual time; a ``Steerer`` for the watcher.

    ``acked`` lists ``(message id, t_s)`` in consumption order (what the runtime acknowledges);
    ``turns`` counts ``result`` events; ``exited_at_s`` is set when the agent has exited.
    ``absorb_s`` is what answering the lines drained at a step boundary costs (default: the
    scripted agent's ``turn_s / 2``; a sensitivity knob for the benchmarks).
    """

    clock: VirtualClock
    turn_s: float
    absorb_s: float | None = None
    pending: list[SteerMessage] = field(default_factory=list)
    acked: list[tuple[int, float]] = field(default_factory=list)
    turns: int = 0
    settled: bool = False
    started_at_s: float | None = None
    exited_at_s: float | None = None
    boundary_at_s: float | None = None  # end of the running step: pending lines are drained here
    turn_end_at_s: float | None = None  # when the running turn emits its result

    # ---- the Steerer port ---------------------------------------------------------------------
    def steer(self, sandbox_name: str, msg: SteerMessage) -> None:
        """Append to the mailbox; an idle agent consumes it at once (``SteerAfterSettle`` after settle)."""
        if self.settled or self.exited_at_s is not None:
            raise SteerAfterSettle("the session is settling")
        self.pending.append(msg)
        if self.idle:
            self._consume_next_and_work(self.clock.monotonic())

    def settle(self, sandbox_name: str) -> None:
        self.settled = True

    # ---- the agent's own time line -------------------------------------------------------------
    @property
    def idle(self) -> bool:
        return self.started_at_s is not None and self.boundary_at_s is None and self.turn_end_at_s is None \
            and self.exited_at_s is None

    def start(self, t_s: float) -> None:
        """Launch with the task: the first turn starts at ``t_s``."""
        self.started_at_s = t_s
        self._work(t_s)

    def next_at_s(self) -> float | None:
        """The agent's next own event (a step boundary or a turn end), or ``None`` when idle/exited."""
        return self.boundary_at_s if self.boundary_at_s is not None else self.turn_end_at_s

    def on_boundary(self, t_s: float) -> None:
        """End of the running step: consume every pending line; answering them costs ``turn_s / 2``."""
        self.boundary_at_s = None
        drained = self._consume_all(t_s)
        absorb_s = self.turn_s / 2 if self.absorb_s is None else self.absorb_s
        self.turn_end_at_s = t_s + (absorb_s if drained else 0.0)

    def on_turn_end(self, t_s: float) -> None:
        """The turn's ``result``: count it; the agent is idle until a line or settle arrives."""
        self.turn_end_at_s = None
        self.turns += 1

    def after_turn_end(self, t_s: float) -> None:
        """Once the watcher has seen the turn end: take the next line, or exit when settled."""
        if not self.idle:
            return
        if self.pending:
            self._consume_next_and_work(t_s)
        elif self.settled:
            self.exited_at_s = t_s

    def _work(self, t_s: float) -> None:
        self.boundary_at_s, self.turn_end_at_s = t_s + self.turn_s, None

    def _consume_next_and_work(self, t_s: float) -> None:
        self.acked.append((self.pending.pop(0).follow_up_run_id, t_s))
        self._work(t_s)

    def _consume_all(self, t_s: float) -> bool:
        drained = bool(self.pending)
        while self.pending:
            self.acked.append((self.pending.pop(0).follow_up_run_id, t_s))
        return drained


Log = Callable[[str, str], None]


class ReplaySession:
    """One agent run with its watcher on virtual time (the real watch loop's order, §12).

    ``config`` is the watcher's ``WatchConfig`` (its ``started_at`` should be the clock's now).
    ``start(t_s)`` starts the watcher (a ``StartRefused``/``ForgeError`` leaves the run
    unwatched, as the runner does) and the agent; then the owner calls :meth:`next_at_s` and
    :meth:`step` until :attr:`done`.
    """

    def __init__(self, forge: Forge, clock: VirtualClock, config: WatchConfig, turn_s: float,
                 log: Log | None = None, timeline: Timeline | None = None, absorb_s: float | None = None) -> None:
        self.clock, self.config = clock, config
        self.logs: list[tuple[str, str]] = []
        self.agent = VirtualAgent(clock, turn_s, absorb_s)
        self.watcher = Watcher(forge, self.agent, "replay", threading.Lock(), clock, config,
                               log or (lambda level, message: self.logs.append((level, message))),
                               timeline or Timeline())
        self.watching = False
        self.start_error = ""
        self.state = SettleState()
        self.next_tick_s = 0.0
        self.polls = 0
        self.settled_at_s: float | None = None

    @property
    def done(self) -> bool:
        return self.agent.exited_at_s is not None

    def start(self, t_s: float) -> None:
        """Start the watcher (Start reads, spec/watcher.md §3) and launch the agent at ``t_s``."""
        try:
            self.watcher.start()
            self.watching = True
        except (StartRefused, ForgeError) as exc:
            self.start_error = str(exc)
        self.next_tick_s = t_s + self.watcher.poll_interval_s
        self.agent.start(t_s)
        if self.watching:
            decision = settle.at_start(self.watcher.steers, self.watcher.max_steers)
            if decision.settles:
                self._settle(decision.reason)
        else:
            self.agent.settle("replay")

    def next_at_s(self) -> float | None:
        """The next instant this session acts at: an agent event, a tick or the deadline."""
        times = [t for t in (self.agent.next_at_s(),) if t is not None]
        if self.watching:
            times.append(self.next_tick_s)
            if self.config.deadline is not None:
                times.append((self.config.deadline - self.clock.origin).total_seconds())
        return min(times) if times else None

    def step(self, t_s: float) -> None:
        """Handle everything due at ``t_s`` (agent events first, then the deadline, then a tick)."""
        self.clock.advance_to(t_s)
        if self.agent.boundary_at_s is not None and self.agent.boundary_at_s <= t_s:
            self.agent.on_boundary(t_s)
        if self.agent.turn_end_at_s is not None and self.agent.turn_end_at_s <= t_s:
            self.agent.on_turn_end(t_s)
            if self.watching:
                self._turn_end(self.clock.now())
            self.agent.after_turn_end(t_s)
        if self.watching and settle.deadline_reached(self.config.deadline, self.clock.now()):
            self._settle(settle.DEADLINE)
        if self.watching and self.next_tick_s <= t_s:
            self.next_tick_s += self.watcher.poll_interval_s
            self._tick()
        if self.agent.idle and self.agent.settled and not self.agent.pending:
            self.agent.exited_at_s = t_s

    def _tick(self) -> None:
        decision = settle.before_tick(self.clock.now(), self.config.deadline, self.watcher.min_remaining)
        if not decision.settles:
            outcome = self._poll()
            self.state, decision = settle.after_tick(self.state, outcome, self.watcher.steers,
                                                     self.watcher.max_steers, self._steered_at(outcome))
        if decision.settles:
            self._settle(decision.reason)

    def _turn_end(self, at: datetime) -> None:
        decision = settle.before_turn_end(self.state, at, self.clock.now(), self.config.deadline,
                                          self.watcher.min_remaining)
        if decision.action is settle.Action.IGNORE:
            return
        if not decision.settles:
            outcome = self._poll()
            self.state, decision = settle.after_turn_end(self.state, outcome, self.watcher.steers,
                                                         self.watcher.max_steers, self._steered_at(outcome))
        if decision.settles:
            self._settle(decision.reason)

    def _poll(self) -> Outcome:
        self.polls += 1
        return self.watcher.poll_and_steer()

    def _steered_at(self, outcome: Outcome) -> datetime | None:
        return self.watcher.last_steer_at if outcome is Outcome.STEERED else None

    def _settle(self, reason: str) -> None:
        self.watching = False
        self.settled_at_s = self.clock.monotonic()
        self.watcher.settle_reason = reason
        self.watcher.settle()

    def run_until_done(self, limit_s: float) -> None:
        """Drive this session alone (no other events) until the agent exits or ``limit_s``."""
        while not self.done:
            t_s = self.next_at_s()
            if t_s is None or t_s > limit_s:
                return
            self.step(t_s)
