"""Conformance of the real, pinned Codex CLI (issue 16): each terminal state ``codex exec --json``
can reach against the scripted Responses API, classified as docs/runtimes.md says, with its acks,
its error text and no receipt unless the end is outright success.

Reached for real here: success at EOF (``turn.completed``), the context-window limit (the model
stream ends in ``response.failed`` with ``context_length_exceeded``) and a quota limit (429
``insufficient_quota``), a non-retryable model error (400) and a retryable one with Codex's
retries capped (``request_max_retries``/``stream_max_retries`` 0 in its config), all
``turn.failed``; two steers queued during one turn (the turn is stopped, then resumed with
them), and a steer after the last turn (a resume).  Codex has no turn limit to reach; a turn
that writes neither ``turn.completed`` nor ``turn.failed`` (interrupted) is what the interrupt
for a steer produces, and its resume's end counts instead; the shapes are unit-tested in
``test_terminal_states.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fullsend.adapters.runtimes.codex.exec.runtime import CodexExecRuntime
from fullsend.core.agent_end import AgentEnd
from fullsend.ports import AgentParams, AgentRunResult
from tests.adapters.runtimes.real.conformance import (
    FIRST,
    LATE,
    SECOND,
    Steering,
    assert_failed,
    assert_succeeded,
    busy_then_done,
    done,
    fails,
)
from tests.adapters.runtimes.real.real_cli import RunInThread, offline_env, render, require_cli, wait_until
from tests.doubles.model_server import ModelError, Reply
from tests.doubles.openai_server import INCOMPLETE, FakeOpenAI, config_toml

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
PROMPT = "Fix issue 42 and report back."


def _params(tmp_path: Path, model: FakeOpenAI, steerable: bool) -> AgentParams:
    work, codex_home = tmp_path / "work", tmp_path / "home" / "codex"
    work.mkdir(exist_ok=True)
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(config_toml(model.base_url))
    env = offline_env(tmp_path / "home", CODEX_HOME=str(codex_home), FAKE_OPENAI_KEY="sk-fake")
    return AgentParams(
        sandbox_name="sb-conf-codex",
        agent_cli=require_cli("codex"),
        prompt=PROMPT,
        workdir=work,
        env=env,
        steerable=steerable,
        timeout_s=100,
    )


def _unsteered(tmp_path: Path, script: Any) -> AgentRunResult:
    with FakeOpenAI(script) as model:
        runtime = CodexExecRuntime(sandbox_root_parent=tmp_path, render=render)
        return RunInThread(runtime, _params(tmp_path, model, False)).start().join()


def test_success_then_eof(tmp_path: Path) -> None:
    result = _unsteered(tmp_path, done("All done: final-word-codex-exec."))
    assert_succeeded(result, [])
    assert result.final_message == "All done: final-word-codex-exec."  # the last agent_message item


@pytest.mark.parametrize(
    ("error", "says"),
    [
        (
            ModelError(
                200,
                "invalid_request_error",
                "Your input exceeds the context window of this model.",
                code="context_length_exceeded",
            ),
            "Codex ran out of room in the model's context window",
        ),
        (
            ModelError(429, "insufficient_quota", "You exceeded your current quota", code="insufficient_quota"),
            "Quota exceeded",
        ),
    ],
    ids=["context-window", "quota"],
)
def test_a_usage_or_context_limit_is_limit_reached(tmp_path: Path, error: ModelError, says: str) -> None:
    result = _unsteered(tmp_path, fails(error))
    assert_failed(result, AgentEnd.LIMIT_REACHED, "codex reached a usage or context limit (turn.failed): ")
    assert says in result.error


def test_non_retryable_model_error_is_agent_error(tmp_path: Path) -> None:
    result = _unsteered(tmp_path, fails())
    assert_failed(result, AgentEnd.AGENT_ERROR, "the codex turn failed (turn.failed): ")
    assert "scripted: this request is invalid" in result.error


def test_retryable_model_error_with_retries_capped_is_agent_error(tmp_path: Path) -> None:
    result = _unsteered(tmp_path, fails(ModelError(500, "server_error", "scripted: internal error")))
    assert_failed(result, AgentEnd.AGENT_ERROR, "the codex turn failed (turn.failed): ")


def test_two_steers_queued_during_one_turn_are_both_acked(tmp_path: Path) -> None:
    work = tmp_path / "work"
    started = work / "tool-started.flag"
    with FakeOpenAI(busy_then_done(f"touch {started.name} && sleep 60")) as model:
        runtime = CodexExecRuntime(sandbox_root_parent=tmp_path, render=render)
        run = RunInThread(runtime, _params(tmp_path, model, True)).start()
        wait_until(started.exists, "the scripted tool call started (the turn is busy)", run)
        steering = Steering(runtime, run)
        steering.steer(FIRST, SECOND)
        wait_until(
            lambda: model.saw_text("conf-marker-first") and model.saw_text("conf-marker-second"),
            "both steers reached the model",
            run,
        )
        result = steering.finish()
    assert_succeeded(result, [FIRST.follow_up_run_id, SECOND.follow_up_run_id])
    assert {s.mode for s in result.steers} == {"resume"}


def test_steer_after_the_last_turn_resumes_and_is_acked(tmp_path: Path) -> None:
    with FakeOpenAI(done()) as model:
        runtime = CodexExecRuntime(sandbox_root_parent=tmp_path, render=render)
        run = RunInThread(runtime, _params(tmp_path, model, True)).start()
        steering = Steering(runtime, run)
        steering.after_first_turn()
        steering.steer(LATE)
        wait_until(lambda: model.saw_text("conf-marker-late"), "the late steer reached the model", run)
        result = steering.finish()
    assert_succeeded(result, [LATE.follow_up_run_id])


@pytest.mark.parametrize("reason", ["max_output_tokens", "content_filter", "a-reason-no-api-has-yet"])
def test_an_incomplete_response_for_any_reason_is_never_success(tmp_path: Path, reason: str) -> None:
    """docs/runtimes.md: the Responses API's ``incomplete`` end, for each reason it documents and
    for one it does not, fails the turn (``turn.failed``): an agent error, never a receipt."""
    result = _unsteered(tmp_path, lambda body: Reply(text="A partial answer", stop=f"{INCOMPLETE}{reason}"))
    assert_failed(result, AgentEnd.AGENT_ERROR, "the codex turn failed (turn.failed): ")
    assert f"reason: {reason}" in result.error
