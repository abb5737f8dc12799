"""Codex steer queue (``CodexSteerQueue``, docs/architecture.md "Codex") and the turn budget.

Codex has no live input: a steer is queued; if a turn is running and its thread can be resumed (the
thread is known and the opening turn wrote its first item: before that Codex may not have persisted
the thread, and a stopped thread that was never persisted cannot be resumed) the queue interrupts
it by a sandbox stop+start under ONE hold of its mutex (decision and stop in the same critical
section, so the stop cannot hit the next turn's process); the run loop then resumes the thread with
the steer. A steer that arrives earlier waits: it stops the turn at its first item, or is resumed
once the turn has ended. A steer never stops a turn while a sub-agent it spawned may still be
working (the stop would end the sub-agent): it waits for them, or for the turn's end. A turn whose
terminal line was read is no longer running, whether or not its process has exited. A steer is
never dropped without a record and never retried without a bound (``MAX_CODEX_RESUME_ATTEMPTS``). A
steer is acknowledged the moment its resume reports the run's own thread; ``on_ack`` is told then,
once the mutex is released. Any other thread id is a lost session (``ThreadLost``): the update did
not reach the run's thread.
"""

from __future__ import annotations

import collections
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from fullsend.adapters.runtimes.feed import Now
from fullsend.adapters.sandbox.shell import sanitize_output
from fullsend.core.watch.steer import SteerMessage, SteerResult
from fullsend.errors import SandboxError, SteerSessionLost
from fullsend.ports import AckListener

MAX_CODEX_RESUME_ATTEMPTS = 2


class InterruptNotStopped(SandboxError):
    """The stop failed and the sandbox is still Ready (process alive)."""


class ThreadLost(SteerSessionLost):
    """Codex reported a thread that is not the run's own (a resume that found no rollout of it
    starts a fresh thread): the update would reach a conversation without the task."""


@dataclass
class _Pending:
    msg: SteerMessage
    failures: int = 0


class CodexSteerQueue:
    """Per-run Codex steer state; ``interrupt(name)`` stops and restarts the sandbox.

    ``interrupt`` raises ``InterruptNotStopped``, ``SteerSessionLost`` or another error (warned);
    ``on_ack`` hears each delivery as it is confirmed (``AckListener``).
    """

    def __init__(
        self,
        name: str,
        interrupt: Callable[[str], None],
        clock: Now,
        warn: Callable[[str], None] | None = None,
        on_ack: AckListener | None = None,
    ) -> None:
        self.name, self._interrupt, self._clock, self._on_ack = name, interrupt, clock, on_ack
        self._warn = warn or (lambda text: print(text, file=sys.stderr, flush=True))
        self._mu = threading.Lock()
        self._wake = threading.Event()
        self.thread_id = ""
        self.turn_running = False
        self.resumable = False  # the opening turn wrote its first item: its thread can be resumed
        self.delegating = False  # a sub-agent the running turn spawned may still be working
        self._own_thread_reported = False  # the running process reported the run's own thread
        self._stopped_for_steer = False
        self._lost: SteerSessionLost | None = None
        self._pending: collections.deque[_Pending] = collections.deque()
        self._settled = False
        self._results: list[SteerResult] = []
        self._in_flight: _Pending | None = None
        self._in_flight_at: datetime | None = None
        self._told: SteerResult | None = None  # the in-flight steer's acknowledgement, once told
        self._not_interrupting = threading.Event()  # clear while a stop+start is in progress
        self._not_interrupting.set()

    def enqueue(self, msg: SteerMessage) -> bool:
        """Queue a steer; False when settled (the caller raises ``SteerAfterSettle``)."""
        with self._mu:
            if self._settled:
                return False
            self._pending.append(_Pending(msg))
            return True

    def interrupt_if_turn_running(self) -> None:
        """Under one hold of the mutex: interrupt only a running turn whose thread can be resumed
        and whose sub-agents are not working (the stop would end them)."""
        with self._mu:
            if self._may_stop_locked():
                self._interrupt_locked()

    def _may_stop_locked(self) -> bool:
        return bool(self.thread_id) and self.turn_running and self.resumable and not self.delegating

    def note_delegating(self, working: bool) -> None:
        """Whether a sub-agent of the running turn may still be working; a steer that waited for its
        sub-agents stops the turn once none is."""
        with self._mu:
            self.delegating = working
            due = bool(self._pending) and self._may_stop_locked()
        self._interrupt_later(due)

    def note_resumable(self) -> None:
        """The opening turn wrote its first item: its thread can be resumed from now on; a steer
        that waited for this stops the running turn now."""
        with self._mu:
            self.resumable = True
            due = bool(self._pending) and self._may_stop_locked()
        self._interrupt_later(due)

    def _interrupt_later(self, due: bool) -> None:
        """Interrupt for a waiting steer from a thread of its own, never the reader's: the reader must
        drain the stopped process's output meanwhile (or the run's supervisor stops the sandbox the
        interrupt just started again)."""
        if due:
            threading.Thread(target=self.interrupt_if_turn_running, name="codex-steer-interrupt", daemon=True).start()

    def note_terminal(self) -> None:
        """The running turn wrote its terminal line: it has ended, whenever its process exits, and
        no steer stops it any more."""
        with self._mu:
            self.turn_running = False

    def _interrupt_locked(self) -> None:
        self._stopped_for_steer = True  # set BEFORE the stop: the process's exit is ours
        self._not_interrupting.clear()
        try:
            self._stop_start()
        finally:
            self._not_interrupting.set()

    def wait_interrupt_over(self, timeout_s: float) -> None:
        """Block until no interrupt is in progress (at most ``timeout_s``): the stopped process's
        reader may wait behind it, and its output drains once it is over."""
        self._not_interrupting.wait(timeout_s)

    def _stop_start(self) -> None:
        try:
            self._interrupt(self.name)
        except InterruptNotStopped:
            self._stopped_for_steer = False  # still running; delivered when the turn ends
            return
        except SteerSessionLost as exc:
            self.turn_running = False
            self._lost = self._lost or exc
            self._wake.set()
            return
        except Exception as exc:  # any other failure is a warning, the steer stays queued
            self.turn_running = False
            self._warn(f"  Warning: the codex turn could not be interrupted for a steer: {sanitize_output(str(exc))}")
            return
        self.turn_running = False

    def begin_turn(self) -> None:
        """Mark a turn running (called BEFORE the process starts; blocks behind an interrupt)."""
        with self._mu:
            self.turn_running, self.delegating = True, False
            self._own_thread_reported = False

    def end_turn(self) -> None:
        """Mark the turn ended (blocks behind an interrupt in flight)."""
        with self._mu:
            self.turn_running = False

    def take_stopped_for_steer(self) -> bool:
        """Read and clear the "stopped for a steer" mark."""
        with self._mu:
            mark, self._stopped_for_steer = self._stopped_for_steer, False
            return mark

    def note_thread_id(self, thread_id: str) -> None:
        """The running process reported ``thread_id``: the first becomes the run's thread; any
        other id afterwards loses the session (``ThreadLost``, nothing acknowledged).  The run's own
        thread reported by a resume delivers its in-flight steer now: re-stamped and told to
        ``on_ack`` (``confirm_delivery`` records it)."""
        told: SteerResult | None = None
        with self._mu:
            if self.thread_id and thread_id != self.thread_id:
                self._lost = self._lost or ThreadLost(
                    f"codex reported the thread {sanitize_output(thread_id)}, not the run's thread {self.thread_id}"
                )
                self._wake.set()
                return
            self.thread_id, self._own_thread_reported = thread_id, True
            if self._in_flight is not None:
                self._in_flight_at = self._clock.now()
                told = SteerResult(self._in_flight.msg.follow_up_run_id, self._in_flight_at, "resume")
                self._told = told
        self._tell(told, True)

    def own_thread_reported(self) -> bool:
        """Whether the process of the current turn reported the run's own thread."""
        with self._mu:
            return self._own_thread_reported

    def take_pending(self) -> tuple[SteerMessage, int] | None:
        """Pop the oldest queued steer as (message, failures)."""
        with self._mu:
            if not self._pending:
                return None
            head = self._pending.popleft()
            return head.msg, head.failures

    def stake_delivery(self, msg: SteerMessage, failures: int, at: datetime) -> None:
        """Remember the steer a resume is carrying; nothing is recorded yet."""
        with self._mu:
            self._in_flight, self._in_flight_at = _Pending(msg, failures), at

    def confirm_delivery(self, delivered: bool) -> None:
        """Record (delivered) or requeue at the front / drop after 2 failures (not delivered); an
        acknowledgement not told yet is told now, one told and not delivered is withdrawn."""
        result: SteerResult | None = None
        with self._mu:
            staked, at, self._in_flight, self._in_flight_at = self._in_flight, self._in_flight_at, None, None
            told, self._told = self._told, None
            if staked is None:
                return
            if delivered:
                result = SteerResult(staked.msg.follow_up_run_id, at or self._clock.now(), "resume")
                self._results.append(result)
            elif staked.failures + 1 < MAX_CODEX_RESUME_ATTEMPTS:
                self._pending.appendleft(_Pending(staked.msg, staked.failures + 1))
            else:
                self._warn(
                    f"  Warning: follow-up run {staked.msg.follow_up_run_id} was dropped after "
                    f"{MAX_CODEX_RESUME_ATTEMPTS} failed resumes; the queued run will redo this work"
                )
        self._tell(result if told is None else None, True)
        self._tell(None if delivered else told, False)

    def _tell(self, result: SteerResult | None, acknowledged: bool) -> None:
        """``on_ack(result, acknowledged)`` (``_mu`` not held); a listener's failure is a warning."""
        if result is None or self._on_ack is None:
            return
        try:
            self._on_ack(result, acknowledged)
        except Exception as exc:  # never the loop's or the reader's death
            self._warn(f"A run callback failed: {type(exc).__name__}: {exc}")

    def requeue_front(self, msg: SteerMessage, failures: int) -> None:
        """Put a steer back at the front (even when settled)."""
        with self._mu:
            self._pending.appendleft(_Pending(msg, failures))

    def settle(self) -> None:
        """No more steers; wakes the loop.  Never stops anything."""
        with self._mu:
            self._settled = True
        self._wake.set()

    def is_settled(self) -> bool:
        with self._mu:
            return self._settled

    def signal(self) -> None:
        """Ring the doorbell (never blocks)."""
        self._wake.set()

    def wait_for_work(self, cancelled: threading.Event) -> bool:
        """Block until the doorbell rings (True) or ``cancelled`` is set (False).

        One blocking wait, no timed loop: whoever sets ``cancelled`` rings the doorbell too
        (``CodexExecRuntime.cancel``), as a steer, ``settle`` and a lost session do.
        """
        if cancelled.is_set():
            return False
        self._wake.wait()
        self._wake.clear()
        return not cancelled.is_set()

    def lost_err(self) -> SteerSessionLost | None:
        with self._mu:
            return self._lost

    def steer_results(self) -> list[SteerResult]:
        with self._mu:
            return list(self._results)


def codex_turn_timeout(budget_s: float, deadline: float | None, now: float, cancelled: bool) -> float:
    """Time a Codex turn may take: ``min(budget, remaining)`` of the run's shared deadline.

    ``deadline``/``now`` are monotonic seconds (no deadline: the budget).  Raises
    ``SandboxError`` when cancelled or when the deadline has passed (a zero timeout would read as
    unlimited).
    """
    if cancelled:
        raise SandboxError("the run was cancelled before the next codex turn")
    if deadline is None:
        return budget_s
    remaining = deadline - now
    if remaining <= 0:
        raise SandboxError("the run's deadline passed before the next codex turn")
    return min(budget_s, remaining)
