"""The real pinned Codex CLI through the whole action (entrypoint subprocess, runner env, GitHub
simulator, scripted Responses API), issue 43: a sub-agent the agent spawned and did not wait for.

The model spawns a sub-agent (Codex's multi-agent ``spawn_agent`` tool, on by default) and ends
its turn without waiting (openai/codex#36141); the sub-agent runs a command of a few seconds,
then answers.  A follow-up comment is steered in meanwhile, so only the agent's end stands
between the run and a receipt:

* app-server, ``delegated_wait_seconds`` long enough: the action keeps the server's input open
  until the sub-agent completed, and the run succeeds with its receipt;
* app-server, a wait shorter than the sub-agent's work: ``delegated-unfinished``, no receipt;
* exec: ``codex exec`` exits at the turn's end and ends the sub-agent with it (the pinned CLI
  reports it ``pending_init`` in the spawn item): ``delegated-unfinished``, no receipt.

And a limit, pinned: a command Codex's own exec policy forbids writes no item on either
transport, so the run cannot see that refusal (docs/runtimes.md "Codex").

Slow and in the full tier (real waiting).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fullsend.adapters.runtimes.codex.appserver.runtime import CodexAppServerRuntime
from fullsend.adapters.runtimes.codex.exec.runtime import CodexExecRuntime
from fullsend.core.agent_end import AgentEnd
from fullsend.ports import AgentParams
from fullsend.simulator.server import GitHubSimulator
from tests.adapters.runtimes.real.real_cli import RunInThread, offline_env, render, require_cli
from tests.doubles.model_server import Reply, ToolCall, texts_in
from tests.doubles.openai_server import FakeOpenAI, config_toml
from tests.support.steered_run import assert_no_receipt, errors, run_with_follow_up

pytestmark = [pytest.mark.slow, pytest.mark.full, pytest.mark.timeout(240)]
SUB_TASK = "SUBAGENT-TASK: check the migration (sub-agent-marker)"


def _delegating(sub_s: float) -> Any:
    """The run's agent spawns a sub-agent and ends its turn; the sub-agent runs a ``sub_s`` command."""

    def script(body: dict[str, Any]) -> Reply:
        if not body.get("tools"):
            return Reply(text="Scripted title")
        texts = list(texts_in(body.get("input")))
        calls = sum(1 for i in body.get("input") or [] if isinstance(i, dict) and i.get("type") == "function_call")
        if any(SUB_TASK in t for t in texts) and not any("Review the pull request" in t for t in texts):
            if calls == 0:
                return Reply(text="Checking.", tool=ToolCall("bash", f"sleep {sub_s} && touch sub-agent.flag"))
            return Reply(text="Checks pass.")
        if calls == 0:
            return Reply(text="Delegating.", tool=ToolCall("spawn_agent", SUB_TASK))
        return Reply(text="Delegated; done here.")

    return script


def test_app_server_waits_for_the_sub_agent_and_posts_the_receipt(tmp_path: Path) -> None:
    with FakeOpenAI(_delegating(4)) as model:
        codex_home = tmp_path / "codex-home"
        codex_home.mkdir()
        (codex_home / "config.toml").write_text(config_toml(model.base_url))
        agent_env = {"CODEX_HOME": str(codex_home), "FAKE_OPENAI_KEY": "sk-fake"}
        inputs = {"runtime": "codex", "codex_transport": "app-server", "agent_cli": require_cli("codex")}
        with GitHubSimulator() as sim:
            fix, follow_up, run = run_with_follow_up(sim, tmp_path, inputs, agent_env, timeout_s=200)
            receipts = [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login]
    assert run.exit_code == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert (run.outputs["outcome"], run.outputs["consumed_run_ids"]) == ("succeeded", str(follow_up["id"]))
    assert len(receipts) == 1
    assert (tmp_path / "workspace" / "sub-agent.flag").exists(), "the sub-agent's work did not finish"


@pytest.mark.parametrize(("transport", "wait_s"), [("app-server", "3"), ("exec", "600")])
def test_a_sub_agent_cut_off_posts_no_receipt(tmp_path: Path, transport: str, wait_s: str) -> None:
    with FakeOpenAI(_delegating(40)) as model:
        codex_home = tmp_path / "codex-home"
        codex_home.mkdir()
        (codex_home / "config.toml").write_text(config_toml(model.base_url))
        agent_env = {"CODEX_HOME": str(codex_home), "FAKE_OPENAI_KEY": "sk-fake"}
        inputs = {
            "runtime": "codex",
            "codex_transport": transport,
            "agent_cli": require_cli("codex"),
            "delegated_wait_seconds": wait_s,
        }
        with GitHubSimulator() as sim:
            fix, follow_up, run = run_with_follow_up(sim, tmp_path, inputs, agent_env, timeout_s=200)
            assert_no_receipt(sim, fix, follow_up, run, tmp_path)
    [error] = errors(run)
    assert error.startswith("::error::The run failed: work the agent delegated did not finish: sub-agent "), error
    assert error.endswith("[delegated-unfinished]")
    assert not (tmp_path / "workspace" / "sub-agent.flag").exists()


@pytest.mark.parametrize("runtime_cls", [CodexAppServerRuntime, CodexExecRuntime], ids=["app-server", "exec"])
def test_a_command_the_exec_policy_forbids_is_invisible_to_the_run(tmp_path: Path, runtime_cls: type) -> None:
    """Pins a limit docs/runtimes.md states: the pinned Codex writes no item and no request for a
    command its exec policy forbids (only the model reads the rejection), so the run ends a
    success.  Should a Codex report it, this fails, and the refusal can be read."""
    work, codex_home = tmp_path / "work", tmp_path / "home" / "codex"
    work.mkdir()
    (codex_home / "rules").mkdir(parents=True)
    rule = 'prefix_rule(pattern=["touch"], decision="forbidden", justification="not here")\n'
    (codex_home / "rules" / "default.rules").write_text(rule)

    def script(body: dict[str, Any]) -> Reply:
        if not body.get("tools"):
            return Reply(text="Scripted title")
        outputs = [
            i for i in body.get("input") or [] if isinstance(i, dict) and i.get("type") == "function_call_output"
        ]
        if not outputs:
            return Reply(text="Touching.", tool=ToolCall("bash", "touch forbidden.flag"))
        return Reply(text="Output was: " + json.dumps(outputs[-1].get("output"))[:200])

    with FakeOpenAI(script) as model:
        (codex_home / "config.toml").write_text(config_toml(model.base_url))
        env = offline_env(tmp_path / "home", CODEX_HOME=str(codex_home), FAKE_OPENAI_KEY="sk-fake")
        params = AgentParams(
            sandbox_name="sb-policy",
            agent_cli=require_cli("codex"),
            prompt="Fix issue 42.",
            workdir=work,
            env=env,
            steerable=False,
            timeout_s=90,
        )
        result = RunInThread(runtime_cls(sandbox_root_parent=tmp_path, render=render), params).start().join()
    assert not (work / "forbidden.flag").exists(), "the exec policy did not forbid the command"
    assert "rejected: not here" in result.final_message  # only the model read the rejection
    assert (result.end, result.denials) == (AgentEnd.SUCCESS, ())
