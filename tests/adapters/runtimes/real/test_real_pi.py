"""The real pi CLI (the pinned 1.x ``@earendil-works/pi-coding-agent``) in rpc mode on the local
sandbox against a scripted Anthropic-compatible server (issue 5 acceptance; docs/architecture.md
"pi"; issue 16: the 1.x rpc contract).

pi reads its provider from ``$HOME/.pi/agent/models.json`` (``api: anthropic-messages``).  The
model's first answer is a bash tool call that marks its start and sleeps; the steer, a
``prompt`` with ``streamingBehavior:"steer"`` and a fresh rpc id, is appended then.  pi answers
it with disposition ``queued`` (not yet an ack), delivers it as a new turn before
``agent_end`` (a user ``message_start`` with the envelope's text: the ack, vector 62: one
``live`` result for run 4242), settles, and exits 0 once the feeder is stopped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fullsend.adapters.runtimes.pi.runtime import PiRuntime
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
PROMPT = "Triage issue 9 and report back."
PROVIDER, MODEL = "fakeanthropic", "claude-fake-1"


def _models_json(home: Path, base_url: str) -> None:
    agent_dir = home / ".pi" / "agent"
    agent_dir.mkdir(parents=True)
    (agent_dir / "models.json").write_text(
        json.dumps(
            {
                "providers": {
                    PROVIDER: {
                        "baseUrl": base_url,
                        "api": "anthropic-messages",
                        "apiKey": "FAKE_ANTHROPIC_KEY",
                        "models": [{"id": MODEL}],
                    }
                }
            }
        )
    )


def test_real_pi_acks_a_mid_turn_steer_delivers_it_and_exits_0(tmp_path: Path) -> None:
    pi = require_cli("pi")
    work = tmp_path / "work"
    work.mkdir()
    started = work / "tool-started.flag"
    home = tmp_path / "home"
    with FakeAnthropic(steer_scenario(f"touch {started.name} && sleep 4", STEER_MARKER)) as model:
        _models_json(home, model.base_url)
        env = offline_env(home, FAKE_ANTHROPIC_KEY="sk-ant-fake", PI_OFFLINE="1")
        params = AgentParams(
            sandbox_name="sb-real-pi",
            agent_cli=pi,
            prompt=PROMPT,
            workdir=work,
            env=env,
            steerable=True,
            timeout_s=90,
            model=MODEL,
            extra_args=("--provider", PROVIDER),
        )
        runtime = PiRuntime(sandbox_root_parent=tmp_path, render=render)
        assert runtime.steer_decline_reason(params) is None
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
    assert any(envelope in text for call in model.calls for text in texts_in(call.body.get("messages")))
    assert any(f"Steer received: {STEER_MARKER}" in line for line in run.output)
    # The steer was delivered inside the running cycle: the model heard it right after the tool result.
    steer_call = next(c for c in model.calls if any(envelope in t for t in texts_in(c.body.get("messages"))))
    roles = [m.get("role") for m in steer_call.body["messages"]]
    assert roles[:2] == ["user", "assistant"]
    assert model.refused == 0
