"""The real Codex CLI (``@openai/codex``, pinned as in the Dockerfile) on the local sandbox against
a scripted Responses API (issue 5 acceptance; docs/architecture.md "Codex").

The first ``codex exec`` runs a shell tool call that marks its start and sleeps, so the turn is
busy when the steer arrives: the queue interrupts it by stopping and starting the whole local
sandbox (every process of the group ends, the disk stays), checks the sandbox stays Ready, and
the loop launches ``codex exec … resume <thread_id> -`` with the envelope on stdin.  The resumed
process reports the same thread at ``thread.started``, which delivers the steer (one ``resume``
result for run 4242); it answers, and once settled the run ends with exit 0.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fullsend.adapters.runtimes.codex.exec.loop import STOPPED_FOR_STEER_NOTE
from fullsend.adapters.runtimes.codex.exec.runtime import CodexExecRuntime
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
from tests.doubles.model_server import texts_in
from tests.doubles.openai_server import FakeOpenAI, config_toml, interrupt_scenario

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
PROMPT = "Fix issue 42 and report back."


def test_real_codex_is_interrupted_resumed_with_the_steer_and_exits_0(tmp_path: Path) -> None:
    codex = require_cli("codex")
    work = tmp_path / "work"
    work.mkdir()
    started = work / "tool-started.flag"
    pids = work / "tool.pid"
    home = tmp_path / "home"
    codex_home = home / "codex"
    script = interrupt_scenario(f"echo $$ > {pids.name}; touch {started.name}; sleep 60", STEER_MARKER)
    with FakeOpenAI(script) as model:
        codex_home.mkdir(parents=True)
        (codex_home / "config.toml").write_text(config_toml(model.base_url))
        env = offline_env(home, CODEX_HOME=str(codex_home), FAKE_OPENAI_KEY="sk-fake")
        params = AgentParams(
            sandbox_name="sb-real-codex",
            agent_cli=codex,
            prompt=PROMPT,
            workdir=work,
            env=env,
            steerable=True,
            timeout_s=100,
        )
        runtime = CodexExecRuntime(sandbox_root_parent=tmp_path, render=render)
        run = RunInThread(runtime, params).start()
        wait_until(started.exists, "the scripted tool call started (the turn is busy)", run)
        wait_until(lambda: _resumable(runtime, params.sandbox_name), "the turn wrote its first item", run)
        tool_pid = int(pids.read_text().split()[0])
        runtime.steer(params.sandbox_name, STEER)  # interrupts: stop + start + settle check
        assert not _alive(tool_pid), "the interrupted turn's tool process survived the sandbox stop"
        wait_until(lambda: model.saw_text(STEER_MARKER), "the resumed codex sent the steer to the model", run)
        runtime.settle(params.sandbox_name)
        result = run.join()

    assert result.exit_code == 0 and not result.is_error, result.error
    assert [(s.follow_up_run_id, s.mode) for s in result.steers] == [(4242, "resume")]
    assert STOPPED_FOR_STEER_NOTE in run.output
    assert any(f"Steer received: {STEER_MARKER}" in line for line in run.output)
    envelope = render(STEER)
    resumed = [c for c in model.calls if any(envelope in t for t in texts_in(c.body.get("input")))]
    assert len(resumed) == 1, "the envelope reached the model once, on stdin of the resume"
    # The resume continued the interrupted thread: it carries the first turn's tool call.
    assert any(isinstance(i, dict) and i.get("type") == "function_call" for i in resumed[0].body["input"])
    assert model.refused == 0


def _resumable(runtime: CodexExecRuntime, sandbox: str) -> bool:
    """The opening turn wrote its first item: a steer stops it at once (docs/runtimes.md "Codex")."""
    queue = runtime._queues.lookup(sandbox)
    return queue is not None and queue.resumable


def _alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :].split()[0] != "Z"
