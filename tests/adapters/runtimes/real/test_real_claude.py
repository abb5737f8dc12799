"""The real Claude Code CLI (pinned, from npm) on the local sandbox against a scripted Anthropic
server (issue 5 acceptance; docs/architecture.md "Live feed" and "Claude Code").

The model's first answer is a Bash tool call that marks its start and sleeps, so the turn is
busy; the steer is appended to the mailbox then.  The real CLI consumes it at the next tool
boundary, replays it (``isReplay``) with the envelope as content, which acks it (vector 31:
one ``live`` result for run 4242), sends it to the model, and, once settled, the feeder is
stopped and the CLI exits 0 on EOF.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fullsend.adapters.runtimes.claude.runtime import ClaudeRuntime
from fullsend.ports import AgentParams
from tests.adapters.runtimes.real.real_cli import (
    STEER,
    STEER_MARKER,
    RunInThread,
    offline_env,
    render,
    require_cli,
    wait_until,
)
from tests.doubles.anthropic_server import FakeAnthropic, steer_scenario
from tests.doubles.model_server import texts_in

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
PROMPT = "Fix issue 42 and report back."


def test_real_claude_consumes_a_mid_turn_steer_acks_it_and_exits_0(tmp_path: Path) -> None:
    claude = require_cli("claude")
    work = tmp_path / "work"
    work.mkdir()
    started = work / "tool-started.flag"
    with FakeAnthropic(steer_scenario(f"touch {started.name} && sleep 4", STEER_MARKER)) as model:
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
            sandbox_name="sb-real-claude",
            agent_cli=claude,
            prompt=PROMPT,
            workdir=work,
            env=env,
            steerable=True,
            timeout_s=90,
            model="claude-sonnet-4-5",
            extra_args=("--max-turns", "6"),
        )
        runtime = ClaudeRuntime(sandbox_root_parent=tmp_path, render=render)
        run = RunInThread(runtime, params).start()
        wait_until(started.exists, "the scripted tool call started (the turn is busy)", run)
        runtime.steer(params.sandbox_name, STEER)
        wait_until(lambda: model.saw_text(STEER_MARKER), "the steer reached the model", run)
        runtime.settle(params.sandbox_name)
        result = run.join()

    assert result.exit_code == 0 and not result.is_error, result.error
    assert [(s.follow_up_run_id, s.mode) for s in result.steers] == [(4242, "live")]
    assert result.turns >= 1 and result.input_tokens > 0
    envelope = render(STEER)
    assert any(envelope in text for call in model.calls for text in texts_in(call.body.get("messages"))), (
        "the model never received the whole envelope"
    )
    assert any(f"Steer received: {STEER_MARKER}" in line for line in run.output)
    assert model.refused == 0
    tool_ids = [c.tool_id for c in model.calls if c.tool_id]
    assert len(tool_ids) == len(set(tool_ids)) == 1
