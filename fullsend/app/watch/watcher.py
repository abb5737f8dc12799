"""The watcher: Start, the watch loop and settle (docs/architecture.md "Watcher").

Ports and core only.  One ``Watcher`` serves one agent iteration; it owns no global state.
What it knows and has done is one record, :class:`~fullsend.app.watch.state.WatchState`; one
poll-and-steer cycle is :class:`~fullsend.app.watch.cycle.Cycle` over that record; every settle
decision is ``fullsend.core.watch.settle``'s; provenance is ``fullsend.core.provenance.verdicts``'
(fail closed).  Every ``steer``/``settle`` call is made holding the sandbox lock.

Threads and time (docs/architecture.md "Threads and time"): ``watch()`` runs on its own thread
and waits only through ``Clock.wait`` on the inbox's wake event, until the next tick
(``Clock.monotonic``) or the deadline (``Clock.now``), whichever is earlier; a turn end, a
closed session or a cancellation sets the event and ends the wait at once.  Settling waits for
its helper thread through ``Clock.join`` (``fullsend.app.watch.settling``).
"""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import datetime

from fullsend.app.timeline import Timeline
from fullsend.app.watch.cycle import Cycle
from fullsend.app.watch.inbox import TURN_END_BUFFER, Inbox
from fullsend.app.watch.reads import read_my_run, read_start_baseline
from fullsend.app.watch.settling import SETTLE_TIMEOUT_S, settle_steerer, settle_words
from fullsend.app.watch.state import Carry, Log, WatchConfig, WatchPorts, WatchResult, WatchState
from fullsend.core.prose import Wording
from fullsend.core.provenance.verdicts import MyRun
from fullsend.core.watch import settle
from fullsend.core.watch.settle import Outcome
from fullsend.core.watch.start import MISSING_DISPLAY_TITLE, normalize_self_logins
from fullsend.core.wire import AMENDMENT_EVENTS
from fullsend.ports import Clock, Forge, Steerer
from fullsend.wording import default_wording

__all__ = ["SETTLE_TIMEOUT_S", "TURN_END_BUFFER", "Carry", "WatchConfig", "WatchResult", "WatchState", "Watcher"]

WAIT_IN_REQUEST_MAX_S = 60.0  # a rate limit a poll's request may wait out in place; a longer one pauses polling


class Watcher:
    """Finds authorized follow-up runs for one agent iteration and steers the agent with them.

    Use: ``start()`` (raises ``StartRefused`` or ``ForgeError``: steering is then disabled for
    the iteration), then ``watch()`` on its own thread; feed turn ends with ``turn_ended(at)``;
    ``close_turn_ends()`` when the agent exits; ``stop()`` on cancellation.  ``watch()`` settles
    the steerer exactly once on every exit path and returns a frozen :class:`WatchResult` (the
    settle reason, a rule id of docs/rules.md#settle, the deliveries, the runs left to the queued
    run); :meth:`result` is the same snapshot for a caller whose join gave up.

    ``state`` is everything the watcher knows and has done (:class:`WatchState`); ``config`` its
    settings, the effective values filled in.
    """

    def __init__(
        self,
        forge: Forge,
        steerer: Steerer,
        sandbox_name: str,
        lock: threading.Lock,
        clock: Clock,
        config: WatchConfig,
        log: Log,
        timeline: Timeline,
        carry: Carry | None = None,
        wording: Wording | None = None,
    ) -> None:
        # Rate limits (docs/rules.md#rate-limited): a request waits out at most a minute, never past
        # the steer window; a longer limit pauses the polls (``paused_until``) or settles the run.
        bounded = forge.bounded(max_wait_s=WAIT_IN_REQUEST_MAX_S, until=config.deadline)
        self.ports = WatchPorts(
            bounded, steerer, sandbox_name, lock, clock, log, timeline, wording or default_wording()
        )
        # The effective settings, once (W13: ``max_steers`` ≤ 0 → 2, ``poll_interval_s`` ≤ 0 → 5 s,
        # ``min_remaining`` ≤ 0 → 5 min).
        self.config = config = replace(
            config,
            max_steers=settle.effective_max_steers(config.max_steers),
            poll_interval_s=settle.effective_poll_interval_s(config.poll_interval_s),
            min_remaining=settle.effective_min_remaining(config.min_remaining),
        )
        carry = carry if carry is not None else Carry()
        carry.steers = settle.prior_steers(carry.steers)
        carry.observed = {k: r for k, r in carry.observed.items() if r.event in AMENDMENT_EVENTS}
        self.state = WatchState(carry=carry)
        self.inbox = Inbox()
        self.cycle = Cycle(self.ports, config, self.state, config.max_steers, self.inbox.stopped)
        self._settle_lock = threading.Lock()
        self._settled = False
        self.finished = False  # the watch loop has ended and left its undecided runs

    # ---- start ----------------------------------------------------------------------
    def start(self) -> MyRun:
        """Read my own run, its jobs and the work item; fix the facts provenance needs.

        Raises:
            StartRefused: any rule fails (the message is safe to log and names the cause).
        """
        st, cfg = self.state, self.config
        st.self_logins = normalize_self_logins(cfg.self_logins)
        me, notes = read_my_run(
            self.ports.forge, cfg.run_id, cfg.run_name, cfg.item_number, cfg.started_at, cfg.stage_hints
        )
        for note in notes:
            self.ports.log("warning" if note == MISSING_DISPLAY_TITLE else "info", note)
        st.me = me
        if st.carry.baseline is None:  # a later iteration keeps the baseline of the last delivery
            since = me.fresh_after or cfg.started_at
            item_notes: list[str] = []
            baseline = read_start_baseline(
                self.ports.forge,
                cfg.item_number,
                cfg.run_name or f"#{cfg.item_number}",
                since,
                cfg.env_head_sha,
                item_notes,
            )
            for note in item_notes:  # MISSING_LABEL_NAME: label reporting degrades, steering goes on
                self.ports.log("warning", note)
            # The window opens at my run's second, inclusively: my own trigger is not news.
            st.carry.baseline = replace(
                baseline,
                delivered_comment_ids=frozenset({me.trigger_comment_id} - {0}),
                delivered_thread_ids=frozenset({me.trigger_thread_id} - {0}),
            )
        return me

    # ---- inputs from other threads ----------------------------------------------------------
    def turn_ended(self, at: datetime) -> None:
        """A turn ended at ``at`` (aware UTC).  Non-blocking: with 16 signals buffered it is dropped."""
        self.inbox.turn_ended(at)

    def stop(self) -> None:
        """Cancel the watch (SIGTERM, run cancelled): ``watch()`` returns at once and settles."""
        self.inbox.stop()

    def close_turn_ends(self) -> None:
        """The agent exited: no further turn end will come (a closed channel: ``session-closed``).

        The watch ends at once; turn ends still buffered are dropped (nothing can be steered into
        an agent that has exited, so polling for them would only spend API calls)."""
        self.inbox.close()

    # ---- the loop --------------------------------------------------------------------
    def watch(self) -> WatchResult:
        """Run until a settle decision; always settles exactly once.  Returns :meth:`result`."""
        st = self.state
        try:
            st.settle_reason = self._loop()
        except Exception as exc:  # a watcher fault must never crash the agent run
            self.ports.log(
                "warning",
                f"The watcher stopped on an unexpected error ({type(exc).__name__}: {exc}); "
                f"settling [{settle.SESSION_CLOSED}]",
            )
            st.settle_reason = settle.SESSION_CLOSED
        finally:
            st.leave_undecided(st.settle_reason or settle.CANCELLED)
            self.finished = True
            self.settle()
        return self.result()

    def _loop(self) -> str:
        st, clock = self.state, self.ports.clock
        decision = settle.at_start(st.steers, self.config.max_steers)
        if decision.settles:
            return self._settling(decision.reason)
        st.next_tick_s = clock.monotonic() + self.config.poll_interval_s
        while True:
            event = self.inbox.next_input(clock, st.next_tick_s, self.config.deadline)
            if isinstance(event, str):
                return self._settling(event)
            if event is None:  # a tick
                st.next_tick_s = max(st.next_tick_s + self.config.poll_interval_s, clock.monotonic())
                decision = self._tick()
            else:
                decision = self._turn_end(event)
            if decision.settles:
                return self._settling(decision.reason)
            st.next_tick_s = max(st.next_tick_s, self._pause_ends())

    def _pause_ends(self) -> float:
        """The ``Clock.monotonic`` instant a rate-limit pause ends (now when there is none)."""
        now, until = self.ports.clock.monotonic(), self.state.paused_until
        return now if until is None else now + max(0.0, (until - self.ports.clock.now()).total_seconds())

    def _tick(self) -> settle.Decision:
        st = self.state
        decision = settle.before_tick(self.ports.clock.now(), self.config.deadline, self.config.min_remaining)
        if decision.settles:
            return decision
        # Mid-turn ticks are gated; once a turn end awaits a verdict, every tick may settle the
        # run, so its listing is unconditional (docs/architecture.md "Listing gate").
        outcome = self._held(self.poll_and_steer(forced=st.settle.awaiting), st.settle.awaiting)
        st.settle, decision = settle.after_tick(
            st.settle,
            outcome,
            st.steers,
            self.config.max_steers,
            self._steered_at(outcome),
            settle.retry_polls(self.config.poll_interval_s),
        )
        return decision

    def _turn_end(self, at: datetime) -> settle.Decision:
        st = self.state
        decision = settle.before_turn_end(
            st.settle, at, self.ports.clock.now(), self.config.deadline, self.config.min_remaining
        )
        if decision.action is settle.Action.IGNORE:
            last = st.settle.last_steer_at
            self.ports.log(
                "info",
                f"Ignoring a turn end at {at.isoformat()}: it is not after the steer delivered at "
                f"{last.isoformat() if last else '?'}, which superseded it [{decision.reason}]",
            )
            return decision
        if decision.settles:
            return decision
        outcome = self._held(self.poll_and_steer(), True)
        st.settle, decision = settle.after_turn_end(
            st.settle, outcome, st.steers, self.config.max_steers, self._steered_at(outcome)
        )
        return decision

    def _held(self, outcome: Outcome, awaiting: bool) -> Outcome:
        """``LIMITED`` in place of a ``RETRY`` when the agent waits at a turn end and a rate-limit
        pause would hold it idle too long (docs/rules.md#rate-limited)."""
        if outcome is Outcome.RETRY and settle.pause_outlasts_the_wait(
            awaiting, self.state.paused_until, self.ports.clock.now()
        ):
            return Outcome.LIMITED
        return outcome

    def _steered_at(self, outcome: Outcome) -> datetime | None:
        return self.state.last_steer_at if outcome is Outcome.STEERED else None

    def _settling(self, reason: str) -> str:
        """Log the settle decision in the project's words, tagged with its rule id; return it."""
        self.ports.log(
            "info",
            settle_words(
                reason,
                self.config.max_steers,
                self.config.min_remaining,
                self.state.paused_until,
                settle.retry_polls(self.config.poll_interval_s),
            ),
        )
        return reason

    # ---- settle -------------------------------------------------------------------------
    def settle(self) -> None:
        """Tell the steerer no more steers will come; exactly once (idempotent), bounded by 30 s.

        Runs on a helper thread (``fullsend.app.watch.settling``), so a cancelled watch still
        settles on its own; an error or a timeout is warned, never raised.
        """
        with self._settle_lock:
            if self._settled:
                return
            self._settled = True
        settle_steerer(self.ports, self.state.settle_reason or settle.CANCELLED)

    # ---- one cycle --------------------------------------------------------------------
    def poll_and_steer(self, forced: bool = True) -> Outcome:
        """One poll-and-steer cycle (docs/architecture.md "Poll-and-steer cycle"): ``Cycle.run``;
        ``forced=False`` lets the listing gate skip the listing (docs/architecture.md "Listing gate")."""
        return self.cycle.run(forced)

    # ---- the result ----------------------------------------------------------------------
    def result(self) -> WatchResult:
        """What the watch found and did, as of now (``WatchResult``).  After ``watch()`` returned,
        its result; while the watch has not ended (its join gave up, e.g. in a long request),
        ``left`` also holds every run still undecided, with the settle reason or
        ``session-closed``."""
        st = self.state
        left = list(st.left)
        if not self.finished:
            left += st.undecided_left(st.settle_reason or settle.SESSION_CLOSED)
        base = st.baseline
        return WatchResult(
            settle_reason=st.settle_reason,
            delivered=tuple(st.delivered),
            last_steer_at=st.last_steer_at,
            left=tuple(left),
            left_to_queued=tuple(st.left_to_queued),
            session_lost=st.session_lost,
            me=st.me,
            steers=st.steers,
            head=base.last_head if base else "",
            baseline=base.since if base else None,
            seen_run_ids=tuple(sorted(st.carry.seen)),
        )
