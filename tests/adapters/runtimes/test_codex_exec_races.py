"""Issue 43: the Codex exec transport's races, in-process with the real loop, queue and parser
against the scripted ``codex exec`` (docs/runtimes.md "Codex", "Which end counts").

- a terminal line ends the turn when it is read: a steer that arrives after ``turn.failed`` and
  before the process exits does not stop it, and the failed turn stays the verdict;
- ``error`` and then ``turn.completed`` is not success (exec cannot tell a retried error);
- a resume is acknowledged only by the run's own thread id; any other id is a lost session;
- a steer waits until the opening turn is resumable (its first item), never stopping a turn
  that could not be resumed;
- an unreadable output line fails the run.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from fullsend.adapters.runtimes.codex.exec.interrupt import SettlePolicy
from fullsend.adapters.runtimes.codex.exec.loop import STOPPED_FOR_STEER_NOTE, CodexLoop, CodexOutcome, CodexRunState
from fullsend.adapters.runtimes.codex.exec.queue import CodexSteerQueue
from fullsend.adapters.runtimes.codex.exec.runtime import CodexExecRuntime
from fullsend.adapters.runtimes.codex.exec.stream import CodexStreamParser
from fullsend.adapters.runtimes.events import ResultEvent
from fullsend.core.agent_end import AgentEnd
from fullsend.core.watch.steer import SteerMessage
from fullsend.ports import AgentParams
from tests.support.transport_run import FixedClock, RunThread, read_log, wait_for

PROMPT = "Implement issue 12"
POLICY = SettlePolicy(window_s=0.3, confirm_s=1.0, poll_s=0.02, read_bound_s=1.0)
SANDBOX = "sb-codex"
NOW = datetime(2026, 9, 16, 12, 0, 0, tzinfo=UTC)
THREAD = "01a066e2-a54e-7222-84ae-53549f3d2316"
#: The opening turn's first item: from here on its thread can be resumed.
FIRST_ITEM = {"type": "item.started", "item": {"id": "item_1", "type": "command_execution", "status": "in_progress"}}


def _params(cli: str, tmp_path: Path, env: dict[str, str], steerable: bool = True) -> AgentParams:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return AgentParams(
        sandbox_name=SANDBOX, agent_cli=cli, prompt=PROMPT, workdir=work, env=env, steerable=steerable, timeout_s=60
    )


def _runtime(tmp_path: Path) -> CodexExecRuntime:
    return CodexExecRuntime(sandbox_root_parent=tmp_path, settle_policy=POLICY)


def _thread_known(runtime: CodexExecRuntime) -> bool:
    queue = runtime._queues.lookup(SANDBOX)
    return queue is not None and bool(queue.thread_id)


def _settle_after(run: RunThread, runtime: CodexExecRuntime, turns: int) -> None:
    run.on_turn = lambda at: runtime.settle(SANDBOX) if len(run.turn_ends) >= turns else None


def test_a_steer_after_turn_failed_does_not_relabel_the_failed_turn(scripted_cli: str, tmp_path: Path) -> None:
    """turn.failed (a usage limit) is out, the process has not exited; a steer arrives: the turn
    is not stopped for it, the steer is resumed after the exit, and the run fails by the limit."""
    flag = tmp_path / "terminal.flag"
    env = {
        "SCRIPTED_AGENT_TURN_S": "0.1",
        "SCRIPTED_CODEX_FIRST_EVENTS": json.dumps([FIRST_ITEM]),
        "SCRIPTED_CODEX_FIRST_RESULT": json.dumps({"type": "turn.failed", "error": {"message": "usage limit hit"}}),
        "SCRIPTED_CODEX_FIRST_LINGER_S": "3",
        "SCRIPTED_CODEX_TERMINAL_FLAG": str(flag),
        "SCRIPTED_AGENT_LOG": str(tmp_path / "log.ndjson"),
    }
    runtime = _runtime(tmp_path)
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env))
    _settle_after(run, runtime, 2)
    run.start()
    wait_for(flag.exists, "codex wrote turn.failed")
    runtime.steer(SANDBOX, SteerMessage(61, "late update"))
    result = run.join()
    assert (result.end, result.is_error) == (AgentEnd.LIMIT_REACHED, True), result.error
    assert result.error == "codex reached a usage or context limit (turn.failed): usage limit hit"
    assert STOPPED_FOR_STEER_NOTE not in run.output
    assert len(read_log(tmp_path / "log.ndjson")) == 2  # the steer still went in, by a resume after the exit


def test_error_then_turn_completed_is_not_success_on_exec(scripted_cli: str, tmp_path: Path) -> None:
    """exec writes ``error`` for a retried error too: a turn with one cannot be proven a success."""
    error = {"type": "error", "message": "stream disconnected before completion; retrying 1/5"}
    env = {"SCRIPTED_AGENT_TURN_S": "0.1", "SCRIPTED_CODEX_FIRST_EVENTS": json.dumps([error])}
    runtime = _runtime(tmp_path)
    result = RunThread(runtime, _params(scripted_cli, tmp_path, env, steerable=False)).start().join()
    assert (result.end, result.is_error) == (AgentEnd.AGENT_ERROR, True)
    assert result.error == (
        "codex reported an error during the turn and still said completed (turn.completed after error): "
        "stream disconnected before completion; retrying 1/5"
    )


def test_a_resume_that_reports_another_thread_is_a_lost_session(scripted_cli: str, tmp_path: Path) -> None:
    """The resume lands in a fresh thread (no rollout of the run's thread): nothing is acknowledged,
    the run fails as a lost session, and the queued run keeps the update."""
    env = {
        "SCRIPTED_AGENT_TURN_S": "0.2",
        "SCRIPTED_CODEX_RESUME_THREAD_ID": "new",
        "SCRIPTED_CODEX_RESUME_TURN_S": "5",
    }
    runtime = _runtime(tmp_path)
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env))
    run.on_turn = lambda at: (
        runtime.steer(SANDBOX, SteerMessage(62, "x")) if len(run.turn_ends) == 1 else runtime.settle(SANDBOX)
    )
    result = run.start().join()
    assert result.steers == [] and [a for a in run.acks if a[1]] == []
    assert result.session_lost and result.is_error and result.end == AgentEnd.INTERRUPTED
    assert result.end_rule == "session-lost"
    assert "reported the thread" in result.error and "not the run's thread" in result.error


def test_a_steer_waits_until_the_opening_turn_is_resumable(scripted_cli: str, tmp_path: Path) -> None:
    """The thread is known but the opening turn has no item yet (Codex may not have persisted the
    thread): the steer does not stop it then; it stops the turn at its first item, and the resume
    delivers it."""
    env = {
        "SCRIPTED_AGENT_TURN_S": "20",
        "SCRIPTED_CODEX_EVENTS_AFTER_S": "1",
        "SCRIPTED_CODEX_FIRST_EVENTS": json.dumps([FIRST_ITEM]),
        "SCRIPTED_CODEX_RESUME_TURN_S": "0.1",
    }
    resumable_at_stop: list[bool] = []

    def interrupt(sandbox: object) -> None:
        resumable_at_stop.append(_queue_resumable(runtime))
        runtime._stop_start(sandbox)

    runtime = CodexExecRuntime(sandbox_root_parent=tmp_path, settle_policy=POLICY, interrupt=interrupt)
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env))
    _settle_after(run, runtime, 1)
    run.start()
    wait_for(lambda: _thread_known(runtime), "codex reported its thread")
    assert not _queue_resumable(runtime)
    runtime.steer(SANDBOX, SteerMessage(63, "early update"))
    result = run.join()
    assert (result.end, result.is_error) == (AgentEnd.SUCCESS, False), result.error
    assert [s.follow_up_run_id for s in result.steers] == [63]
    assert resumable_at_stop == [True] and STOPPED_FOR_STEER_NOTE in run.output


def test_a_steer_after_the_first_item_stops_the_turn(scripted_cli: str, tmp_path: Path) -> None:
    """Once the opening turn wrote an item its thread is resumable: the steer stops it at once."""
    env = {"SCRIPTED_AGENT_TURN_S": "20", "SCRIPTED_CODEX_FIRST_EVENTS": json.dumps([FIRST_ITEM])}
    env["SCRIPTED_CODEX_RESUME_TURN_S"] = "0.1"
    runtime = _runtime(tmp_path)
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env))
    _settle_after(run, runtime, 1)
    run.start()
    wait_for(lambda: _queue_resumable(runtime), "the opening turn wrote its first item")
    runtime.steer(SANDBOX, SteerMessage(64, "update"))
    result = run.join()
    assert (result.end, [s.follow_up_run_id for s in result.steers]) == (AgentEnd.SUCCESS, [64]), result.error
    assert STOPPED_FOR_STEER_NOTE in run.output


def _queue_resumable(runtime: CodexExecRuntime) -> bool:
    queue = runtime._queues.lookup(SANDBOX)
    return queue is not None and queue.resumable


def test_an_unreadable_line_fails_the_exec_run(scripted_cli: str, tmp_path: Path) -> None:
    """docs/runtimes.md: a line opening like a JSON object that does not parse may have been a
    turn end; the run cannot be judged a success."""
    env = {"SCRIPTED_AGENT_TURN_S": "0.1", "SCRIPTED_CODEX_FIRST_EVENTS": json.dumps(['{"type":"turn.fail'])}
    result = RunThread(_runtime(tmp_path), _params(scripted_cli, tmp_path, env, steerable=False)).start().join()
    assert (result.end, result.is_error) == (AgentEnd.PROTOCOL_BROKEN, True)
    assert "does not parse" in result.error


class ScriptedTurns:
    """A ``TurnRunner`` whose processes end as scripted; a turn in ``stop_hits`` was also stopped
    for a steer (its stop raced the terminal line already in the pipe)."""

    def __init__(self, queue: CodexSteerQueue, outcomes: list[CodexOutcome], stop_hits: set[int]) -> None:
        self.queue, self.outcomes, self.stop_hits, self.count = queue, outcomes, stop_hits, 0
        self.clock = FixedClock(NOW)

    def run_turn(self, active: Any, params: Any, turn: Any, budget_s: float, aggregator: Any, on_output: Any) -> Any:
        out = self.outcomes[self.count]
        self.queue.note_thread_id(out.thread_id)
        if self.count in self.stop_hits:
            self.queue._stopped_for_steer = True
        self.count += 1
        if self.count == len(self.outcomes):
            self.queue.settle()
        else:
            self.queue.enqueue(SteerMessage(70 + self.count, "update"))
        return out

    def render(self, msg: SteerMessage) -> str:
        return msg.text

    def monotonic(self) -> float:
        return 0.0

    def call(self, fn: Any, arg: Any) -> None:
        fn(arg)


def _result(*lines: dict[str, Any]) -> ResultEvent:
    parser = CodexStreamParser()
    for line in ({"type": "thread.started", "thread_id": THREAD}, {"type": "turn.started"}, *lines):
        parser.parse(line)
    [result] = parser.finish()
    assert isinstance(result, ResultEvent)
    return result


def _loop_result(outcomes: list[CodexOutcome], stop_hits: set[int]) -> Any:
    queue = CodexSteerQueue(SANDBOX, lambda _n: None, FixedClock(NOW))
    runner = ScriptedTurns(queue, outcomes, stop_hits)
    params = AgentParams(
        sandbox_name=SANDBOX, agent_cli="codex", prompt=PROMPT, workdir=Path("."), env={}, steerable=True, timeout_s=60
    )
    return CodexLoop(runner, CodexRunState(None, queue), params, lambda _at: None, lambda _t: None).run()


@pytest.mark.parametrize(
    ("terminal", "end"),
    [
        ({"type": "turn.failed", "error": {"message": "boom"}}, AgentEnd.AGENT_ERROR),
        ({"type": "turn.completed", "usage": {}}, AgentEnd.SUCCESS),
    ],
)
def test_a_stop_that_raced_a_terminal_line_is_judged_by_the_line(terminal: dict[str, Any], end: AgentEnd) -> None:
    """The stop hit a process whose terminal line was already written: that line ended the turn
    (failed stays failed, even though the resume completes; completed keeps its success)."""
    stopped = CodexOutcome(exit_code=-15, thread_id=THREAD, result=_result(terminal))
    resumed = CodexOutcome(exit_code=0, thread_id=THREAD, result=_result({"type": "turn.completed", "usage": {}}))
    result = _loop_result([stopped, resumed], stop_hits={0})
    assert result.end == end, result.error


def test_only_a_turn_without_a_terminal_line_is_stopped_for_a_steer() -> None:
    stopped = CodexOutcome(exit_code=-15, thread_id=THREAD, result=_result())
    resumed = CodexOutcome(exit_code=0, thread_id=THREAD, result=_result({"type": "turn.completed", "usage": {}}))
    result = _loop_result([stopped, resumed], stop_hits={0})
    assert (result.end, [s.follow_up_run_id for s in result.steers]) == (AgentEnd.SUCCESS, [71])


SPAWN_STARTED = {
    "type": "item.started",
    "item": {
        "id": "item_2",
        "type": "collab_tool_call",
        "tool": "spawn_agent",
        "sender_thread_id": THREAD,
        "receiver_thread_ids": [],
        "prompt": "Check the docs.",
        "agents_states": {},
        "status": "in_progress",
    },
}
CHILD = "01a24a0d-7ba0-71d3-a662-50c4cdfba0d9"
SPAWN_DONE = {
    "type": "item.completed",
    "item": {
        **SPAWN_STARTED["item"],  # type: ignore[dict-item]
        "receiver_thread_ids": [CHILD],
        "agents_states": {CHILD: {"status": "pending_init", "message": None}},
        "status": "completed",
    },
}


def test_a_sub_agent_left_behind_by_an_exec_turn_is_unfinished_work(scripted_cli: str, tmp_path: Path) -> None:
    """The turn spawns a sub-agent and completes without waiting for it (openai/codex#36141):
    codex exec exits and ends the sub-agent with it; the run fails delegated-unfinished."""
    env = {"SCRIPTED_AGENT_TURN_S": "0.1", "SCRIPTED_CODEX_FIRST_EVENTS": json.dumps([SPAWN_STARTED, SPAWN_DONE])}
    result = RunThread(_runtime(tmp_path), _params(scripted_cli, tmp_path, env, steerable=False)).start().join()
    assert (result.end, result.end_rule, result.is_error) == (AgentEnd.INTERRUPTED, "delegated-unfinished", True)
    assert (
        result.error == f'work the agent delegated did not finish: sub-agent {CHILD} ("Check the docs.") still starting'
    )


def test_a_line_read_during_an_interrupt_does_not_lose_the_sandbox(scripted_cli: str, tmp_path: Path) -> None:
    """The stopped process writes one more line as the stop lands (here a collaboration item): the
    reader waits behind the interrupt to note it, longer than the exit grace, and the run's
    supervisor must not stop the sandbox the interrupt just started again (that lost the
    session: the real Codex's two-steers case did it)."""
    slow = SettlePolicy(window_s=2.5, confirm_s=1.0, poll_s=0.02, read_bound_s=1.0)
    wait_item = {"type": "item.completed", "item": {"id": "item_9", "type": "collab_tool_call", "tool": "wait"}}
    env = {
        "SCRIPTED_AGENT_TURN_S": "20",
        "SCRIPTED_CODEX_RESUME_TURN_S": "0.1",
        "SCRIPTED_CODEX_ON_TERM": json.dumps(wait_item),
    }
    runtime = CodexExecRuntime(sandbox_root_parent=tmp_path, settle_policy=slow)
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env))
    _settle_after(run, runtime, 2)
    run.start()
    wait_for(lambda: _queue_resumable(runtime), "the opening turn wrote its first item")
    runtime.steer(SANDBOX, SteerMessage(65, "update"))
    result = run.join()
    assert not result.session_lost and (result.end, result.is_error) == (AgentEnd.SUCCESS, False), result.error
    assert [s.follow_up_run_id for s in result.steers] == [65]
