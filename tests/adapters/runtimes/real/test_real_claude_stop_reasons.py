"""The real Claude Code CLI (pinned) against a scripted Anthropic server answering with each
``stop_reason`` of the Messages API: only ``end_turn`` and ``stop_sequence`` are success
(docs/runtimes.md "Claude Code"), whatever else the CLI's ``result`` says about the turn.

Every model answer of the run is one text block ending with the swept ``stop_reason``; the run
is not steerable, so the CLI ends after its opening turn and the verdict is what the action
parsed from the real CLI's output.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fullsend.adapters.runtimes.claude.runtime import ClaudeRuntime
from fullsend.core.agent_end import AgentEnd
from fullsend.ports import AgentParams
from tests.adapters.runtimes.real.real_cli import offline_env, render, require_cli
from tests.doubles.anthropic_server import FakeAnthropic, Reply

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
SUCCESSES = ("end_turn", "stop_sequence")
#: What the pinned CLI makes of each other stop: it turns most into ``is_error`` itself (exit 1),
#: but ends a paused turn as a plain success (exit 0) that only its ``stop_reason`` gives away,
#: and passes an invented value through the same way.
FAILURES = [
    pytest.param("max_tokens", AgentEnd.AGENT_ERROR, 1, "success is_error", id="max_tokens"),
    pytest.param("tool_use", AgentEnd.AGENT_ERROR, 1, "success is_error", id="tool_use"),
    pytest.param("refusal", AgentEnd.AGENT_ERROR, 1, "success is_error", id="refusal"),
    pytest.param(
        "model_context_window_exceeded", AgentEnd.AGENT_ERROR, 1, "success is_error", id="model_context_window_exceeded"
    ),
    pytest.param("pause_turn", AgentEnd.INTERRUPTED, 0, "(pause_turn)", id="pause_turn"),
    pytest.param(
        "invented_by_a_future_api", AgentEnd.PROTOCOL_BROKEN, 0, "(stop_reason invented_by_a_future_api)", id="invented"
    ),
]


def _always(stop_reason: str):  # type: ignore[no-untyped-def]
    def script(body: dict[str, Any]) -> Reply:
        return Reply(text="Done here.", stop=stop_reason) if body.get("tools") else Reply(text="Scripted title")

    return script


def _run(tmp_path: Path, stop_reason: str):  # type: ignore[no-untyped-def]
    claude = require_cli("claude")
    work = tmp_path / "work"
    work.mkdir()
    with FakeAnthropic(_always(stop_reason)) as model:
        env = offline_env(
            tmp_path / "home",
            ANTHROPIC_BASE_URL=model.base_url,
            ANTHROPIC_API_KEY="sk-ant-fake",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
        )
        params = AgentParams(
            sandbox_name="sb-real-claude-stop",
            agent_cli=claude,
            prompt="Say done.",
            workdir=work,
            env=env,
            steerable=False,
            timeout_s=90,
            model="claude-sonnet-4-5",
            extra_args=("--max-turns", "3"),
        )
        return ClaudeRuntime(sandbox_root_parent=tmp_path, render=render).run(params, lambda _at: None)


@pytest.mark.parametrize("stop_reason", SUCCESSES)
def test_a_clean_stop_is_success(tmp_path: Path, stop_reason: str) -> None:
    result = _run(tmp_path, stop_reason)
    assert (result.end, result.is_error, result.exit_code) == (AgentEnd.SUCCESS, False, 0), result.error


@pytest.mark.parametrize(("stop_reason", "end", "exit_code", "named"), FAILURES)
def test_any_other_stop_is_not_success(
    tmp_path: Path, stop_reason: str, end: AgentEnd, exit_code: int, named: str
) -> None:
    result = _run(tmp_path, stop_reason)
    assert (result.end, result.is_error, result.exit_code) == (end, True, exit_code), result.error
    assert named in result.error
