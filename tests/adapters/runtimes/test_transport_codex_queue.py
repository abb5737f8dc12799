"""Codex queue, interrupt, parser and budget (docs/architecture.md "Codex")."""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from fullsend.adapters.runtimes.codex.exec.interrupt import (
    CODEX_START_SETTLE_CONFIRM_S,
    CODEX_STEER_INTERRUPT_BOUND_S,
    SettlePolicy,
    settle_after_start,
    stop_start_sandbox,
)
from fullsend.adapters.runtimes.codex.exec.loop import next_codex_turn
from fullsend.adapters.runtimes.codex.exec.queue import (
    CodexSteerQueue,
    InterruptNotStopped,
    ThreadLost,
    codex_turn_timeout,
)
from fullsend.adapters.runtimes.codex.exec.runtime import CodexExecRuntime
from fullsend.adapters.runtimes.codex.exec.stream import CodexSteerAggregator, CodexStreamParser
from fullsend.adapters.runtimes.events import ResultEvent, iter_json_lines
from fullsend.core.watch.steer import SteerMessage
from fullsend.errors import NoSteerSession, SandboxError, SteerAfterSettle, SteerSessionLost
from tests.doubles.pending import steers_queued
from tests.support.transport_run import FixedClock

NOW = datetime(2026, 9, 16, 12, 0, 0, tzinfo=UTC)
THREAD = "01a066e2-a54e-7222-84ae-53549f3d2316"
FAST = SettlePolicy(window_s=0.3, confirm_s=0.3, poll_s=0.01, read_bound_s=1.0)


class Interrupts:
    """Counts interrupts; optionally raises or blocks."""

    def __init__(self, error: Exception | None = None) -> None:
        self.count, self.error = 0, error
        self.release = threading.Event()
        self.release.set()
        self.entered = threading.Event()

    def __call__(self, name: str) -> None:
        self.count += 1
        self.entered.set()
        self.release.wait(10)
        if self.error is not None:
            raise self.error


def _queue(
    interrupt: Interrupts | None = None, warn: list[str] | None = None, clock: Any = None
) -> tuple[CodexSteerQueue, Interrupts]:
    interrupt = interrupt or Interrupts()
    sink = warn if warn is not None else []
    return CodexSteerQueue("sb", interrupt, clock or FixedClock(NOW), sink.append), interrupt


def _steer(runtime: CodexExecRuntime, q: CodexSteerQueue, msg: SteerMessage) -> None:
    runtime._queues.register("sb", q)
    runtime.steer("sb", msg)


def test_v66_no_interrupt_before_thread_id() -> None:
    q, intr = _queue()
    q.begin_turn()
    q.enqueue(SteerMessage(1, "a"))
    q.interrupt_if_turn_running()
    assert intr.count == 0
    q.note_thread_id(THREAD)
    q.note_resumable()
    assert intr.count == 1  # the steer that waited stops the turn at its first item


def test_a_steer_waits_until_the_thread_is_resumable() -> None:
    """The thread is known but the opening turn wrote no item yet: nothing is stopped; the first
    item stops the turn for the waiting steer, and later steers stop it at once."""
    q, intr = _queue()
    q.begin_turn()
    q.note_thread_id(THREAD)
    q.enqueue(SteerMessage(1, "a"))
    q.interrupt_if_turn_running()
    assert intr.count == 0 and not q.resumable
    q.note_resumable()
    assert intr.count == 1 and q.take_stopped_for_steer() is True
    q.begin_turn()
    q.enqueue(SteerMessage(2, "b"))
    q.interrupt_if_turn_running()
    assert intr.count == 2


def test_a_steer_never_stops_a_turn_whose_sub_agents_work() -> None:
    """Stopping the sandbox would end the sub-agents the turn spawned: the steer waits until the
    turn reports none working (or for the turn's end)."""
    q, intr = _queue()
    q.begin_turn()
    q.note_thread_id(THREAD)
    q.note_resumable()
    q.note_delegating(True)
    q.enqueue(SteerMessage(1, "a"))
    q.interrupt_if_turn_running()
    assert intr.count == 0
    q.note_delegating(False)
    assert intr.count == 1 and q.take_stopped_for_steer() is True


def test_a_read_terminal_line_ends_the_turn_for_the_steer() -> None:
    """After ``turn.completed`` or ``turn.failed`` was read no steer stops the process: it waits
    for the exit and is resumed, and the first item of a later turn stops nothing either."""
    q, intr = _queue()
    q.begin_turn()
    q.note_thread_id(THREAD)
    q.note_resumable()
    q.note_terminal()
    q.enqueue(SteerMessage(1, "a"))
    q.interrupt_if_turn_running()
    q.note_resumable()
    assert intr.count == 0 and q.take_stopped_for_steer() is False and steers_queued(q) == 1


def test_v67_idle_steer_is_resumed_without_interrupt() -> None:
    q, intr = _queue()
    q.note_thread_id(THREAD)
    q.begin_turn()
    q.end_turn()
    _steer(CodexExecRuntime(), q, SteerMessage(8, "late update"))
    assert intr.count == 0
    turn = next_codex_turn(q, threading.Event(), lambda m: f"ENVELOPE {m.text}", lambda: NOW)
    assert turn is not None and "late update" in turn.prompt and turn.resume_thread_id == THREAD


def test_v68_running_turn_is_interrupted_once() -> None:
    q, intr = _queue()
    q.note_thread_id(THREAD)
    q.note_resumable()
    q.begin_turn()
    _steer(CodexExecRuntime(), q, SteerMessage(9, "x"))
    assert intr.count == 1


def test_v69_another_thread_id_is_a_lost_session() -> None:
    """A resume is acknowledged only by the run's own thread; another id (a resume that found no
    rollout started a fresh thread) acknowledges nothing and loses the session."""
    q, _ = _queue()
    q.note_thread_id("first")
    q.stake_delivery(SteerMessage(5, "x"), 0, NOW)
    q.begin_turn()
    q.note_thread_id("second")
    assert q.thread_id == "first" and not q.own_thread_reported()
    lost = q.lost_err()
    assert isinstance(lost, ThreadLost) and "second" in str(lost) and "first" in str(lost)
    q.confirm_delivery(q.own_thread_reported())
    assert q.steer_results() == []
    with pytest.raises(ThreadLost):
        _steer(CodexExecRuntime(), q, SteerMessage(6, "y"))


def test_v70_pending_is_fifo() -> None:
    q, _ = _queue()
    q.enqueue(SteerMessage(1, "a"))
    q.enqueue(SteerMessage(2, "b"))
    assert [q.take_pending()[0].follow_up_run_id, q.take_pending()[0].follow_up_run_id] == [1, 2]  # type: ignore[index]
    assert q.take_pending() is None


def test_v71_settled_queue_refuses() -> None:
    q, intr = _queue()
    q.note_thread_id(THREAD)
    q.begin_turn()
    q.settle()
    assert q.enqueue(SteerMessage(1, "a")) is False
    assert intr.count == 0 and steers_queued(q) == 0
    runtime = CodexExecRuntime()
    with pytest.raises(SteerAfterSettle):
        _steer(runtime, q, SteerMessage(1, "a"))
    q2, intr2 = _queue()
    q2.note_thread_id(THREAD)
    runtime._queues.register("sb", q2)
    runtime.steer("sb", SteerMessage(2, "between turns"))
    assert intr2.count == 0


def test_v72_not_stopped_keeps_the_steer_pending() -> None:
    q, _ = _queue(Interrupts(InterruptNotStopped("not stopped: gateway down")))
    q.note_thread_id(THREAD)
    q.note_resumable()
    q.begin_turn()
    _steer(CodexExecRuntime(), q, SteerMessage(3, "x"))
    assert steers_queued(q) == 1 and q.take_stopped_for_steer() is False


def test_v73_unknown_sandbox() -> None:
    runtime = CodexExecRuntime()
    with pytest.raises(NoSteerSession):
        runtime.steer("nope", SteerMessage(1, "x"))
    runtime.settle("nope")


def test_v74_v75_resume_turn_and_confirmation() -> None:
    q, _ = _queue()
    q.note_thread_id(THREAD)
    q.enqueue(SteerMessage(7, "cover the error path", event="issue_comment", actor="octocat"))
    before = NOW
    turn = next_codex_turn(q, threading.Event(), lambda m: m.text, lambda: NOW)
    assert turn is not None and turn.resume_thread_id == THREAD and "cover the error path" in turn.prompt
    assert q.steer_results() == []
    q.confirm_delivery(True)
    [r] = q.steer_results()
    assert (r.follow_up_run_id, r.mode) == (7, "resume") and before <= r.delivered_at <= NOW
    q.confirm_delivery(True)  # nothing staked
    assert len(q.steer_results()) == 1


def test_v75_unconfirmed_is_not_resurrected() -> None:
    q, _ = _queue()
    q.note_thread_id(THREAD)
    q.enqueue(SteerMessage(7, "x"))
    next_codex_turn(q, threading.Event(), lambda m: m.text, lambda: NOW)
    q.confirm_delivery(False)
    q.confirm_delivery(True)
    assert q.steer_results() == []


def test_v76_no_next_turn() -> None:
    q, _ = _queue()
    q.settle()
    assert next_codex_turn(q, threading.Event(), lambda m: m.text, lambda: NOW) is None
    q2, _ = _queue()
    q2.note_thread_id(THREAD)
    q2.enqueue(SteerMessage(1, "x"))
    cancelled = threading.Event()
    cancelled.set()
    assert next_codex_turn(q2, cancelled, lambda m: m.text, lambda: NOW) is None
    assert steers_queued(q2) == 1  # v89: not staked, still pending
    q3, _ = _queue()
    q3.enqueue(SteerMessage(1, "x"))
    assert next_codex_turn(q3, threading.Event(), lambda m: m.text, lambda: NOW) is None
    assert steers_queued(q3) == 1


def test_v77_parked_loop_wakes_on_enqueue() -> None:
    q, _ = _queue()
    q.note_thread_id(THREAD)
    box: dict[str, Any] = {}
    waiter = threading.Thread(
        target=lambda: box.setdefault("turn", next_codex_turn(q, threading.Event(), lambda m: m.text, lambda: NOW))
    )
    waiter.start()
    q.enqueue(SteerMessage(11, "late update"))
    q.signal()
    waiter.join(2.0)
    assert not waiter.is_alive() and box["turn"].prompt == "late update"


def test_v79_aggregator_replaces_within_and_adds_across_processes() -> None:
    agg = CodexSteerAggregator()
    agg.add_result(ResultEvent(num_turns=1, input_tokens=100, output_tokens=10, cache_read_input_tokens=50))
    agg.add_result(ResultEvent(num_turns=2, input_tokens=300, output_tokens=25, cache_read_input_tokens=120))
    assert (agg.input_tokens, agg.turns) == (300, 2)
    agg.process_ended()
    agg.add_result(ResultEvent(num_turns=1, input_tokens=16068, output_tokens=27, cache_read_input_tokens=15903))
    assert (agg.input_tokens, agg.output_tokens, agg.turns) == (16368, 52, 3)


def test_v80_settle_never_interrupts() -> None:
    q, intr = _queue()
    q.note_thread_id(THREAD)
    q.begin_turn()
    runtime = CodexExecRuntime()
    runtime._queues.register("sb", q)
    runtime.settle("sb")
    assert intr.count == 0 and q.is_settled()


def test_v81_thread_id_is_published_before_eof() -> None:
    read_fd, write_fd = os.pipe()
    q, intr = _queue()
    parser = CodexStreamParser(on_thread_id=q.note_thread_id)
    published = threading.Event()
    original = q.note_thread_id

    def reader() -> None:
        with os.fdopen(read_fd, "rb") as stream:
            for obj in iter_json_lines(stream):
                parser.parse(obj)
                if parser.thread_id:
                    published.set()

    threading.Thread(target=reader, daemon=True).start()
    q.begin_turn()
    q.note_resumable()
    os.write(write_fd, b'{"type":"thread.started","thread_id":"01a066e2-a54e"}\n')
    assert published.wait(5.0)
    assert q.thread_id == "01a066e2-a54e" and original is not None
    _steer(CodexExecRuntime(), q, SteerMessage(1, "x"))
    assert intr.count == 1
    os.close(write_fd)


def test_v82_turn_timeout() -> None:
    budget = 20 * 60.0
    assert codex_turn_timeout(budget, None, 100.0, False) == budget
    assert 120 <= codex_turn_timeout(budget, 100.0 + 180, 100.0, False) <= 180
    with pytest.raises(SandboxError):
        codex_turn_timeout(budget, 100.0 + 3600, 100.0, True)
    with pytest.raises(SandboxError):
        codex_turn_timeout(budget, 99.0, 100.0, False)


def test_v83_turn_bookkeeping_waits_behind_an_interrupt() -> None:
    intr = Interrupts()
    intr.release.clear()
    q, _ = _queue(intr)
    q.note_thread_id(THREAD)
    q.note_resumable()
    q.begin_turn()
    runtime = CodexExecRuntime()
    runtime._queues.register("sb", q)
    steerer = threading.Thread(target=runtime.steer, args=("sb", SteerMessage(1, "x")))
    steerer.start()
    assert intr.entered.wait(5)
    done = threading.Event()
    other = threading.Thread(target=lambda: (q.end_turn(), q.begin_turn(), done.set()))
    other.start()
    assert not done.wait(0.1)  # blocked behind the interrupt's hold
    intr.release.set()
    steerer.join(5)
    other.join(5)
    assert done.is_set() and intr.count == 1


def test_v84_delivered_at_is_the_thread_report_time() -> None:
    clock = FixedClock(NOW)
    q, _ = _queue(clock=clock)
    q.note_thread_id(THREAD)
    q.stake_delivery(SteerMessage(1, "x"), 0, NOW - timedelta(seconds=5))
    q.note_thread_id(THREAD)
    q.confirm_delivery(True)
    assert q.steer_results()[0].delivered_at == NOW
    q.stake_delivery(SteerMessage(2, "y"), 0, NOW - timedelta(seconds=5))
    q.confirm_delivery(True)
    assert q.steer_results()[1].delivered_at is not None


def test_v85_v86_failed_resume_requeues_at_front_even_when_settled() -> None:
    for settle_first in (False, True):
        q, _ = _queue()
        q.note_thread_id(THREAD)
        q.enqueue(SteerMessage(1, "first"))
        q.enqueue(SteerMessage(2, "second"))
        msg, failures = q.take_pending()  # type: ignore[misc]
        q.stake_delivery(msg, failures, NOW)
        if settle_first:
            q.settle()
        q.confirm_delivery(False)
        assert q.steer_results() == []
        ids = [q.take_pending()[0].follow_up_run_id for _ in range(2)]  # type: ignore[index]
        assert ids == [1, 2]
    q.requeue_front(SteerMessage(3, "again"), 0)
    assert q.take_pending()[0].follow_up_run_id == 3  # type: ignore[index]


def test_v87_v88_two_failures_drop_with_a_warning() -> None:
    warnings: list[str] = []
    q, _ = _queue(warn=warnings)
    q.note_thread_id(THREAD)
    q.enqueue(SteerMessage(4242, "x"))
    for _ in range(2):
        turn = next_codex_turn(q, threading.Event(), lambda m: m.text, lambda: NOW)
        assert turn is not None
        q.confirm_delivery(False)
    assert steers_queued(q) == 0 and q.steer_results() == []
    assert len(warnings) == 1 and "4242" in warnings[0] and "queued run will redo" in warnings[0]
    q.enqueue(SteerMessage(5, "y"))
    next_codex_turn(q, threading.Event(), lambda m: m.text, lambda: NOW)
    q.confirm_delivery(True)
    assert [r.follow_up_run_id for r in q.steer_results()] == [5]


def test_v93_mark_set_during_a_lost_interrupt() -> None:
    seen: dict[str, bool] = {}
    q, _ = _queue()

    def interrupt(name: str) -> None:
        seen["mark"] = q._stopped_for_steer
        raise SteerSessionLost("stopped but did not start again")

    q._interrupt = interrupt
    q.note_thread_id(THREAD)
    q.note_resumable()
    q.begin_turn()
    q.interrupt_if_turn_running()
    assert seen["mark"] is True
    assert q.take_stopped_for_steer() is True and q.take_stopped_for_steer() is False


def test_v95_second_check_in_one_turn_does_not_interrupt_again() -> None:
    q, intr = _queue()
    q.note_thread_id(THREAD)
    q.note_resumable()
    q.begin_turn()
    q.interrupt_if_turn_running()
    q.interrupt_if_turn_running()
    assert intr.count == 1


def test_v99_lost_is_terminal() -> None:
    q, intr = _queue(Interrupts(SteerSessionLost("the sandbox did not come back")))
    q.note_thread_id(THREAD)
    q.note_resumable()
    q.begin_turn()
    runtime = CodexExecRuntime()
    runtime._queues.register("sb", q)
    with pytest.raises(SteerSessionLost):
        runtime.steer("sb", SteerMessage(1, "x"))
    q.begin_turn()
    with pytest.raises(SteerSessionLost):
        runtime.steer("sb", SteerMessage(2, "y"))
    assert intr.count == 1 and q.steer_results() == []


class FakeSandbox:
    """Scripted stop/start/phase; records calls like the fake openshell's log."""

    def __init__(self, phases: list[Any], stop_error: str = "", start_error: str = "") -> None:
        self.phases, self.stop_error, self.start_error = list(phases), stop_error, start_error
        self.calls: list[str] = []

    def stop(self, timeout_s: float) -> None:
        self.calls.append("sandbox stop sbx")
        if self.stop_error:
            raise SandboxError(self.stop_error)

    def start(self, timeout_s: float) -> None:
        self.calls.append("sandbox start sbx")
        if self.start_error:
            raise SandboxError(self.start_error)

    def phase(self) -> str:
        self.calls.append("sandbox get sbx")
        item = self.phases.pop(0) if len(self.phases) > 1 else self.phases[0]
        if callable(item):
            return item()
        if isinstance(item, Exception):
            raise item
        return item


def _mono() -> Any:
    import time

    return time.monotonic


def test_v97_settle_check() -> None:
    with pytest.raises(SteerSessionLost, match='phase "Error"'):
        settle_after_start(FakeSandbox(["Ready", "Ready", "Error"]), FAST, _mono())
    steady = FakeSandbox(["Ready"])
    settle_after_start(steady, FAST, _mono())
    assert steady.calls.count("sandbox get sbx") > 2
    with pytest.raises(SteerSessionLost, match="could not confirm") as err:
        settle_after_start(FakeSandbox([SandboxError("gateway unreachable")]), FAST, _mono())
    assert "gateway unreachable" in str(err.value)

    def slow_ready() -> str:
        threading.Event().wait(0.35)
        return "Ready"

    with pytest.raises(SteerSessionLost, match='phase "Error"'):
        settle_after_start(FakeSandbox([slow_ready, "Error"]), FAST, _mono())
    flaky = [SandboxError("x"), SandboxError("x"), SandboxError("x"), "Ready"]
    settle_after_start(FakeSandbox(flaky), FAST, _mono())


def test_v98_stop_start_outcomes() -> None:
    with pytest.raises(SteerSessionLost) as err:
        stop_start_sandbox(FakeSandbox(["Ready", "Error"]), FAST, _mono())
    assert not isinstance(err.value, InterruptNotStopped)
    with pytest.raises(SteerSessionLost):
        stop_start_sandbox(
            FakeSandbox(["Ready"], start_error='sandbox "sbx" phase is "Error", not "Ready"'), FAST, _mono()
        )
    stop_start_sandbox(FakeSandbox(["Ready"]), FAST, _mono())
    with pytest.raises(SteerSessionLost) as err2:
        stop_start_sandbox(FakeSandbox(["Stopping", "Ready", "Error"], stop_error="timeout"), FAST, _mono())
    assert "not stopped" not in str(err2.value)


def test_v94_unconfirmed_stop_restarts_and_ready_stop_failure_does_not() -> None:
    sb = FakeSandbox(["Stopped", "Ready"], stop_error="stop did not confirm Stopped")
    stop_start_sandbox(sb, FAST, _mono())
    assert "sandbox start sbx" in sb.calls
    ready = FakeSandbox(["Ready"], stop_error="gateway down")
    with pytest.raises(InterruptNotStopped):
        stop_start_sandbox(ready, FAST, _mono())
    assert "sandbox start sbx" not in ready.calls


def test_v101_interrupt_bound() -> None:
    assert CODEX_STEER_INTERRUPT_BOUND_S == 97.0 and CODEX_STEER_INTERRUPT_BOUND_S < 300
    assert CODEX_START_SETTLE_CONFIRM_S == 5.0 and SettlePolicy().confirm_s == CODEX_START_SETTLE_CONFIRM_S


def test_parser_results() -> None:
    parser = CodexStreamParser()
    for obj in (
        {"type": "thread.started", "thread_id": "t"},
        {"type": "turn.started"},
        {
            "type": "turn.completed",
            "usage": {
                "input_tokens": 100,
                "cached_input_tokens": 40,
                "output_tokens": 12,
                "reasoning_output_tokens": 2,
            },
        },
    ):
        parser.parse(obj)
    [ok] = parser.finish()
    assert not ok.is_error and (ok.input_tokens, ok.output_tokens, ok.cache_read_input_tokens) == (60, 10, 40)
    failed = CodexStreamParser()
    failed.parse({"type": "turn.started"})
    failed.parse({"type": "turn.failed", "error": {"message": "boom"}})
    assert failed.finish()[0].subtype == "turn_failed"
    cut = CodexStreamParser()
    cut.parse({"type": "error", "message": "stream closed"})
    [r] = cut.finish()
    assert r.is_error and r.subtype == "incomplete" and r.error_message == "stream closed"
