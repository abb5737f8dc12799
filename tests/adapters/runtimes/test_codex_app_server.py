"""Codex's live transport (issue 17): the transport choice, the app-server session and parser, and
a steered run on the local sandbox against the scripted app-server.

The real ``codex app-server`` is the oracle for these shapes: ``real/test_conformance_codex_app_server.py``
drives it through the same cases; this file pins the parser's decisions row by row.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from fullsend.adapters.runtimes.codex.appserver.rpc import THREAD_ID, handshake_lines
from fullsend.adapters.runtimes.codex.appserver.runtime import CodexAppServerRuntime
from fullsend.adapters.runtimes.codex.appserver.stream import (
    CODEX_APP_SERVER_TERMINAL_STATES,
    AppServerAggregator,
    AppServerParser,
)
from fullsend.adapters.runtimes.codex.runtime import CodexRuntime
from fullsend.adapters.runtimes.codex.transport import APP_SERVER, EXEC, choose_transport, foreign_options
from fullsend.adapters.runtimes.events import (
    QUEUED,
    REJECTED,
    InitEvent,
    ResultEvent,
    SendEvent,
    TextEvent,
    TokensEvent,
    TurnOpenEvent,
    UserReplayEvent,
)
from fullsend.core.agent_end import AgentEnd
from fullsend.core.watch.settle import DEFAULT_MIN_REMAINING, min_remaining_for
from fullsend.core.watch.steer import SteerMessage
from fullsend.errors import ConfigError, NoSteerSession
from fullsend.ports import AgentParams
from fullsend.wording import render_steer
from tests.support.transport_run import RunThread, read_log, wait_for

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
PROMPT = "Implement issue 12"


class _Clock:
    def now(self) -> datetime:
        return NOW


def _parser_with_thread(opening_key: str = "k-open") -> tuple[AppServerParser, list[Any]]:
    parser = AppServerParser(_Clock())
    parser.session.set_opening(opening_key, PROMPT)
    events = parser.parse({"id": THREAD_ID, "result": {"thread": {"id": "th-1"}, "model": "gpt-x"}})
    return parser, events


def _sent(event: Any) -> dict[str, Any]:
    assert isinstance(event, SendEvent)
    message: dict[str, Any] = json.loads(event.line)
    return message


# -- the transport choice ------------------------------------------------------------------------
def test_auto_takes_the_app_server_on_a_supported_codex() -> None:
    choice = choose_transport("auto", (0, 171, 0), ("-c", 'profile="ci"', "--enable", "web_search"))
    assert (choice.transport, choice.live) == (APP_SERVER, True)
    assert choice.log_line() == (
        "Codex transport: app-server (turn/steer into the running turn): Codex 0.171.0 "
        "has an app-server the action supports [codex-transport]"
    )


def test_auto_falls_back_to_exec_on_an_older_codex_and_says_why() -> None:
    choice = choose_transport("auto", (0, 152, 1))
    assert choice.transport == EXEC and not choice.live
    assert "Codex 0.152.1 is outside the app-server range >= 0.171.0 and < 0.172.0" in choice.log_line()


def test_auto_falls_back_to_exec_when_agent_args_hold_an_exec_only_flag() -> None:
    choice = choose_transport("auto", (0, 171, 0), ("--profile", "ci"))
    assert choice.transport == EXEC
    assert "agent_args names --profile, ci, which codex app-server does not take" in choice.why


def test_exec_is_taken_when_asked_for() -> None:
    assert choose_transport("exec", (0, 171, 0)).transport == EXEC


def test_app_server_asked_for_on_a_codex_that_cannot_is_a_config_error() -> None:
    with pytest.raises(
        ConfigError,
        match=r"codex_transport is app-server, but Codex 0\.160\.0 is outside .*"
        r"\[codex-transport\]",
    ):
        choose_transport("app-server", (0, 160, 0))


def test_foreign_options_skip_the_values_of_the_options_app_server_takes() -> None:
    assert foreign_options(["-c", "model=x", "--config=a=b", "--strict-config", "--full-auto"]) == ["--full-auto"]


def test_the_live_transport_adds_no_interrupt_cost_to_the_settle_margin() -> None:
    assert min_remaining_for("codex", interrupts=False) == DEFAULT_MIN_REMAINING
    assert min_remaining_for("codex", interrupts=True) > DEFAULT_MIN_REMAINING


def test_codex_runtime_routes_to_the_chosen_transport() -> None:
    runtime = CodexRuntime()
    assert runtime.interrupts_to_steer  # exec until a choice is made
    runtime.select_transport("auto", (0, 171, 0))
    assert not runtime.interrupts_to_steer and runtime._active is runtime.live_runtime
    runtime.select_transport("exec", (0, 171, 0))
    assert runtime.interrupts_to_steer and runtime._active is runtime.exec_runtime


# -- the session and the parser ------------------------------------------------------------------
def test_the_handshake_asks_for_no_approvals_and_names_the_model() -> None:
    init, initialized, thread = (json.loads(line) for line in handshake_lines("gpt-x", "0.1.0"))
    assert (init["method"], init["params"]["clientInfo"]["name"]) == ("initialize", "steer-action")
    assert initialized == {"method": "initialized"} and "jsonrpc" not in init
    assert thread["params"] == {"approvalPolicy": "never", "sandbox": "danger-full-access", "model": "gpt-x"}


def test_the_opening_prompt_is_sent_once_the_thread_exists() -> None:
    _, events = _parser_with_thread()
    assert events[0] == InitEvent(model="gpt-x", session_id="th-1")
    start = _sent(events[1])
    assert start["method"] == "turn/start"
    assert start["params"] == {
        "threadId": "th-1",
        "input": [{"type": "text", "text": PROMPT}],
        "clientUserMessageId": "k-open",
    }


def _started(parser: AppServerParser, turn_id: str = "turn-A") -> list[Any]:
    return parser.parse({"method": "turn/started", "params": {"threadId": "th-1", "turn": {"id": turn_id}}})


def _completed(parser: AppServerParser, turn_id: str = "turn-A", status: str = "completed") -> list[Any]:
    return parser.parse(
        {"method": "turn/completed", "params": {"threadId": "th-1", "turn": {"id": turn_id, "status": status}}}
    )


def test_a_steer_before_the_opening_turn_started_is_retried_later() -> None:
    with pytest.raises(NoSteerSession):
        AppServerParser(_Clock()).session.steer_line("k1", "update")
    parser, _ = _parser_with_thread()
    with pytest.raises(NoSteerSession):  # the thread exists, its first turn does not yet
        parser.session.steer_line("k1", "update")


def test_a_steer_during_a_turn_is_turn_steer_naming_it_and_between_turns_turn_start() -> None:
    parser, _ = _parser_with_thread()
    assert _started(parser) == [TurnOpenEvent()]
    busy = json.loads(parser.session.steer_line("k2", "update two"))
    assert busy["method"] == "turn/steer"
    assert busy["params"] == {
        "threadId": "th-1",
        "input": [{"type": "text", "text": "update two"}],
        "clientUserMessageId": "k2",
        "expectedTurnId": "turn-A",
    }
    _completed(parser)
    idle = json.loads(parser.session.steer_line("k1", "update one"))
    assert idle["method"] == "turn/start" and "expectedTurnId" not in idle["params"]


def test_the_ack_is_the_user_message_item_with_the_steers_client_id() -> None:
    parser, _ = _parser_with_thread()
    item = {
        "type": "userMessage",
        "id": "item-9",
        "clientId": "k2",
        "content": [{"type": "text", "text": "update two", "text_elements": []}],
    }
    events = parser.parse({"method": "item/started", "params": {"item": item, "threadId": "th-1", "turnId": "turn-A"}})
    assert events == [UserReplayEvent(NOW, id="k2", content="update two", parts=("update two",))]


def test_a_user_message_without_client_id_acknowledges_nothing() -> None:
    parser, _ = _parser_with_thread()
    item = {"type": "userMessage", "id": "item-9", "clientId": None, "content": [{"type": "text", "text": "x"}]}
    assert parser.parse({"method": "item/started", "params": {"item": item, "threadId": "th-1"}}) == []


def test_another_threads_notifications_are_not_the_runs() -> None:
    """A sub-agent's thread reports on the same connection: its turn ends, items and tokens are not the run's."""
    parser, _ = _parser_with_thread()
    _started(parser)
    sub = {"threadId": "sub-thread"}
    assert parser.parse({"method": "turn/started", "params": {**sub, "turn": {"id": "S1"}}}) == []
    assert (
        parser.parse({"method": "turn/completed", "params": {**sub, "turn": {"id": "S1", "status": "completed"}}}) == []
    )
    item = {"type": "userMessage", "id": "i", "clientId": "k2", "content": []}
    assert parser.parse({"method": "item/started", "params": {**sub, "item": item}}) == []
    assert parser.parse({"method": "thread/tokenUsage/updated", "params": {**sub, "tokenUsage": {"total": {}}}}) == []
    assert parser.session.turn_id == "turn-A"
    assert json.loads(parser.session.steer_line("k3", "u"))["params"]["expectedTurnId"] == "turn-A"


def test_an_accepted_turn_steer_is_queued_not_delivered() -> None:
    parser, _ = _parser_with_thread()
    _started(parser)
    request = json.loads(parser.session.steer_line("k2", "update"))
    events = parser.parse({"id": request["id"], "result": {"turnId": "turn-A"}})
    assert events == [UserReplayEvent(NOW, id="k2", disposition=QUEUED)]


def test_a_refused_turn_steer_is_sent_again_as_turn_start_once_then_rejected() -> None:
    parser, _ = _parser_with_thread()
    _started(parser)
    request = json.loads(parser.session.steer_line("k2", "update"))
    refusal = {"code": -32600, "message": "no active turn to steer"}
    retry = _sent(parser.parse({"id": request["id"], "error": refusal})[0])
    assert retry["method"] == "turn/start" and retry["params"]["clientUserMessageId"] == "k2"
    events = parser.parse({"id": retry["id"], "error": {"code": -32600, "message": "thread closed"}})
    assert events[0] == UserReplayEvent(NOW, id="k2", disposition=REJECTED)
    assert isinstance(events[1], TextEvent) and "thread closed" in events[1].text


def test_a_written_steer_the_turn_never_recorded_is_sent_again_when_it_ends() -> None:
    parser, _ = _parser_with_thread()
    _started(parser)
    parser.session.steer_line("k2", "update")
    parser.session.written("k2")  # written; its answer has not come yet
    parser.session.steer_line("k3", "never written")  # chosen, the write failed: never sent again
    events = _completed(parser)
    assert isinstance(events[0], ResultEvent)
    resent = [_sent(e) for e in events[1:]]
    assert [(m["method"], m["params"]["clientUserMessageId"]) for m in resent] == [("turn/start", "k2")]


def test_a_refusal_arriving_after_the_resend_waits_for_the_resends_own_answer() -> None:
    parser, _ = _parser_with_thread()
    _started(parser)
    request = json.loads(parser.session.steer_line("k2", "update"))
    parser.session.written("k2")
    _completed(parser)  # re-sent as turn/start here
    late = parser.parse({"id": request["id"], "error": {"code": -32600, "message": "no active turn to steer"}})
    assert late == []  # neither a second resend nor a rejection: the resend decides


def test_a_turn_start_that_joined_a_turn_which_then_ended_without_it_is_sent_again() -> None:
    parser, _ = _parser_with_thread()
    _started(parser)
    _completed(parser)
    request = json.loads(parser.session.steer_line("k4", "update"))  # idle: turn/start
    assert request["method"] == "turn/start"
    parser.session.written("k4")
    _started(parser, "turn-B")  # a turn began before Codex read it, and the start joined it
    parser.parse({"id": request["id"], "result": {"turn": {"id": "turn-B", "status": "inProgress"}}})
    resent = [_sent(e) for e in _completed(parser, "turn-B")[1:]]
    assert [m["params"]["clientUserMessageId"] for m in resent] == ["k4"]


def test_a_refused_opening_turn_start_ends_the_wait_as_an_agent_error() -> None:
    parser, events = _parser_with_thread()
    opening = _sent(events[1])
    out = parser.parse({"id": opening["id"], "error": {"code": -32600, "message": "model not allowed"}})
    assert out[0] == UserReplayEvent(NOW, id="k-open", disposition=REJECTED)
    assert isinstance(out[-1], ResultEvent) and out[-1].verdict is not None
    assert (out[-1].verdict.end, out[-1].verdict.detail) == (AgentEnd.AGENT_ERROR, "model not allowed")


@pytest.mark.parametrize("row", CODEX_APP_SERVER_TERMINAL_STATES[:6], ids=lambda r: r.reason)
def test_each_turn_completed_shape_is_classified_by_its_row(row: Any) -> None:
    parser, _ = _parser_with_thread()
    status = "failed" if row.reason.endswith("Exceeded") else row.reason
    turn: dict[str, Any] = {"id": "turn-A", "status": status}
    if status == "failed":
        turn["error"] = {
            "message": "scripted failure",
            "codexErrorInfo": row.reason
            if row.reason != "failed"
            else {"httpConnectionFailed": {"httpStatusCode": 502}},
        }
    result = parser.parse({"method": "turn/completed", "params": {"threadId": "th-1", "turn": turn}})[0]
    assert isinstance(result, ResultEvent) and result.verdict is not None
    assert (result.verdict.end, result.verdict.reason, result.verdict.says) == (row.end, row.reason, row.says)
    assert result.is_error is (row.end is not AgentEnd.SUCCESS)
    if status == "failed":
        assert result.error_message == "scripted failure"


@pytest.mark.parametrize(
    "errors",
    [
        [{}],
        [{"error": {}}],
        [{"error": {"message": 7}}],
        [{"error": "boom"}],
        [{"error": {"message": "boom"}}, {"error": {}}],
    ],
    ids=["no-error-object", "no-message", "non-string-message", "string-error", "blank-after-a-real-one"],
)
def test_a_final_error_without_usable_text_still_keeps_the_turn_from_success(errors: list[dict[str, Any]]) -> None:
    parser, _ = _parser_with_thread()
    for params in errors:
        assert parser.parse({"method": "error", "params": {"threadId": "th-1", **params}}) == []
    result = _completed(parser, "t", "completed")[0]
    assert isinstance(result, ResultEvent) and result.verdict is not None
    assert (result.verdict.end, result.verdict.reason) == (AgentEnd.AGENT_ERROR, "completed after error")
    expected = "boom" if len(errors) == 2 else "an error notification without a message"
    assert result.verdict.detail == expected


@pytest.mark.parametrize(
    ("error", "detail"),
    [
        ({"message": "the model stream ended early", "codexErrorInfo": None}, "the model stream ended early"),
        ({}, "a turn error without a message"),
        ("boom", "a turn error without a message"),
    ],
    ids=["with-message", "empty-object", "not-an-object"],
)
def test_a_completed_turn_that_carries_an_error_is_not_success(error: object, detail: str) -> None:
    """Issue 43: ``turn.error`` is read on a completed turn too; only null or absent is success."""
    parser, _ = _parser_with_thread()
    turn = {"id": "t", "status": "completed", "error": error}
    result = parser.parse({"method": "turn/completed", "params": {"threadId": "th-1", "turn": turn}})[0]
    assert isinstance(result, ResultEvent) and result.verdict is not None
    assert (result.verdict.end, result.verdict.reason) == (AgentEnd.AGENT_ERROR, "completed with turn.error")
    assert result.verdict.detail == detail and result.is_error
    clean = parser.parse(
        {
            "method": "turn/completed",
            "params": {"threadId": "th-1", "turn": {"id": "u", "status": "completed", "error": None}},
        }
    )[0]
    assert isinstance(clean, ResultEvent) and clean.verdict is not None and clean.verdict.succeeded


def test_an_unknown_turn_status_is_protocol_broken() -> None:
    parser, _ = _parser_with_thread()
    result = _completed(parser, "t", "paused")[0]
    assert isinstance(result, ResultEvent) and result.verdict is not None
    assert (result.verdict.end, result.verdict.reason) == (AgentEnd.PROTOCOL_BROKEN, "turn status paused")


def test_a_failed_thread_start_retires_the_opening_and_is_an_agent_error() -> None:
    parser = AppServerParser(_Clock())
    parser.session.set_opening("k-open", PROMPT)
    events = parser.parse({"id": THREAD_ID, "error": {"code": -32603, "message": "no model provider"}})
    assert events[0] == UserReplayEvent(NOW, id="k-open", disposition=REJECTED)
    assert isinstance(events[1], ResultEvent) and events[1].verdict is not None
    assert (events[1].verdict.end, events[1].verdict.detail) == (AgentEnd.AGENT_ERROR, "no model provider")


def test_a_request_from_the_server_is_answered_with_an_error() -> None:
    events = AppServerParser(_Clock()).parse({"id": 7, "method": "item/commandExecution/requestApproval", "params": {}})
    assert _sent(events[0]) == {"id": 7, "error": {"code": -32601, "message": "steer-action answers no requests"}}


def test_token_totals_and_turns_are_aggregated() -> None:
    parser, _ = _parser_with_thread()
    total = {
        "inputTokens": 500,
        "cachedInputTokens": 100,
        "cacheWriteInputTokens": 0,
        "outputTokens": 30,
        "reasoningOutputTokens": 5,
    }
    tokens = parser.parse(
        {"method": "thread/tokenUsage/updated", "params": {"threadId": "th-1", "tokenUsage": {"total": total}}}
    )
    assert tokens == [TokensEvent(input=400, output=25, reasoning=5, cache_read=100, cache_write=0)]
    agg = AppServerAggregator()
    agg.add_tokens(tokens[0])
    agg.add_result(ResultEvent(num_turns=1))
    agg.add_result(ResultEvent(num_turns=1))
    assert (agg.turns, agg.input_tokens, agg.output_tokens, agg.cost_usd) == (2, 400, 25, 0.0)


# -- a run on the local sandbox against the scripted app-server ------------------------------------
def _params(cli: str, tmp_path: Path, env: dict[str, str], steerable: bool = True) -> AgentParams:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return AgentParams(
        sandbox_name="sb-codex-live",
        agent_cli=cli,
        prompt=PROMPT,
        workdir=work,
        env=env,
        steerable=steerable,
        timeout_s=60,
    )


def _thread_known(runtime: CodexAppServerRuntime) -> bool:
    active = runtime._runs.lookup("sb-codex-live")
    return active is not None and bool(active.parser.session.turn_id)


def test_a_steer_mid_turn_joins_the_turn_and_is_acked_live(scripted_cli: str, tmp_path: Path) -> None:
    log = tmp_path / "log.ndjson"
    runtime = CodexAppServerRuntime(sandbox_root_parent=tmp_path)
    run = RunThread(
        runtime, _params(scripted_cli, tmp_path, {"SCRIPTED_AGENT_TURN_S": "1.5", "SCRIPTED_AGENT_LOG": str(log)})
    )
    run.on_turn = lambda at: runtime.settle("sb-codex-live")
    run.start()
    wait_for(lambda: _thread_known(runtime), "the scripted app-server started its turn")
    runtime.steer("sb-codex-live", SteerMessage(77, "head moved"))
    result = run.join()
    assert result.exit_code == 0 and not result.is_error, result.error
    assert [(s.follow_up_run_id, s.mode) for s in result.steers] == [(77, "live")]
    assert read_log(log) == [PROMPT, render_steer(SteerMessage(77, "head moved"))]
    assert len(run.turn_ends) == 1 and result.turns == 1
    assert result.model == "scripted-model" and result.session_id


def test_a_steer_between_turns_starts_the_next_turn(scripted_cli: str, tmp_path: Path) -> None:
    log = tmp_path / "log.ndjson"
    runtime = CodexAppServerRuntime(sandbox_root_parent=tmp_path)
    run = RunThread(
        runtime, _params(scripted_cli, tmp_path, {"SCRIPTED_AGENT_TURN_S": "0.3", "SCRIPTED_AGENT_LOG": str(log)})
    )
    run.on_turn = lambda at: runtime.settle("sb-codex-live") if len(run.turn_ends) >= 2 else None
    run.start()
    wait_for(lambda: len(run.turn_ends) >= 1, "the first turn ended")
    runtime.steer("sb-codex-live", SteerMessage(78, "late update"))
    result = run.join()
    assert [(s.follow_up_run_id, s.mode) for s in result.steers] == [(78, "live")]
    assert result.turns == 2 and read_log(log)[-1].endswith("late update")


def test_an_unsteered_run_ends_after_its_turn(scripted_cli: str, tmp_path: Path) -> None:
    runtime = CodexAppServerRuntime(sandbox_root_parent=tmp_path)
    run = RunThread(runtime, _params(scripted_cli, tmp_path, {"SCRIPTED_AGENT_TURN_S": "0.2"}, steerable=False))
    result = run.start().join()
    assert (result.exit_code, result.is_error, result.turns, result.steers) == (0, False, 1, [])
    assert (result.input_tokens, result.output_tokens) == (70, 10)  # 100 + 10 of the prompt, less 40 cached


def test_a_failed_turn_fails_the_run(scripted_cli: str, tmp_path: Path) -> None:
    patch = {"status": "failed", "error": {"message": "quota gone", "codexErrorInfo": "usageLimitExceeded"}}
    runtime = CodexAppServerRuntime(sandbox_root_parent=tmp_path)
    env = {"SCRIPTED_AGENT_TURN_S": "0.2", "SCRIPTED_AGENT_RESULT": json.dumps(patch)}
    result = RunThread(runtime, _params(scripted_cli, tmp_path, env, steerable=False)).start().join()
    assert (result.end, result.is_error) == (AgentEnd.LIMIT_REACHED, True)
    assert result.error == "codex reached its usage limit (usageLimitExceeded): quota gone"


def test_the_openshell_launch_pipes_the_feeder_into_the_pinned_app_server_and_carries_no_prompt() -> None:
    from fullsend.adapters.runtimes.codex.appserver.runtime import AppServerDialect

    params = AgentParams(
        sandbox_name="sb",
        agent_cli="codex",
        prompt="SECRET-PROMPT",
        workdir=Path("/w"),
        env={},
        steerable=True,
        timeout_s=60,
        extra_args=("-c", 'profile="ci"'),
    )
    script = AppServerDialect().script(params)
    assert "SECRET-PROMPT" not in script
    assert "tail -n +1 -f '/sandbox/codex-config/steer-inbox.ndjson'" in script
    assert script.endswith('| "$FULLSEND_CODEX_BIN" app-server -c \'profile="ci"\' --disable goals')
    assert script.index("readonly FULLSEND_CODEX_BIN=") < script.index(". /sandbox/workspace/.env")


def test_the_app_server_argv_turns_goals_off_after_the_users_arguments() -> None:
    from fullsend.adapters.runtimes.codex.appserver.runtime import app_server_argv

    params = AgentParams(
        sandbox_name="sb",
        agent_cli="codex",
        prompt="",
        workdir=Path("/w"),
        env={},
        steerable=True,
        timeout_s=60,
        extra_args=("--enable", "goals"),
    )
    assert app_server_argv(params) == ["codex", "app-server", "--enable", "goals", "--disable", "goals"]


def test_a_sub_agent_thread_does_not_end_the_runs_turn(scripted_cli: str, tmp_path: Path) -> None:
    """Scripted: a sub-agent's whole turn is reported at the start of the run's turn; the run's turn
    still ends once, the steer is acknowledged, and the run succeeds."""
    runtime = CodexAppServerRuntime(sandbox_root_parent=tmp_path)
    env = {"SCRIPTED_AGENT_TURN_S": "1.0", "SCRIPTED_APP_SERVER_SUBAGENT": "1"}
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env))
    run.on_turn = lambda at: runtime.settle("sb-codex-live")
    run.start()
    wait_for(lambda: _thread_known(runtime), "the scripted app-server started its turn")
    runtime.steer("sb-codex-live", SteerMessage(79, "an update"))
    result = run.join()
    assert (result.end, result.turns, len(run.turn_ends)) == (AgentEnd.SUCCESS, 1, 1), result.error
    assert [s.follow_up_run_id for s in result.steers] == [79]


def test_a_prompt_too_long_to_write_fails_the_launch_at_once(scripted_cli: str, tmp_path: Path) -> None:
    """The opening turn/start cannot be written (one argument over the kernel's 128 KiB): the run
    fails as one that could not start, instead of waiting for a turn that never comes."""
    runtime = CodexAppServerRuntime(sandbox_root_parent=tmp_path)
    params = _params(scripted_cli, tmp_path, {"SCRIPTED_AGENT_TURN_S": "0.2"}, steerable=False)
    from dataclasses import replace

    result = RunThread(runtime, replace(params, prompt="x" * 200_000, timeout_s=30)).start().join()
    assert (result.exit_code, result.is_error, result.end) == (-1, True, AgentEnd.AGENT_ERROR)
    assert "writing to the agent's input" in result.error and not result.timed_out


def test_protocol_lines_and_steers_never_write_the_mailbox_at_once() -> None:
    """``SteerFeed.send`` (the stdout reader) and ``append_line`` (the watcher) take the same mutex."""
    import threading
    import time

    from fullsend.adapters.runtimes.feed import SteerFeed

    inside, overlaps = [0], []

    def exec_fn(command: str, timeout_s: float) -> tuple[str, str, int]:
        inside[0] += 1
        overlaps.append(inside[0])
        time.sleep(0.01)
        inside[0] -= 1
        return "", "", 0

    feed = SteerFeed(exec_fn, "/m", "/p", _Clock())
    senders = [threading.Thread(target=feed.send, args=(f"line {i}",)) for i in range(10)]
    steerers = [threading.Thread(target=feed.append_line, args=(SteerMessage(i, "x"), "l", f"k{i}")) for i in range(10)]
    for t in senders + steerers:
        t.start()
    for t in senders + steerers:
        t.join()
    assert len(overlaps) == 20 and max(overlaps) == 1


def test_the_login_gets_the_key_on_stdin_never_on_argv(scripted_cli: str, tmp_path: Path) -> None:
    """``codex login --with-api-key`` runs before the app-server, with CODEX_API_KEY before OPENAI_API_KEY."""
    dump = tmp_path / "login.jsonl"
    runtime = CodexAppServerRuntime(sandbox_root_parent=tmp_path)
    env = {
        "SCRIPTED_AGENT_TURN_S": "0.2",
        "SCRIPTED_AGENT_LOGIN_DUMP": str(dump),
        "OPENAI_API_KEY": "sk-openai-test",
        "CODEX_API_KEY": "sk-codex-test",
    }
    result = RunThread(runtime, _params(scripted_cli, tmp_path, env, steerable=False)).start().join()
    assert (result.exit_code, result.is_error) == (0, False), result.error
    assert [json.loads(line) for line in dump.read_text().splitlines()] == [
        {"argv": ["login", "--with-api-key"], "key": "sk-codex-test"}
    ]


def test_no_key_in_the_environment_no_login(scripted_cli: str, tmp_path: Path) -> None:
    dump = tmp_path / "login.jsonl"
    runtime = CodexAppServerRuntime(sandbox_root_parent=tmp_path)
    env = {"SCRIPTED_AGENT_TURN_S": "0.2", "SCRIPTED_AGENT_LOGIN_DUMP": str(dump)}
    result = RunThread(runtime, _params(scripted_cli, tmp_path, env, steerable=False)).start().join()
    assert result.exit_code == 0 and not dump.exists()


def test_a_failing_login_fails_the_launch(tmp_path: Path) -> None:
    cli = tmp_path / "codex"
    cli.write_text("#!/bin/sh\n[ \"$1\" = login ] && { echo 'bad key' >&2; exit 1; }\nexit 0\n")
    cli.chmod(0o755)
    runtime = CodexAppServerRuntime(sandbox_root_parent=tmp_path)
    result = RunThread(runtime, _params(str(cli), tmp_path, {"OPENAI_API_KEY": "sk-x"}, steerable=False)).start().join()
    assert (result.exit_code, result.end) == (-1, AgentEnd.AGENT_ERROR)
    assert "codex login --with-api-key failed with exit code 1: bad key" in result.error


def test_an_answered_steer_counts_as_written_even_before_the_writer_says_so() -> None:
    """The server's answer can come before ``steer_written`` returns: the answer itself proves the write."""
    parser, _ = _parser_with_thread()
    _started(parser)
    request = json.loads(parser.session.steer_line("k5", "update"))
    parser.parse({"id": request["id"], "result": {"turnId": "turn-A"}})  # answered; written() not called yet
    resent = [_sent(e) for e in _completed(parser)[1:]]
    assert [m["params"]["clientUserMessageId"] for m in resent] == ["k5"]
