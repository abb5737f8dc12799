"""Issue 43: work a Codex agent delegated to sub-agents counts only when it ended ``completed``
(docs/rules.md#delegated-unfinished), read from the pinned Codex's own shapes: the agent's
collaboration items (exec ``collab_tool_call``, app-server ``collabAgentToolCall``) and, on the
app-server, the sub-agent's own turns."""

from __future__ import annotations

from typing import Any

import pytest

from fullsend.adapters.runtimes.codex.delegated import DelegatedWork
from fullsend.adapters.runtimes.codex.exec.stream import CodexStreamParser
from fullsend.adapters.runtimes.events import FaultEvent, ResultEvent
from fullsend.core.agent_end import AgentEnd

PARENT, CHILD = "01a24a0d-7aaa-7b71-af03-cabb4fea0cce", "01a24a0d-7ba0-71d3-a662-50c4cdfba0d9"


def exec_collab(tool: str, states: dict[str, str], status: str = "completed", spawned: bool = True) -> dict[str, Any]:
    """A ``collab_tool_call`` item as the pinned ``codex exec --json`` writes it (snake_case)."""
    return {
        "id": "item_2",
        "type": "collab_tool_call",
        "tool": tool,
        "sender_thread_id": PARENT,
        "receiver_thread_ids": list(states) if spawned else [],
        "prompt": "Check the docs (sub-agent-marker).",
        "agents_states": {t: {"status": s, "message": None} for t, s in states.items()},
        "status": status,
    }


def app_collab(tool: str, states: dict[str, str]) -> dict[str, Any]:
    """A ``collabAgentToolCall`` item as the pinned ``codex app-server`` writes it (camelCase)."""
    return {
        "type": "collabAgentToolCall",
        "id": "call_1",
        "tool": tool,
        "status": "completed",
        "senderThreadId": PARENT,
        "receiverThreadIds": list(states),
        "prompt": "Check the docs (sub-agent-marker).",
        "agentsStates": {t: {"status": s, "message": None} for t, s in states.items()},
    }


@pytest.mark.parametrize(
    ("items", "finished"),
    [
        ([exec_collab("spawn_agent", {CHILD: "pending_init"})], False),
        ([exec_collab("spawn_agent", {CHILD: "pending_init"}), exec_collab("wait", {CHILD: "running"})], False),
        ([exec_collab("spawn_agent", {CHILD: "pending_init"}), exec_collab("wait", {CHILD: "completed"})], True),
        (
            [
                exec_collab("spawn_agent", {CHILD: "pending_init"}),
                exec_collab("wait", {CHILD: "completed"}),
                exec_collab("close_agent", {CHILD: "shutdown"}),
            ],
            True,
        ),
        ([exec_collab("spawn_agent", {CHILD: "running"}), exec_collab("close_agent", {CHILD: "shutdown"})], False),
        ([exec_collab("spawn_agent", {CHILD: "pending_init"}), exec_collab("wait", {CHILD: "errored"})], False),
        ([exec_collab("spawn_agent", {CHILD: "pending_init"}), exec_collab("wait", {CHILD: "not_found"})], False),
        ([exec_collab("spawn_agent", {CHILD: "pending_init"}), exec_collab("wait", {CHILD: "paused"})], False),
        ([app_collab("spawnAgent", {CHILD: "pendingInit"}), app_collab("wait", {CHILD: "completed"})], True),
        ([app_collab("spawnAgent", {CHILD: "pendingInit"}), app_collab("wait", {CHILD: "interrupted"})], False),
    ],
    ids=[
        "spawned-never-waited",
        "waited-still-running",
        "waited-completed",
        "closed-after-completed",
        "closed-while-running",
        "errored",
        "not-found",
        "unknown-state",
        "app-server-completed",
        "app-server-interrupted",
    ],
)
def test_only_a_sub_agent_whose_last_word_is_completed_finished(items: list[dict[str, Any]], finished: bool) -> None:
    work = DelegatedWork()
    for item in items:
        work.note_collab_item(item)
    assert (work.unfinished() == []) is finished
    if not finished:
        [line] = work.unfinished()
        assert line.startswith(f'sub-agent {CHILD} ("Check the docs (sub-agent-marker).")')


def test_a_failed_spawn_names_no_sub_agent() -> None:
    work = DelegatedWork()
    work.note_collab_item(exec_collab("spawn_agent", {}, status="failed", spawned=False))
    assert work.agents == {} and not work.working()


def test_the_sub_agents_own_turns_outrank_a_stale_snapshot() -> None:
    """On the app-server the sub-agent's own turn ends are newer than what the agent last saw: a
    snapshot taken before its turn completed (``pendingInit``) changes nothing after it."""
    work = DelegatedWork()
    work.note_turn_started(PARENT, "turn-1", "turn-1", own=True)
    work.note_turn_started(CHILD, "turn-c", "turn-1", own=False)  # learnt from its root turn
    assert work.working() and work.unfinished() == [f"sub-agent {CHILD} still running"]
    work.note_turn_completed(CHILD, "turn-c", "completed")
    work.note_collab_item(app_collab("spawnAgent", {CHILD: "pendingInit"}))
    assert not work.working() and work.unfinished() == []
    work.note_turn_started(CHILD, "turn-d", "turn-1", own=False)
    work.note_turn_completed(CHILD, "turn-d", "failed")
    assert work.unfinished() == [f'sub-agent {CHILD} ("Check the docs (sub-agent-marker).") failed']


def test_a_thread_outside_the_runs_tree_is_not_delegated_work() -> None:
    work = DelegatedWork()
    work.note_turn_started(PARENT, "turn-1", "turn-1", own=True)
    work.note_turn_started("someone-else", "turn-x", "turn-other", own=False)
    assert work.agents == {} and not work.is_sub_agent("someone-else")


def _exec_events(*items: dict[str, Any]) -> list[Any]:
    parser = CodexStreamParser()
    for obj in (
        {"type": "thread.started", "thread_id": PARENT},
        {"type": "turn.started"},
        *({"type": "item.completed", "item": item} for item in items),
        {"type": "turn.completed", "usage": {}},
    ):
        parser.parse(obj)
    return parser.finish()


def test_exec_ends_its_sub_agents_with_the_process() -> None:
    """What the pinned codex exec writes when the agent spawns and does not wait (issue 43's
    trace): the turn completes with the child pending_init; exec exits and the child with it."""
    result, fault = _exec_events(exec_collab("spawn_agent", {CHILD: "pending_init"}))
    assert isinstance(result, ResultEvent) and result.verdict is not None and result.verdict.succeeded
    assert isinstance(fault, FaultEvent)
    assert (fault.verdict.end, fault.verdict.rule_id) == (AgentEnd.INTERRUPTED, "delegated-unfinished")
    assert fault.verdict.message() == (
        f'work the agent delegated did not finish: sub-agent {CHILD} ("Check the docs (sub-agent-marker).") still starting'
    )
    waited = _exec_events(
        exec_collab("spawn_agent", {CHILD: "pending_init"}), exec_collab("wait", {CHILD: "completed"})
    )
    assert [type(e) for e in waited] == [ResultEvent]
