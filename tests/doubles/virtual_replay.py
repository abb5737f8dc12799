"""Replay a watched agent run on virtual time: the real ``Watcher`` and its real loop against the simulator.

Used by the conditional-polling test (issue 9: an idle hour costs no counted request) and by the
benchmarks (``bench/policies.py``, ``bench/api_cost.py``).  Nothing here sleeps: a
:class:`~tests.doubles.virtual_clock.VirtualClock` is the one clock of the simulator, the GitHub
adapter and the watcher, and :class:`ReplaySession` moves it from one event to the next.

What is real and what is modelled:

* real: ``Watcher.start`` and ``Watcher.watch`` — the watch loop (docs/architecture.md "Watcher") with its
  waits (``Clock.wait``), ticks, turn-end handling, ``fullsend.core.watch.settle`` decisions and
  settle call — on its own thread, a participant of the virtual clock; every poll is
  ``GitHubForge`` over HTTP to the simulator (listing, provenance, binding, delta, envelope text,
  cap).  The watcher runs only while the driver waits in the clock, so a replay is deterministic.
* modelled: the agent.  :class:`VirtualAgent` replays the scripted agent's ``boundary`` echo
  (``fullsend.simulator.agent.main`` with ``SCRIPTED_AGENT_ECHO=boundary``, the real CLI's
  order): a turn works ``turn_s``; lines that arrived meanwhile are
  consumed (acknowledged) at the end of that step and answered with one more ``turn_s / 2``; a
  line arriving while the agent is idle is consumed at once and starts a new turn of ``turn_s``;
  after ``settle`` the agent finishes what it holds and exits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from fullsend.app.timeline import Timeline
from fullsend.app.watch.watcher import WatchConfig, Watcher
from fullsend.core.watch.start import StartRefused
from fullsend.core.watch.steer import SteerMessage
from fullsend.errors import ForgeError, SteerAfterSettle
from fullsend.ports import Forge
from tests.doubles.virtual_clock import VirtualClock

__all__ = ["ReplaySession", "VirtualAgent", "VirtualClock"]


@dataclass
class VirtualAgent:
    """The scripted agent's ``boundary`` behaviour on virtual time; a ``Steerer`` for the watcher.

    ``acked`` lists ``(message id, t_s)`` in consumption order (what the runtime acknowledges);
    ``turns`` counts ``result`` events; ``settled_at_s`` is when the watcher settled it;
    ``exited_at_s`` is set when the agent has exited.
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
    settled_at_s: float | None = None
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
        if not self.settled:
            self.settled, self.settled_at_s = True, self.clock.monotonic()

    # ---- the agent's own time line -------------------------------------------------------------
    @property
    def idle(self) -> bool:
        return (
            self.started_at_s is not None
            and self.boundary_at_s is None
            and self.turn_end_at_s is None
            and self.exited_at_s is None
        )

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
    """One agent run with the real watcher on virtual time.

    ``config`` is the watcher's ``WatchConfig`` (its ``started_at`` should be the clock's now).
    ``start(t_s)`` starts the watcher (a ``StartRefused``/``ForgeError`` leaves the run
    unwatched, as the runner does), runs ``Watcher.watch`` on a thread of the clock, and launches
    the agent; then the owner calls :meth:`next_at_s` and :meth:`step` until :attr:`done`, or
    :meth:`run_until_done`; :meth:`close` cancels a watch still running.
    """

    def __init__(
        self,
        forge: Forge,
        clock: VirtualClock,
        config: WatchConfig,
        turn_s: float,
        log: Log | None = None,
        timeline: Timeline | None = None,
        absorb_s: float | None = None,
    ) -> None:
        self.clock, self.config = clock, config
        self.logs: list[tuple[str, str]] = []
        self.agent = VirtualAgent(clock, turn_s, absorb_s)
        self.watcher = Watcher(
            forge,
            self.agent,
            "replay",
            threading.Lock(),
            clock,
            config,
            log or (lambda level, message: self.logs.append((level, message))),
            timeline or Timeline(),
        )
        self.start_error = ""
        self.thread: threading.Thread | None = None
        self._watch_ended = False

    @property
    def watching(self) -> bool:
        """The watch loop runs (it started and has not settled)."""
        return self.thread is not None and not self._watch_ended

    @property
    def polls(self) -> int:
        """Listings the watcher made (``WatchState.polls``)."""
        return self.watcher.state.polls

    @property
    def settled_at_s(self) -> float | None:
        """When the watcher settled the agent (``None`` for an unwatched run or a watch still running)."""
        return self.agent.settled_at_s if self.thread is not None else None

    @property
    def done(self) -> bool:
        return self.agent.exited_at_s is not None

    def start(self, t_s: float) -> None:
        """Start the watcher (its Start reads) and its loop, and launch the agent at ``t_s``."""
        try:
            self.watcher.start()
        except (StartRefused, ForgeError) as exc:
            self.start_error = str(exc)
        self.agent.start(t_s)
        if self.start_error:
            self.agent.settle("replay")
            return
        self.thread = self.clock.spawn(self._watch, "replay-watcher")

    def _watch(self) -> None:
        try:
            self.watcher.watch()
        finally:
            self._watch_ended = True

    def next_at_s(self) -> float | None:
        """The next instant this session acts at: an agent event, or the watcher's next tick or deadline."""
        times = [t for t in (self.agent.next_at_s(),) if t is not None]
        due = self.clock.next_due_s() if self.watching else None
        if due is not None:
            times.append(due)
        return min(times) if times else None

    def step(self, t_s: float) -> None:
        """Handle everything due at ``t_s``: the agent's events first (a turn end reaches the watcher
        and is handled before the agent goes on), then whatever the watcher has due (a tick, the deadline)."""
        self.clock.advance_to(t_s)
        agent = self.agent
        if agent.boundary_at_s is not None and agent.boundary_at_s <= t_s:
            agent.on_boundary(t_s)
        if agent.turn_end_at_s is not None and agent.turn_end_at_s <= t_s:
            agent.on_turn_end(t_s)
            if self.watching:
                self.watcher.turn_ended(self.clock.now())
                self.clock.run_due()
            agent.after_turn_end(t_s)
        self.clock.run_due()
        if agent.idle and agent.settled and not agent.pending:
            agent.exited_at_s = t_s

    def run_until_done(self, limit_s: float) -> None:
        """Drive this session alone (no other events) until the agent exits or ``limit_s``."""
        while not self.done:
            t_s = self.next_at_s()
            if t_s is None or t_s > limit_s:
                return
            self.step(t_s)

    def close(self) -> None:
        """Cancel a watch still running (``Watcher.stop``) and let it settle; the measurement is over."""
        if self.watching:
            self.watcher.stop()
            self.clock.run_due()
