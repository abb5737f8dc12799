"""pi rpc: input lines, parser, feed keys, decline gate, scripted runs.

Vectors 46 (pi), 52-63, 64 (steered order), 65.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from fullsend.adapters.runtimes.events import ResultEvent, UserReplayEvent
from fullsend.adapters.runtimes.feed import SteerFeed
from fullsend.adapters.runtimes.pi.runtime import PI_FALLBACK_DECLINE, PiRuntime, new_session_id
from fullsend.adapters.runtimes.pi.stream import PiStreamParser, pi_input_line
from fullsend.core.agent_end import AgentEnd
from fullsend.core.watch.steer import SteerMessage
from fullsend.errors import NoSteerSession, SandboxError, SteerAfterSettle, SteerUnsupported
from fullsend.ports import AgentParams
from tests.doubles.pending import lines_awaiting_echo
from tests.support.transport_run import FixedClock, RunThread, read_log, wait_for

NOW = datetime(2026, 9, 16, 12, 0, 0, tzinfo=UTC)
PROMPT = "Triage issue 9"


def _parse(stream: list[dict[str, Any]], per_prompt: bool = True) -> tuple[list[Any], PiStreamParser]:
    parser = PiStreamParser(FixedClock(NOW), per_prompt=per_prompt)
    events: list[Any] = []
    for obj in stream:
        events += parser.parse(obj)
    return events + parser.finish(), parser


def _ok(rid: str) -> dict[str, Any]:
    return {"id": rid, "type": "response", "command": "prompt", "success": True}


def _msg_end(i: int, o: int, stop: str = "stop", error: str = "") -> dict[str, Any]:
    m: dict[str, Any] = {"role": "assistant", "content": [], "stopReason": stop, "usage": {"input": i, "output": o}}
    if error:
        m["errorMessage"] = error
    return {"type": "message_end", "message": m}


START, END, SETTLED = {"type": "agent_start"}, {"type": "agent_end", "willRetry": False}, {"type": "agent_settled"}


def _results(events: list[Any]) -> list[ResultEvent]:
    return [e for e in events if isinstance(e, ResultEvent)]


def test_v52_input_line() -> None:
    line = pi_input_line("id-1", "first\nsecond", "steer")
    assert "\n" not in line
    assert '"type":"prompt"' in line and '"id":"id-1"' in line and '"streamingBehavior":"steer"' in line
    assert line.index('"id"') < line.index('"type"') < line.index('"message"') < line.index('"streamingBehavior"')
    assert "streamingBehavior" not in pi_input_line("id-1", "x", "")


def test_v53_steer_writes_one_steer_prompt() -> None:
    runtime = PiRuntime()
    calls: list[str] = []
    feed = SteerFeed(
        lambda c, t: (calls.append(c), ("", "", 0))[1],
        "/sandbox/pi-config/steer-inbox.ndjson",
        "/sandbox/pi-config/steer-feeder.pid",
        FixedClock(NOW),
    )
    runtime._feeds.register("sb", feed)
    runtime.steer("sb", SteerMessage(4, "cover the error path", actor="octocat"))
    assert len(calls) == 1
    assert '"streamingBehavior":"steer"' in calls[0] and "cover the error path" in calls[0]
    assert ">> '/sandbox/pi-config/steer-inbox.ndjson'" in calls[0]


def test_v54_session_ids_differ() -> None:
    a, b = new_session_id(), new_session_id()
    assert a and b and a != b


def test_v55_per_prompt_results_carry_run_wide_totals() -> None:
    events, _ = _parse(
        [_ok("p1"), START, _msg_end(10, 2), END, SETTLED, _ok("p2"), START, _msg_end(25, 5), END, SETTLED]
    )
    results = _results(events)
    assert len(results) == 2
    assert len([e for e in events if isinstance(e, UserReplayEvent)]) == 2
    assert (results[1].input_tokens, results[1].output_tokens) == (35, 7)


def test_v56_settled_then_eof_gives_one_result() -> None:
    results = _results(_parse([_ok("p1"), START, _msg_end(1, 1), END, SETTLED])[0])
    assert len(results) == 1 and not results[0].is_error


def test_v57_rejected_prompt_and_other_commands() -> None:
    events, _ = _parse(
        [
            {"id": "p1", "type": "response", "command": "prompt", "success": False, "error": "nope"},
            {"id": "p2", "type": "response", "command": "interrupt", "success": True},
        ]
    )
    assert events == [UserReplayEvent(at=NOW, id="p1", disposition="rejected")]


def test_v58_error_state_is_per_prompt() -> None:
    events, _ = _parse(
        [
            _ok("p1"),
            START,
            _msg_end(1, 1, "error", "FIRST PROMPT FAILED"),
            END,
            SETTLED,
            _ok("p2"),
            START,
            _msg_end(1, 1),
            END,
            SETTLED,
        ]
    )
    first, second = _results(events)
    assert first.is_error and first.error_message == "FIRST PROMPT FAILED"
    assert not second.is_error and second.error_message == "" and second.subtype == "stop"


def test_v59_prompt_without_message_is_an_error() -> None:
    results = _results(_parse([_ok("p1"), START, _msg_end(1, 1), END, SETTLED, _ok("p2"), START, END, SETTLED])[0])
    assert [r.is_error for r in results] == [False, True]


def test_v60_eof_after_agent_start_is_incomplete() -> None:
    results = _results(_parse([_ok("p1"), START, _msg_end(1, 1), END, SETTLED, _ok("p2"), START])[0])
    assert [r.is_error for r in results] == [False, True] and results[1].subtype == "incomplete"


def test_v61_default_mode_one_result_and_session_id() -> None:
    events, parser = _parse([{"type": "session", "id": "ses_x"}, START, _msg_end(3, 4), END, SETTLED], per_prompt=False)
    assert len(_results(events)) == 1 and parser.session_id == "ses_x"


def _pi_feed(calls: list[str] | None = None, code: int = 0, stderr: str = "") -> SteerFeed:
    sink = calls if calls is not None else []

    def exec_(command: str, timeout_s: float) -> tuple[str, str, int]:
        sink.append(command)
        return "", stderr, code

    return SteerFeed(exec_, "/cfg/steer-inbox.ndjson", "/cfg/steer-feeder.pid", FixedClock(NOW))


def test_v62_steer_result_only_on_its_own_ack() -> None:
    feed = _pi_feed()
    feed.seed(pi_input_line("p1", "Run the agent task"), "p1")
    feed.append_line(SteerMessage(21, "x"), pi_input_line("s1", "x", "steer"), "s1")
    assert feed.steer_results() == []
    feed.note_echo(NOW, id="p1")
    assert feed.steer_results() == []
    feed.note_echo(NOW, id="s1")
    [result] = feed.steer_results()
    assert (result.follow_up_run_id, result.mode) == (21, "live") and result.delivered_at == NOW


def test_v63_failing_append_records_nothing() -> None:
    feed = _pi_feed(code=1, stderr="disk full")
    with pytest.raises(SandboxError, match="disk full"):
        feed.append_line(SteerMessage(1, "x"), "line", "s1")
    assert feed.steer_results() == [] and lines_awaiting_echo(feed) == 0


def test_v46_pi_settled_feed_refuses_without_write() -> None:
    runtime = PiRuntime()
    calls: list[str] = []
    feed = _pi_feed(calls)
    runtime._feeds.register("sb", feed)
    feed.settle()
    with pytest.raises(SteerAfterSettle):
        runtime.steer("sb", SteerMessage(5, "late"))
    assert calls == []


def _params(
    cli: str, tmp_path: Path, env: dict[str, str], model: str = "", fallbacks: tuple[str, ...] = ()
) -> AgentParams:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return AgentParams(
        sandbox_name="sb-pi",
        agent_cli=cli,
        prompt=PROMPT,
        workdir=work,
        env=env,
        steerable=True,
        timeout_s=60,
        model=model,
        fallback_models=fallbacks,
    )


def test_v65_gate_declines_fallback_chains(tmp_path: Path) -> None:
    warnings: list[str] = []
    runtime = PiRuntime(warn=warnings.append)
    two = _params("pi", tmp_path, {}, model="a/m1", fallbacks=("b/m2",))
    assert runtime.steer_decline_reason(two) == PI_FALLBACK_DECLINE
    assert runtime.steer_gate(two) is False
    assert len(warnings) == 1 and warnings[0].startswith("Steering disabled: ")
    assert "fall back to another model" in warnings[0]
    assert two.fallback_models == ("b/m2",)
    with pytest.raises(SteerUnsupported):
        runtime.steer("sb-pi", SteerMessage(1, "x"))
    runtime.clear_decline("sb-pi")
    with pytest.raises(NoSteerSession):
        runtime.steer("sb-pi", SteerMessage(1, "x"))
    one = _params("pi", tmp_path, {}, model="a/m1")
    assert runtime.steer_gate(one) is True and runtime.steer_decline_reason(one) is None
    assert runtime.steer_gate(AgentParams(**{**two.__dict__, "steerable": False})) is False
    assert len(warnings) == 1
    with pytest.raises(NoSteerSession):
        runtime.steer("sb-pi", SteerMessage(1, "x"))


def test_v64_turn_result_is_rendered_before_the_feeder_kill(tmp_path: Path) -> None:
    """A steered attempt forwards each result live, then takes the close decision."""
    from fullsend.adapters.runtimes.liverun import ActiveRun
    from fullsend.adapters.runtimes.pi.stream import PiAggregator

    log: list[str] = []
    feed = SteerFeed(lambda c, t: (log.append(f"exec {c}"), ("", "", 0))[1], "/cfg/in", "/cfg/pid", FixedClock(NOW))
    feed.seed("line", "p1")
    log.clear()
    active = ActiveRun(sandbox=None, feed=feed, clock=FixedClock(NOW))
    agg = PiAggregator()
    active.handle(UserReplayEvent(at=NOW, id="p1"), agg, lambda at: None, log.append)
    active.handle(ResultEvent(num_turns=1, subtype="turn-1"), agg, lambda at: log.append("render turn-1"), log.append)
    assert log == ["render turn-1"]  # not settled: no kill
    feed2 = SteerFeed(lambda c, t: (log.append(f"exec {c}"), ("", "", 0))[1], "/cfg/in", "/cfg/pid", FixedClock(NOW))
    feed2.seed("line", "p1")
    log.clear()
    active2 = ActiveRun(sandbox=None, feed=feed2, clock=FixedClock(NOW))
    active2.handle(UserReplayEvent(at=NOW, id="p1"), agg, lambda at: None, log.append)
    feed2.settle()  # settled mid-turn
    active2.handle(ResultEvent(num_turns=1), agg, lambda at: log.append("render turn-1"), log.append)
    assert log == ["render turn-1", "exec kill \"$(cat '/cfg/pid')\""]


def test_scripted_pi_steer_mid_cycle_is_acked_and_run_settles(scripted_cli: str, tmp_path: Path) -> None:
    log = tmp_path / "log.ndjson"
    runtime = PiRuntime(sandbox_root_parent=tmp_path)
    params = _params(scripted_cli, tmp_path, {"SCRIPTED_AGENT_TURN_S": "1.0", "SCRIPTED_AGENT_LOG": str(log)})
    run = RunThread(runtime, params).start()
    wait_for(lambda: read_log(log) == [PROMPT], "the opening prompt was accepted")
    wait_for(lambda: _try_steer(runtime, SteerMessage(21, "cover the error path")), "steer accepted")
    run.wait_turns(1)
    runtime.settle("sb-pi")
    result = run.join()
    assert result.exit_code == 0 and not result.is_error
    assert [s.follow_up_run_id for s in result.steers] == [21]
    assert result.turns == 1 and result.input_tokens == 20  # one cycle, two model turns


def test_scripted_pi_rejected_steer_is_retired_without_result(scripted_cli: str, tmp_path: Path) -> None:
    log = tmp_path / "log.ndjson"
    runtime = PiRuntime(sandbox_root_parent=tmp_path)
    env = {"SCRIPTED_AGENT_TURN_S": "0.5", "SCRIPTED_AGENT_LOG": str(log), "SCRIPTED_AGENT_REJECT": "REFUSE-ME"}
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env)).start()
    run.wait_turns(1)
    wait_for(lambda: _try_steer(runtime, SteerMessage(8, "REFUSE-ME please")), "steer accepted")
    runtime.settle("sb-pi")
    result = run.join()
    assert result.exit_code == 0 and result.steers == []
    assert read_log(log) == [PROMPT]


def test_scripted_pi_declined_run_still_runs_unsteered(scripted_cli: str, tmp_path: Path) -> None:
    warnings: list[str] = []
    runtime = PiRuntime(sandbox_root_parent=tmp_path, warn=warnings.append)
    params = _params(scripted_cli, tmp_path, {"SCRIPTED_AGENT_TURN_S": "0.2"}, model="a/m1", fallbacks=("b/m2",))
    result = RunThread(runtime, params).start().join()
    assert result.exit_code == 0 and result.turns == 1
    assert [w for w in warnings if w.startswith("Steering disabled: ")] == [f"Steering disabled: {PI_FALLBACK_DECLINE}"]


def _try_steer(runtime: PiRuntime, msg: SteerMessage) -> bool:
    try:
        runtime.steer("sb-pi", msg)
    except NoSteerSession:
        return False
    return True


def test_pi_argv_has_no_prompt(tmp_path: Path, scripted_cli: str) -> None:
    dump = tmp_path / "argv.json"
    runtime = PiRuntime(sandbox_root_parent=tmp_path)
    params = AgentParams(
        **{
            **_params(
                scripted_cli, tmp_path, {"SCRIPTED_AGENT_TURN_S": "0.1", "SCRIPTED_AGENT_ARGV_DUMP": str(dump)}
            ).__dict__,
            "steerable": False,
        }
    )
    assert RunThread(runtime, params).start().join().exit_code == 0
    argv = json.loads(dump.read_text())
    assert argv[:2] == ["--mode", "rpc"] and argv[-2] == "--session-id"
    assert PROMPT not in " ".join(argv)


def _user(text: str) -> dict[str, Any]:
    return {"type": "message_start", "message": {"role": "user", "content": [{"type": "text", "text": text}]}}


def test_a_cycle_is_judged_after_its_last_delivered_steer() -> None:
    """Issue 43: the answer before a steer taken in mid-cycle does not make the cycle a success;
    only an assistant message after it does (and its stopReason decides)."""
    unanswered = [START, _user(PROMPT), _msg_end(1, 1), _user("the steer"), END, SETTLED]
    [result] = _results(_parse(unanswered)[0])
    assert result.verdict is not None and (result.verdict.end, result.verdict.reason, result.verdict.rule_id) == (
        AgentEnd.PROTOCOL_BROKEN,
        "no_answer",
        "turn-unjudged",
    )
    failed_after = [START, _user(PROMPT), _msg_end(1, 1), _user("the steer"), _msg_end(2, 2, "error", "boom"), END]
    [failed] = _results(_parse([*failed_after, SETTLED])[0])
    assert failed.verdict is not None and (failed.verdict.end, failed.verdict.detail) == (AgentEnd.AGENT_ERROR, "boom")
    answered = [START, _user(PROMPT), _msg_end(1, 1, "error"), _user("the steer"), _msg_end(2, 2), END, SETTLED]
    [ok] = _results(_parse(answered)[0])
    assert ok.verdict is not None and ok.verdict.succeeded


def test_scripted_pi_steer_left_unanswered_is_not_success(scripted_cli: str, tmp_path: Path) -> None:
    """The scripted pi takes the steer and settles without answering it: acknowledged, yet the
    iteration is not success, so no receipt."""
    log = tmp_path / "log.ndjson"
    env = {"SCRIPTED_AGENT_TURN_S": "1.0", "SCRIPTED_PI_SILENT_AFTER_STEER": "1", "SCRIPTED_AGENT_LOG": str(log)}
    runtime = PiRuntime(sandbox_root_parent=tmp_path)
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env)).start()
    wait_for(lambda: read_log(log) == [PROMPT], "the opening prompt was accepted")
    wait_for(lambda: _try_steer(runtime, SteerMessage(43, "update")), "steer accepted")
    run.wait_turns(1)
    runtime.settle("sb-pi")
    result = run.join()
    assert [s.follow_up_run_id for s in result.steers] == [43]
    assert (result.end, result.is_error) == (AgentEnd.PROTOCOL_BROKEN, True)
    assert "the agent settled without answering the last input it took in" in result.error
