"""The real, pinned ``codex app-server`` as the live Codex transport (issue 17), against the
scripted Responses API: every case the issue names, with its acks, its class and whether a
receipt may follow.

- a steer during a long turn goes in by ``turn/steer``, is acknowledged when Codex records the
  ``userMessage`` item carrying its ``clientUserMessageId``, and is in the next model request;
- two steers during one turn are acknowledged each;
- a steer between turns starts the next turn (``turn/start``);
- a model error mid-turn ends the turn ``failed``: an agent error, no receipt, although the
  steer was acknowledged;
- EOF: the app-server dies while its turn runs: no turn end, no receipt;
- a sub-agent (Codex's multi-agent tools) reports its own thread's turns on the same connection:
  they neither end the run's turn nor acknowledge anything.

Nothing here stops or restarts the sandbox: the steer goes into the running turn.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from fullsend.adapters.runtimes.codex.appserver.runtime import CodexAppServerRuntime
from fullsend.core.agent_end import AgentEnd
from fullsend.ports import AgentParams
from tests.adapters.runtimes.real.conformance import (
    FIRST,
    LATE,
    SECOND,
    Steering,
    agent_pid,
    assert_failed,
    assert_succeeded,
    busy_then_done,
    done,
)
from tests.adapters.runtimes.real.real_cli import (
    STEER,
    STEER_MARKER,
    RunInThread,
    offline_env,
    render,
    require_cli,
    wait_until,
)
from tests.doubles.model_server import ModelError, Reply, ToolCall, assistant_turns_done, texts_in
from tests.doubles.openai_server import INCOMPLETE, FakeOpenAI, config_toml

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
PROMPT = "Fix issue 42 and report back."


def _params(tmp_path: Path, model: FakeOpenAI, steerable: bool = True) -> AgentParams:
    work, codex_home = tmp_path / "work", tmp_path / "home" / "codex"
    work.mkdir(exist_ok=True)
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(config_toml(model.base_url))
    env = offline_env(tmp_path / "home", CODEX_HOME=str(codex_home), FAKE_OPENAI_KEY="sk-fake")
    return AgentParams(
        sandbox_name="sb-codex-live",
        agent_cli=require_cli("codex"),
        prompt=PROMPT,
        workdir=work,
        env=env,
        steerable=steerable,
        timeout_s=100,
    )


def _busy(tmp_path: Path, seconds: int = 6) -> tuple[Path, str]:
    flag = tmp_path / "work" / "tool-started.flag"
    return flag, f"touch {flag.name} && sleep {seconds}"


def _with_steer_marker(marker: str, then: Any) -> Any:
    """Answer a call that carries ``marker`` with text quoting it; otherwise as ``then``."""

    def script(body: dict[str, Any]) -> Reply:
        if body.get("tools") and any(marker in t for t in texts_in(body.get("input"))):
            return Reply(text=f"Steer received: {marker}")
        return then(body)

    return script


def _start(tmp_path: Path, model: FakeOpenAI) -> tuple[CodexAppServerRuntime, RunInThread]:
    runtime = CodexAppServerRuntime(sandbox_root_parent=tmp_path, render=render)
    return runtime, RunInThread(runtime, _params(tmp_path, model)).start()


def test_a_steer_during_a_long_turn_is_acked_and_reaches_the_next_model_request(tmp_path: Path) -> None:
    flag, work = _busy(tmp_path)
    with FakeOpenAI(_with_steer_marker(STEER_MARKER, busy_then_done(work))) as model:
        runtime, run = _start(tmp_path, model)
        wait_until(flag.exists, "the scripted tool call started (the turn is busy)", run)
        calls_before = len(model.calls)
        Steering(runtime, run).steer(STEER)
        wait_until(lambda: model.saw_text(STEER_MARKER), "the steer reached the model", run)
        result = Steering(runtime, run).finish()
    assert_succeeded(result, [STEER.follow_up_run_id])
    assert [s.mode for s in result.steers] == ["live"]
    assert len(run.turn_ends) == 1, "the steer joined the running turn: one turn end"
    envelope = render(STEER)
    carrying = [c for c in model.calls if any(envelope in t for t in texts_in(c.body.get("input")))]
    assert carrying and model.calls.index(carrying[0]) == calls_before, "the first request after the steer has it"
    assert any(f"Steer received: {STEER_MARKER}" in line for line in run.output)
    assert result.session_id and result.model == "gpt-fake"
    assert model.refused == 0


def test_two_steers_during_one_turn_are_each_acked(tmp_path: Path) -> None:
    flag, work = _busy(tmp_path)
    with FakeOpenAI(busy_then_done(work)) as model:
        runtime, run = _start(tmp_path, model)
        wait_until(flag.exists, "the scripted tool call started (the turn is busy)", run)
        steering = Steering(runtime, run)
        steering.steer(FIRST, SECOND)
        wait_until(
            lambda: model.saw_text("conf-marker-first") and model.saw_text("conf-marker-second"),
            "both steers reached the model",
            run,
        )
        result = steering.finish()
    assert_succeeded(result, [FIRST.follow_up_run_id, SECOND.follow_up_run_id])
    assert {s.mode for s in result.steers} == {"live"}
    assert len(run.turn_ends) == 1


def test_a_steer_between_turns_starts_the_next_turn(tmp_path: Path) -> None:
    with FakeOpenAI(done()) as model:
        runtime, run = _start(tmp_path, model)
        steering = Steering(runtime, run)
        steering.after_first_turn()
        steering.steer(LATE)
        wait_until(lambda: len(run.turn_ends) >= 2, "the late steer's turn ended", run)
        result = steering.finish()
        assert model.saw_text("conf-marker-late")
    assert_succeeded(result, [LATE.follow_up_run_id])
    assert result.turns == 2


def test_a_model_error_mid_turn_is_an_agent_error_and_no_receipt(tmp_path: Path) -> None:
    flag, work = _busy(tmp_path)
    error = ModelError(400, "invalid_request_error", "scripted: this request is invalid", code="invalid_request")

    def script(body: dict[str, Any]) -> Reply:
        if not body.get("tools"):
            return Reply(text="Scripted title")
        return (
            Reply(text="Working.", tool=ToolCall("bash", work))
            if assistant_turns_done(body) == 0
            else Reply(error=error)
        )

    with FakeOpenAI(script) as model:
        runtime, run = _start(tmp_path, model)
        wait_until(flag.exists, "the scripted tool call started (the turn is busy)", run)
        steering = Steering(runtime, run)
        steering.steer(STEER)
        wait_until(lambda: len(run.turn_ends) >= 1, "the failed turn ended", run)
        result = steering.finish()
    assert_failed(result, AgentEnd.AGENT_ERROR, "the codex turn failed (failed): ")
    assert "scripted: this request is invalid" in result.error
    assert [s.follow_up_run_id for s in result.steers] == [STEER.follow_up_run_id], "acked, yet no receipt"


def test_eof_while_the_turn_runs_is_interrupted(tmp_path: Path) -> None:
    flag, pids = tmp_path / "work" / "tool-started.flag", tmp_path / "work" / "tool.pid"
    with FakeOpenAI(busy_then_done(f"echo $PPID > {pids.name}; touch {flag.name}; sleep 60")) as model:
        _, run = _start(tmp_path, model)
        wait_until(flag.exists, "the scripted tool call started (the turn is busy)", run)
        os.kill(agent_pid(int(pids.read_text().split()[0]), b"codex"), signal.SIGKILL)
        result = run.join()
    assert_failed(result, AgentEnd.INTERRUPTED, "the codex app-server ended before its turn completed (incomplete)")
    assert not result.steers


def test_an_unsteered_run_settles_after_its_turn_and_exits_0(tmp_path: Path) -> None:
    with FakeOpenAI(done("All done: final-word-app-server.")) as model:
        runtime = CodexAppServerRuntime(sandbox_root_parent=tmp_path, render=render)
        result = RunInThread(runtime, _params(tmp_path, model, steerable=False)).start().join()
    assert_succeeded(result, [])
    assert result.input_tokens > 0 and result.output_tokens > 0
    assert result.final_message == "All done: final-word-app-server."  # the turn's last agentMessage


def test_a_sub_agents_turn_end_is_not_the_runs_turn_end(tmp_path: Path) -> None:
    """The model spawns a sub-agent, then works 4 s in the run's own turn; the sub-agent's turn
    completes first.  The run waits for its own turn, which finishes its work, and succeeds."""
    done_flag = tmp_path / "work" / "finished.flag"

    def script(body: dict[str, Any]) -> Reply:
        texts = list(texts_in(body.get("input")))
        if not body.get("tools"):
            return Reply(text="Scripted title")
        if any("sub-agent-marker" in t for t in texts) and not any(PROMPT in t for t in texts):
            return Reply(text="Sub-agent done.")
        calls = sum(1 for i in body.get("input") or [] if isinstance(i, dict) and i.get("type") == "function_call")
        if calls == 0:
            return Reply(text="Spawning.", tool=ToolCall("spawn_agent", "Check the docs (sub-agent-marker)."))
        if calls == 1:
            return Reply(text="Busy.", tool=ToolCall("bash", f"sleep 4 && touch {done_flag.name}"))
        return Reply(text="All done.")

    with FakeOpenAI(script) as model:
        runtime = CodexAppServerRuntime(sandbox_root_parent=tmp_path, render=render)
        run = RunInThread(runtime, _params(tmp_path, model)).start()
        Steering(runtime, run).after_first_turn("the run's own turn ended")
        result = Steering(runtime, run).finish()
    assert_succeeded(result, [])
    assert done_flag.exists(), "the run's turn was cut off"
    assert len(run.turn_ends) == 1


@pytest.mark.parametrize("reason", ["max_output_tokens", "content_filter", "a-reason-no-api-has-yet"])
def test_an_incomplete_response_for_any_reason_is_never_success_over_the_app_server(
    tmp_path: Path, reason: str
) -> None:
    """docs/runtimes.md: the Responses API's ``incomplete`` end fails the app-server turn too, for
    each documented reason and an unknown one: an agent error, never a receipt."""

    def script(body: dict[str, Any]) -> Reply:
        if not body.get("tools"):
            return Reply(text="Scripted title")
        return Reply(text="A partial answer", stop=f"{INCOMPLETE}{reason}")

    with FakeOpenAI(script) as model:
        runtime = CodexAppServerRuntime(sandbox_root_parent=tmp_path, render=render)
        result = RunInThread(runtime, _params(tmp_path, model, steerable=False)).start().join()
    assert_failed(result, AgentEnd.AGENT_ERROR, "the codex turn failed (failed): ")
    assert f"reason: {reason}" in result.error
