"""Issue 16: acks by identity for every delivery shape (docs/architecture.md "Acknowledgement"; pi 1.x rpc).

A replay carrying several queued messages acks each message it carries exactly once; an ack
that matches nothing outstanding is ignored; a steer with conflicting responses is not
delivered; pi's ``queued`` is not yet an ack (the delivery is), ``handled`` and ``rejected``
never are.
"""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fullsend.adapters.runtimes.claude.runtime import ClaudeRuntime
from fullsend.adapters.runtimes.claude.stream import ClaudeStreamParser, claude_input_line
from fullsend.adapters.runtimes.events import DELIVERED, QUEUED, REJECTED, UserReplayEvent
from fullsend.adapters.runtimes.feed import SteerFeed
from fullsend.adapters.runtimes.liverun import ActiveRun
from fullsend.adapters.runtimes.pi.stream import PiAggregator, PiStreamParser, pi_input_line
from fullsend.core.agent_end import AgentEnd
from fullsend.core.watch.steer import SteerMessage
from fullsend.errors import NoSteerSession
from fullsend.ports import AgentParams
from tests.doubles.pending import lines_awaiting_echo
from tests.support.transport_run import FixedClock, RunThread, read_log, wait_for

NOW = datetime(2026, 11, 20, 12, 0, 0, tzinfo=UTC)
A, B = SteerMessage(501, "first update"), SteerMessage(502, "second update")


def _feed(warnings: list[str] | None = None) -> SteerFeed:
    sink = warnings if warnings is not None else []
    return SteerFeed(lambda c, t: ("", "", 0), "/cfg/in", "/cfg/pid", FixedClock(NOW), warn=sink.append)


def _claude_feed() -> SteerFeed:
    feed = _feed()
    feed.seed(claude_input_line("do the task"), "do the task", text="do the task")
    feed.note_echo(NOW, content="do the task")
    for msg in (A, B):
        feed.append_line(msg, claude_input_line(msg.text), msg.text, text=msg.text)
    return feed


def _fold(*texts: str) -> dict[str, Any]:
    return {
        "type": "user",
        "isReplay": True,
        "session_id": "s",
        "uuid": "u",
        "parent_tool_use_id": None,
        "timestamp": "2026-11-20T12:00:00Z",
        "message": {"role": "user", "content": [{"type": "text", "text": t} for t in texts]},
    }


def test_a_folded_replay_acks_each_queued_steer_once() -> None:
    feed = _claude_feed()
    [event] = ClaudeStreamParser(FixedClock(NOW)).parse(_fold(A.text, B.text))
    assert isinstance(event, UserReplayEvent) and event.parts == (A.text, B.text)
    feed.note_echo(event.at, event.id, event.content, event.parts)
    assert [r.follow_up_run_id for r in feed.steer_results()] == [501, 502]
    assert lines_awaiting_echo(feed) == 0
    feed.note_echo(event.at, event.id, event.content, event.parts)  # the same replay again: nothing new
    assert [r.follow_up_run_id for r in feed.steer_results()] == [501, 502]


def test_a_batch_replayed_as_one_string_acks_each_steer_once() -> None:
    """The pinned Claude Code (2.1.332) replays queued messages it runs as one batch as ONE user
    message whose content is their texts joined by a newline; recorded from the real CLI:
    ``{"type":"user","message":{"role":"user","content":"and also this\\nand that too"},…,"isReplay":true}``."""
    feed = _feed()
    a_text, b_text = f"Runner update\n\n{A.text}\n", f"Runner update\n\n{B.text}\n"
    for msg, text in ((A, a_text), (B, b_text)):
        feed.append_line(msg, claude_input_line(text), text, text=text)
    replay = {**_fold(), "message": {"role": "user", "content": f"{a_text}\n{b_text}"}}
    [event] = ClaudeStreamParser(FixedClock(NOW)).parse(replay)
    assert feed.note_echo(event.at, event.id, event.content, event.parts) is False  # not settled
    assert [r.follow_up_run_id for r in feed.steer_results()] == [501, 502]
    assert lines_awaiting_echo(feed) == 0


def test_a_string_that_is_not_a_join_of_outstanding_steers_acks_nothing() -> None:
    feed = _claude_feed()
    feed.note_echo(NOW, content=f"{A.text}\nsomething else")
    feed.note_echo(NOW, content=f"{B.text}\n{A.text}")  # out of order: not how a batch is folded
    assert feed.steer_results() == [] and lines_awaiting_echo(feed) == 2


def test_a_folded_replay_acks_only_what_it_carries_and_ignores_the_rest() -> None:
    feed = _claude_feed()
    feed.note_echo(NOW, content=f"{B.text}\nnoise", parts=(B.text, B.text, "noise the agent wrote"))
    assert [r.follow_up_run_id for r in feed.steer_results()] == [502]
    assert lines_awaiting_echo(feed) == 1


def test_an_ack_matching_nothing_outstanding_is_ignored() -> None:
    feed = _claude_feed()
    assert feed.note_echo(NOW, content="an update nobody sent") is False
    assert feed.note_echo(NOW, id="no-such-id") is False
    assert feed.steer_results() == [] and lines_awaiting_echo(feed) == 2


def test_a_whole_message_match_wins_over_its_parts() -> None:
    """A single steer the CLI split into blocks still acks as the one message it is."""
    feed = _feed()
    whole = "line one\nline two"
    feed.append_line(A, claude_input_line(whole), whole, text=whole)
    feed.note_echo(NOW, content=whole, parts=("line one", "line two"))
    assert [r.follow_up_run_id for r in feed.steer_results()] == [501]


def _pi_feed(warnings: list[str]) -> SteerFeed:
    feed = _feed(warnings)
    feed.seed(pi_input_line("p1", "do the task"), "p1", text="do the task")
    feed.append_line(A, pi_input_line("s1", A.text, "steer"), "s1", text=A.text)
    return feed


def test_accepted_then_rejected_is_not_delivered() -> None:
    warnings: list[str] = []
    feed = _pi_feed(warnings)
    feed.note_echo(NOW, id="s1")
    assert [r.follow_up_run_id for r in feed.steer_results()] == [501]
    feed.note_nack("s1")
    assert feed.steer_results() == []
    assert warnings == [
        "The agent accepted and then rejected the update from follow-up run 501; it counts as not delivered"
    ]
    feed.note_echo(NOW, id="s1")
    feed.note_echo(NOW, content=A.text)
    assert feed.steer_results() == []


def test_rejected_then_accepted_stays_undelivered() -> None:
    feed = _pi_feed([])
    feed.note_nack("s1")
    feed.note_echo(NOW, id="s1")
    feed.note_echo(NOW, content=A.text)
    assert feed.steer_results() == [] and lines_awaiting_echo(feed) == 1  # only the opening prompt


def test_pi_queued_is_not_an_ack_until_the_delivery() -> None:
    feed = _pi_feed([])
    feed.note_queued("s1")
    assert feed.steer_results() == [] and lines_awaiting_echo(feed) == 2
    feed.note_echo(NOW, content=A.text)  # pi's user message_start with the steer's text
    assert [r.follow_up_run_id for r in feed.steer_results()] == [501]


def _pi_events(objs: list[dict[str, Any]]) -> list[Any]:
    parser = PiStreamParser(FixedClock(NOW))
    return [e for obj in objs for e in parser.parse(obj)]


def _response(rid: str, **data: Any) -> dict[str, Any]:
    return {"id": rid, "type": "response", "command": "prompt", "success": True, **({"data": data} if data else {})}


def test_pi_dispositions() -> None:
    events = _pi_events(
        [
            _response("p1", disposition="started"),
            _response("s1", disposition="queued"),
            _response("s2", disposition="handled"),
            _response("s3"),
            {"id": "s4", "type": "response", "command": "prompt", "success": False, "error": "no"},
            {"type": "message_start", "message": {"role": "user", "content": [{"type": "text", "text": A.text}]}},
            {"type": "message_start", "message": {"role": "assistant", "content": []}},
        ]
    )
    assert [(e.id, e.content, e.disposition) for e in events] == [
        ("p1", "", DELIVERED),
        ("s1", "", QUEUED),
        ("s2", "", REJECTED),
        ("s3", "", QUEUED),
        ("s4", "", REJECTED),
        ("", A.text, DELIVERED),
    ]


def test_pi_queued_steer_through_the_driver() -> None:
    """The live driver turns a queued response into no ack, and the user message into the ack."""
    feed = _pi_feed([])
    active, agg = (
        ActiveRun(sandbox=None, feed=feed, clock=FixedClock(NOW), parser=PiStreamParser(FixedClock(NOW))),
        PiAggregator(),
    )
    for event in _pi_events([_response("p1", disposition="started"), _response("s1", disposition="queued")]):
        active.handle(event, agg, lambda at: None, lambda line: None)
    assert feed.steer_results() == []
    for event in _pi_events([{"type": "message_start", "message": {"role": "user", "content": A.text}}]):
        active.handle(event, agg, lambda at: None, lambda line: None)
    assert [r.follow_up_run_id for r in feed.steer_results()] == [501]


def _params(cli: str, tmp_path: Path, env: dict[str, str]) -> AgentParams:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return AgentParams(
        sandbox_name="sb-fold",
        agent_cli=cli,
        prompt="Fix issue 42",
        workdir=work,
        env=env,
        steerable=True,
        timeout_s=60,
    )


def _steer(runtime: ClaudeRuntime, msg: SteerMessage) -> None:
    def attempt() -> bool:
        try:
            runtime.steer("sb-fold", msg)
        except NoSteerSession:
            return False
        return True

    wait_for(attempt, "the feed was registered")


def test_scripted_claude_folds_two_queued_steers_and_both_are_acked(scripted_cli: str, tmp_path: Path) -> None:
    """Two steers queued during one turn come back as ONE replay with two text blocks."""
    log = tmp_path / "agent-log.ndjson"
    env = {
        "SCRIPTED_AGENT_TURN_S": "1.5",
        "SCRIPTED_AGENT_ECHO": "boundary",
        "SCRIPTED_AGENT_FOLD": "blocks",
        "SCRIPTED_AGENT_LOG": str(log),
    }
    runtime = ClaudeRuntime(sandbox_root_parent=tmp_path)
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env)).start()
    wait_for(lambda: len(read_log(log)) == 1, "the opening prompt reached the agent")
    _steer(runtime, A)
    _steer(runtime, B)
    run.wait_turns(1)
    runtime.settle("sb-fold")
    result = run.join()
    assert result.end is AgentEnd.SUCCESS and result.exit_code == 0
    assert [s.follow_up_run_id for s in result.steers] == [501, 502]
    assert result.turns == 1  # both absorbed into the running turn


def test_claude_output_ending_inside_an_acked_turn_is_interrupted() -> None:
    """A replay acked a message and the stream ended before that turn's result."""
    feed = _feed()
    feed.seed(claude_input_line("do the task"), "do the task", text="do the task")
    runtime = ClaudeRuntime(clock=FixedClock(NOW))
    active = ActiveRun(
        sandbox=None, feed=feed, clock=FixedClock(NOW), parser=runtime.dialect.new_parser(FixedClock(NOW))
    )
    stdout = io.BytesIO((json.dumps(_fold("do the task")) + "\n").encode())
    active.pump(
        stdout, runtime.dialect.new_aggregator(), runtime.dialect.incomplete, lambda at: None, lambda line: None
    )
    assert active.deciding_result is not None and active.deciding_result.verdict is not None
    assert (active.deciding_result.verdict.end, active.deciding_result.verdict.reason) == (
        AgentEnd.INTERRUPTED,
        "incomplete",
    )
