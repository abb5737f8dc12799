"""Conformance of the real, pinned pi CLI in rpc mode (issue 16): each terminal state it can reach
against the scripted Anthropic-compatible server, classified as docs/runtimes.md says, with its
acks (pi 1.x dispositions), its error text and no receipt unless the end is outright success.

Reached for real here: success at EOF, the output limit (the model stops with ``max_tokens``:
``stopReason: "length"``), a non-retryable model error and a retryable one with pi's retries
off (``retry.enabled: false`` in its settings; both ``stopReason: "error"``), two steers queued
during one turn (each answered ``queued`` and acknowledged when pi delivers it), and a steer
after the last turn (``started``: it starts a new cycle).  pi has no turn limit to reach;
``stopReason: "aborted"`` and ``agent_settled`` with ``aborted: true`` need an ``abort`` the
action never sends: their shapes, from pi's own types and rpc docs, are unit-tested in
``test_terminal_states.py``.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from fullsend.adapters.runtimes.pi.runtime import PiRuntime
from fullsend.core.agent_end import AgentEnd
from fullsend.ports import AgentParams, AgentRunResult
from tests.adapters.runtimes.real.conformance import (
    BAD_REQUEST,
    FIRST,
    LATE,
    SECOND,
    Steering,
    agent_pid,
    assert_failed,
    assert_succeeded,
    busy_then_done,
    done,
    fails,
    receipt_allowed,
    stops_at,
)
from tests.adapters.runtimes.real.real_cli import RunInThread, offline_env, render, require_cli, wait_until
from tests.doubles.anthropic_server import FakeAnthropic
from tests.doubles.model_server import ModelError, Reply, ToolCall, assistant_turns_done

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
PROMPT = "Triage issue 9 and report back."
PROVIDER, MODEL = "fakeanthropic", "claude-fake-1"


def _params(
    tmp_path: Path, model: FakeAnthropic, steerable: bool, settings: dict[str, Any] | None = None
) -> AgentParams:
    work, agent_dir = tmp_path / "work", tmp_path / "home" / ".pi" / "agent"
    work.mkdir(exist_ok=True)
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    PROVIDER: {
                        "baseUrl": model.base_url,
                        "api": "anthropic-messages",
                        "apiKey": "FAKE_ANTHROPIC_KEY",
                        "models": [{"id": MODEL}],
                    }
                }
            }
        )
    )
    if settings is not None:
        (agent_dir / "settings.json").write_text(json.dumps(settings))
    env = offline_env(tmp_path / "home", FAKE_ANTHROPIC_KEY="sk-ant-fake", PI_OFFLINE="1")
    return AgentParams(
        sandbox_name="sb-conf-pi",
        agent_cli=require_cli("pi"),
        prompt=PROMPT,
        workdir=work,
        env=env,
        steerable=steerable,
        timeout_s=90,
        model=MODEL,
        extra_args=("--provider", PROVIDER),
    )


def _unsteered(tmp_path: Path, script: Any, settings: dict[str, Any] | None = None) -> AgentRunResult:
    with FakeAnthropic(script) as model:
        runtime = PiRuntime(sandbox_root_parent=tmp_path, render=render)
        return RunInThread(runtime, _params(tmp_path, model, False, settings)).start().join()


def test_success_then_eof(tmp_path: Path) -> None:
    result = _unsteered(tmp_path, done("All done: final-word-pi."))
    assert_succeeded(result, [])
    assert result.turns == 1
    assert result.final_message == "All done: final-word-pi."  # the cycle's last assistant message


def test_output_limit_is_limit_reached(tmp_path: Path) -> None:
    result = _unsteered(tmp_path, stops_at("max_tokens"))
    assert_failed(result, AgentEnd.LIMIT_REACHED, "the model stopped at its output limit (length)")


def test_non_retryable_model_error_is_agent_error(tmp_path: Path) -> None:
    result = _unsteered(tmp_path, fails())
    assert_failed(result, AgentEnd.AGENT_ERROR, "the model request failed (error)")
    assert "scripted: this request is invalid" in result.error


def test_retryable_model_error_with_retries_off_is_agent_error(tmp_path: Path) -> None:
    result = _unsteered(
        tmp_path,
        fails(ModelError(529, "overloaded_error", "scripted: overloaded")),
        settings={"retry": {"enabled": False}},
    )
    assert_failed(result, AgentEnd.AGENT_ERROR, "the model request failed (error)")


def test_two_steers_queued_during_one_turn_are_both_acked(tmp_path: Path) -> None:
    work = tmp_path / "work"
    started = work / "tool-started.flag"
    with FakeAnthropic(busy_then_done(f"touch {started.name} && sleep 4")) as model:
        runtime = PiRuntime(sandbox_root_parent=tmp_path, render=render)
        run = RunInThread(runtime, _params(tmp_path, model, True)).start()
        wait_until(started.exists, "the scripted tool call started (the turn is busy)", run)
        steering = Steering(runtime, run)
        steering.steer(FIRST, SECOND)
        wait_until(
            lambda: model.saw_text("conf-marker-second") and model.saw_text("conf-marker-first"),
            "both steers reached the model",
            run,
        )
        result = steering.finish()
    assert_succeeded(result, [FIRST.follow_up_run_id, SECOND.follow_up_run_id])
    assert result.turns == 1  # both delivered inside the running cycle


def test_steer_after_the_last_turn_starts_a_cycle_and_is_acked(tmp_path: Path) -> None:
    with FakeAnthropic(done()) as model:
        runtime = PiRuntime(sandbox_root_parent=tmp_path, render=render)
        run = RunInThread(runtime, _params(tmp_path, model, True)).start()
        steering = Steering(runtime, run)
        steering.after_first_turn()
        steering.steer(LATE)
        wait_until(lambda: model.saw_text("conf-marker-late"), "the late steer reached the model", run)
        result = steering.finish()
    assert_succeeded(result, [LATE.follow_up_run_id])
    assert result.turns == 2


def test_a_model_error_after_a_mid_turn_steer_is_an_agent_error_and_no_receipt(tmp_path: Path) -> None:
    work = tmp_path / "work"
    started = work / "tool-started.flag"

    def script(body: dict[str, Any]) -> Reply:
        if not body.get("tools"):
            return Reply(text="Scripted title")
        if assistant_turns_done(body) == 0:
            return Reply(text="Working.", tool=ToolCall("bash", f"touch {started.name} && sleep 3"))
        return Reply(error=BAD_REQUEST)

    with FakeAnthropic(script) as model:
        runtime = PiRuntime(sandbox_root_parent=tmp_path, render=render)
        run = RunInThread(runtime, _params(tmp_path, model, True)).start()
        wait_until(started.exists, "the scripted tool call started (the turn is busy)", run)
        steering = Steering(runtime, run)
        steering.steer(FIRST)
        wait_until(lambda: len(run.turn_ends) >= 1, "the failed cycle settled", run)
        result = steering.finish()
    assert_failed(result, AgentEnd.AGENT_ERROR, "the model request failed (error)")
    assert [s.follow_up_run_id for s in result.steers] == [FIRST.follow_up_run_id], "acked, yet no receipt"


def test_eof_while_the_cycle_runs_is_no_success(tmp_path: Path) -> None:
    work = tmp_path / "work"
    started, pids = work / "tool-started.flag", work / "tool.pid"
    with FakeAnthropic(busy_then_done(f"echo $PPID > {pids.name}; touch {started.name}; sleep 60")) as model:
        runtime = PiRuntime(sandbox_root_parent=tmp_path, render=render)
        run = RunInThread(runtime, _params(tmp_path, model, True)).start()
        wait_until(started.exists, "the scripted tool call started (the turn is busy)", run)
        os.kill(agent_pid(int(pids.read_text().split()[0]), b"pi"), signal.SIGKILL)
        result = run.join()
    assert result.is_error and result.end is not AgentEnd.SUCCESS, result.end
    assert not receipt_allowed(result)
    assert not result.steers
