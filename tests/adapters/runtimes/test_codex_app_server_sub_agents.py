"""Issue 43: a ``codex app-server`` turn can complete while a sub-agent it spawned still starts
or works (openai/codex#36141), and the sub-agent dies with the server when the action closes its
input.  The run holds the input open for its sub-agents, within ``delegated_wait_seconds``, and
any that did not end ``completed`` fails the run (docs/rules.md#delegated-unfinished).

The notification shapes are those the pinned ``codex app-server`` wrote for a spawned agent
(``thread/status/changed`` of the sub-agent's thread, the run's ``collabAgentToolCall`` item
naming it ``pendingInit``, the sub-agent's ``turn/started`` whose ``rootTurnId`` is the run's
turn, its ``turn/completed``)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from fullsend.adapters.runtimes.codex.appserver.runtime import CodexAppServerRuntime
from fullsend.adapters.runtimes.codex.appserver.stream import AppServerParser
from fullsend.adapters.runtimes.events import FaultEvent, HoldEvent, ResultEvent
from fullsend.adapters.runtimes.feed import SteerFeed
from fullsend.core.agent_end import AgentEnd
from fullsend.ports import AgentParams
from tests.support.transport_run import FixedClock, RunThread

NOW = datetime(2026, 9, 16, 12, 0, 0, tzinfo=UTC)
RUN, CHILD = "01a24a0d-8b73-76a2-8da0-ef17d75757dc", "01a24a0d-9133-7a40-90d2-93ee865cbc68"
RUN_TURN, CHILD_TURN = "01a24a0d-90c5-7dc0-b39c-513537abf7d2", "01a24a0d-913c-7fa3-bb3e-125c2c295ffb"


def _parser() -> AppServerParser:
    parser = AppServerParser(FixedClock(NOW))
    parser.session.set_opening("k-open", "Fix issue 42.")
    parser.parse({"id": "thread", "result": {"thread": {"id": RUN}, "model": "gpt-fake"}})
    return parser


def _turn(thread: str, turn: str, root: str, status: str = "inProgress") -> dict[str, Any]:
    return {"threadId": thread, "turn": {"id": turn, "rootTurnId": root, "items": [], "status": status, "error": None}}


def _spawn(states: dict[str, str], status: str = "completed") -> dict[str, Any]:
    item = {
        "type": "collabAgentToolCall",
        "id": "call_6114d12c1c384e319659",
        "tool": "spawnAgent",
        "status": status,
        "senderThreadId": RUN,
        "receiverThreadIds": list(states),
        "prompt": "Check the docs (sub-agent-marker).",
        "agentsStates": {t: {"status": s, "message": None} for t, s in states.items()},
    }
    return {"method": "item/completed", "params": {"item": item, "threadId": RUN, "turnId": RUN_TURN}}


def _feed(parser: AppServerParser, *lines: dict[str, Any]) -> list[Any]:
    events: list[Any] = []
    for line in lines:
        events += parser.parse(line)
    return events


def _spawned_then_parent_completed(parser: AppServerParser) -> list[Any]:
    return _feed(
        parser,
        {"method": "turn/started", "params": _turn(RUN, RUN_TURN, RUN_TURN)},
        {"method": "thread/status/changed", "params": {"threadId": CHILD, "status": {"type": "idle"}}},
        _spawn({CHILD: "pendingInit"}),
        {"method": "turn/started", "params": _turn(CHILD, CHILD_TURN, RUN_TURN)},
        {"method": "turn/completed", "params": _turn(RUN, RUN_TURN, RUN_TURN, "completed")},
    )


def test_the_input_is_held_while_a_sub_agent_works_and_released_when_it_completes() -> None:
    parser = _parser()
    events = _spawned_then_parent_completed(parser)
    assert [e for e in events if isinstance(e, HoldEvent)] == [HoldEvent(True)]
    [own_end] = [e for e in events if isinstance(e, ResultEvent)]
    assert own_end.verdict is not None and own_end.verdict.succeeded  # the run's own turn completed
    done = parser.parse({"method": "turn/completed", "params": _turn(CHILD, CHILD_TURN, RUN_TURN, "completed")})
    assert done == [HoldEvent(False)]  # not a turn end of the run's
    assert parser.finish() == []


@pytest.mark.parametrize(
    ("end", "says"),
    [
        (None, "still running"),
        ("failed", "failed"),
        ("interrupted", "interrupted"),
        ("cancelled-by-a-newer-codex", "cancelled-by-a-newer-codex"),
    ],
    ids=["still-running-at-eof", "failed", "interrupted", "unknown-status"],
)
def test_a_sub_agent_that_did_not_complete_is_unfinished_work(end: str | None, says: str) -> None:
    parser = _parser()
    _spawned_then_parent_completed(parser)
    if end is not None:
        parser.parse({"method": "turn/completed", "params": _turn(CHILD, CHILD_TURN, RUN_TURN, end)})
    [fault] = parser.finish()
    assert isinstance(fault, FaultEvent)
    assert (fault.verdict.end, fault.verdict.rule_id) == (AgentEnd.INTERRUPTED, "delegated-unfinished")
    assert fault.verdict.detail == f'sub-agent {CHILD} ("Check the docs (sub-agent-marker).") {says.lower()}'


def test_a_spawned_sub_agent_that_never_started_is_unfinished() -> None:
    parser = _parser()
    _feed(parser, {"method": "turn/started", "params": _turn(RUN, RUN_TURN, RUN_TURN)}, _spawn({CHILD: "pendingInit"}))
    [fault] = parser.finish()
    assert isinstance(fault, FaultEvent) and fault.verdict.detail.endswith("still starting")


def test_a_thread_the_run_did_not_spawn_is_not_its_work() -> None:
    """Another thread on the connection whose turn did not come from the run's (no spawn item, no
    root turn of the run's) is neither held for nor judged."""
    parser = _parser()
    events = _feed(
        parser,
        {"method": "turn/started", "params": _turn(RUN, RUN_TURN, RUN_TURN)},
        {"method": "turn/started", "params": _turn("another-thread", "t-x", "t-x")},
        {"method": "turn/completed", "params": _turn(RUN, RUN_TURN, RUN_TURN, "completed")},
    )
    assert not [e for e in events if isinstance(e, HoldEvent)] and parser.finish() == []


def test_the_feed_waits_for_held_work_at_most_the_delegated_wait() -> None:
    stopped = threading.Event()
    feed = SteerFeed(lambda cmd, t: ("", "", 0), "/m", "/p", FixedClock(NOW), [].append, stopped.set, hold_wait_s=0.05)
    assert feed.note_hold(True) is False
    assert feed.settle() is False  # settled, nothing outstanding: only the sub-agent keeps it open
    assert stopped.wait(10.0), "the delegated wait never ended"
    released = SteerFeed(lambda cmd, t: ("", "", 0), "/m", "/p", FixedClock(NOW), [].append, hold_wait_s=600)
    released.note_hold(True)
    assert released.settle() is False and released.note_hold(False) is True
    released.mark_terminal()


def _params(cli: str, tmp_path: Path, env: dict[str, str], wait_s: float) -> AgentParams:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return AgentParams(
        sandbox_name="sb-codex-live",
        agent_cli=cli,
        prompt="Fix issue 42.",
        workdir=work,
        env=env,
        steerable=False,
        timeout_s=60,
        delegated_wait_s=wait_s,
    )


def test_the_run_waits_for_its_sub_agent_and_succeeds(scripted_cli: str, tmp_path: Path) -> None:
    """The parent turn completes at once; the sub-agent needs 1.5 s more: the input stays open
    until it completed (at EOF it would die unfinished), and the run succeeds."""
    env = {"SCRIPTED_AGENT_TURN_S": "0.1", "SCRIPTED_APP_SERVER_SPAWN": "1.5:completed"}
    result = RunThread(CodexAppServerRuntime(sandbox_root_parent=tmp_path), _params(scripted_cli, tmp_path, env, 30))
    done = result.start().join()
    assert (done.end, done.is_error) == (AgentEnd.SUCCESS, False), done.error


@pytest.mark.parametrize(
    ("spawn", "says"),
    [("30:completed", "still running"), ("0.3:failed", "failed")],
    ids=["outlives-the-wait", "fails"],
)
def test_a_sub_agent_that_does_not_complete_within_the_wait_fails_the_run(
    scripted_cli: str, tmp_path: Path, spawn: str, says: str
) -> None:
    env = {"SCRIPTED_AGENT_TURN_S": "0.1", "SCRIPTED_APP_SERVER_SPAWN": spawn}
    run = RunThread(CodexAppServerRuntime(sandbox_root_parent=tmp_path), _params(scripted_cli, tmp_path, env, 1.0))
    result = run.start().join()
    assert (result.end, result.end_rule, result.is_error) == (AgentEnd.INTERRUPTED, "delegated-unfinished", True)
    assert result.error.startswith("work the agent delegated did not finish: sub-agent ")
    assert result.error.endswith(f'("Check the docs (sub-agent-marker).") {says}')
