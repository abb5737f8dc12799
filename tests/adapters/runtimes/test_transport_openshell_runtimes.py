"""The runtimes on the ``openshell`` sandbox: the pinned launch scripts of ``runtimes.commands``,
run through a fake ``openshell`` CLI (docs/architecture.md "Sandboxes" and "Runtimes").

The fake maps the in-sandbox root ``/sandbox`` to a directory of the test and runs each
``sandbox exec`` as ``sh -c`` there; ``sandbox stop`` kills every process group an exec started
(as OpenShell's stop ends every process) and ``start`` marks the sandbox Ready again.  Every CLI
call is logged as a JSON argv, so the launch is checked as data (the exact pinned script) and as
behaviour (the scripted agent runs it, a steer is acknowledged, the run settles).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from fullsend.adapters.runtimes.claude.runtime import ClaudeDialect, ClaudeRuntime
from fullsend.adapters.runtimes.codex.exec.interrupt import SettlePolicy
from fullsend.adapters.runtimes.codex.exec.runtime import CodexExecRuntime
from fullsend.adapters.runtimes.launch import codex_command
from fullsend.adapters.runtimes.pi.runtime import PiDialect
from fullsend.adapters.sandbox import sandbox_factory
from fullsend.adapters.sandbox.local import LocalSandbox
from fullsend.adapters.sandbox.openshell import OpenShellSandbox, workspace_env_text
from fullsend.core.watch.steer import SteerMessage
from fullsend.ports import AgentParams
from fullsend.wording import render_steer
from tests.support.transport_run import RunThread, read_log, wait_for

PROMPT = "Implement issue 12"
POLICY = SettlePolicy(window_s=0.3, confirm_s=1.0, poll_s=0.02, read_bound_s=2.0)
FAKE = """#!{python}
import json, os, pathlib, shutil, signal, sys
state = pathlib.Path(os.environ["FAKE_OPENSHELL_DIR"])
root = str(state / "sandbox")
args = sys.argv[1:]
with open(state / "calls.log", "a") as log:
    log.write(json.dumps(args) + "\\n")
verb = args[1] if len(args) > 1 else ""
phase = state / "phase"
if verb == "get":
    print("Name: " + args[2] + "\\nPhase: " + phase.read_text().strip())
elif verb in ("stop", "delete"):
    groups = state / "groups"
    for pgid in (groups.read_text().split() if groups.exists() else []):
        try:
            os.killpg(int(pgid), signal.SIGKILL)
        except ProcessLookupError:
            pass
    groups.write_text("")
    phase.write_text("Stopped")
elif verb == "start":
    phase.write_text("Ready")
elif verb == "upload":
    dest = pathlib.Path(args[4].replace("/sandbox", root, 1))
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(args[3], dest)
elif verb == "exec":
    command = args[args.index("--") + 1:]
    command[-1] = command[-1].replace("/sandbox", root)
    with open(state / "groups", "a") as groups:
        groups.write(str(os.getpgid(0)) + "\\n")
    os.chdir(root)
    os.execv("/bin/sh", ["/bin/sh", *command[1:]])
"""


@pytest.fixture
def openshell(tmp_path: Path) -> tuple[Any, Path]:
    """A sandbox factory backed by the fake CLI, and the fake's state directory."""
    state = tmp_path / "openshell"
    (state / "sandbox" / "workspace").mkdir(parents=True)
    (state / "phase").write_text("Ready")
    cli = state / "openshell"
    cli.write_text(FAKE.format(python=sys.executable))
    cli.chmod(0o755)
    cli_env = {"FAKE_OPENSHELL_DIR": str(state), "PATH": "/usr/local/bin:/usr/bin:/bin"}
    return (lambda name: OpenShellSandbox(name, cli=str(cli), cli_env=cli_env, create=False)), state


def _calls(state: Path) -> list[list[str]]:
    return [json.loads(line) for line in (state / "calls.log").read_text().splitlines()]


def _launch_scripts(state: Path, name: str) -> list[str]:
    """The scripts of the streaming launches (every exec that is not a short mailbox/mkdir command)."""
    prefix = ["sandbox", "exec", "--name", name, "--", "sh", "-c"]
    return [c[-1] for c in _calls(state) if c[:7] == prefix]


def _params(cli: str, tmp_path: Path, env: dict[str, str], name: str) -> AgentParams:
    return AgentParams(
        sandbox_name=name,
        agent_cli=cli,
        prompt=PROMPT,
        workdir=tmp_path / "host-work",
        env=env,
        steerable=True,
        timeout_s=60,
        model="claude-sonnet-4-5",
    )


def test_sandbox_factory_picks_the_kind(tmp_path: Path) -> None:
    local = sandbox_factory("local", tmp_path)("sb")
    try:
        assert isinstance(local, LocalSandbox) and local.kind == "local" and local.root.parent == tmp_path
    finally:
        local.delete()
    with pytest.raises(ValueError, match="unknown sandbox kind"):
        sandbox_factory("docker")


def test_workspace_env_puts_path_first() -> None:
    assert workspace_env_text({"B": "2", "PATH": "/p", "A": "x y"}) == (
        "export PATH='/p'\nexport A='x y'\nexport B='2'\n"
        "export FULLSEND_RUN_STARTED_AT=''\nexport FULLSEND_RUN_HEAD_SHA=''\nunset FULLSEND_STEER_ACTIVE\n"
    )


def test_v20_claude_on_openshell_runs_the_pinned_script_and_acks_a_steer(
    scripted_cli: str, tmp_path: Path, openshell: tuple[Any, Path]
) -> None:
    factory, state = openshell
    log = tmp_path / "agent-log.ndjson"
    env = {"SCRIPTED_AGENT_TURN_S": "1.0", "SCRIPTED_AGENT_LOG": str(log), "PATH": "/usr/bin:/bin"}
    params = _params(scripted_cli, tmp_path, env, "sb-os-claude")
    runtime = ClaudeRuntime(sandbox_factory=factory)
    run = RunThread(runtime, params).start()
    wait_for(lambda: read_log(log) == [PROMPT], "the opening prompt reached the agent through the feeder")
    runtime.steer(params.sandbox_name, SteerMessage(99, "rebased onto main"))
    run.wait_turns(1)
    runtime.settle(params.sandbox_name)
    result = run.join()
    assert result.exit_code == 0 and not result.is_error, result.error
    assert [(s.follow_up_run_id, s.mode) for s in result.steers] == [(99, "live")]
    assert read_log(log) == [PROMPT, render_steer(SteerMessage(99, "rebased onto main"))]
    assert _launch_scripts(state, "sb-os-claude") == [ClaudeDialect().script(params)]
    script = _launch_scripts(state, "sb-os-claude")[0]
    assert PROMPT not in script and "rebased" not in script  # texts travel through the mailbox only
    uploads = [c for c in _calls(state) if c[1] == "upload"]
    assert [c[4] for c in uploads] == ["/sandbox/workspace/.env"]
    env_file = (state / "sandbox" / "workspace" / ".env").read_text()
    assert env_file.startswith("export PATH='/usr/bin:/bin'\n") and "export IS_SANDBOX='1'\n" in env_file
    appends = [c[-1] for c in _calls(state) if ">> '/sandbox/claude-config/steer-inbox.ndjson'" in c[-1]]
    assert len(appends) == 1


def test_v49_pi_script_is_the_pinned_rpc_launch(tmp_path: Path) -> None:
    params = AgentParams(
        sandbox_name="sb",
        agent_cli="pi",
        prompt=PROMPT,
        workdir=tmp_path,
        env={},
        steerable=True,
        timeout_s=60,
        model="claude-fake-1",
        extra_args=("--provider", "fake"),
    )
    script = PiDialect().script(params)
    assert "--mode rpc" in script and "--session-id '" in script and "--model claude-fake-1 --provider fake" in script
    assert "tail -n +1 -f '/sandbox/pi-config/steer-inbox.ndjson'" in script
    assert PROMPT not in script and "--print" not in script and "</dev/null" not in script


def test_v90_v78_codex_on_openshell_stop_start_then_pinned_resume(
    scripted_cli: str, tmp_path: Path, openshell: tuple[Any, Path]
) -> None:
    factory, state = openshell
    log = tmp_path / "agent-log.ndjson"
    env = {
        "SCRIPTED_AGENT_TURN_S": "30",
        "SCRIPTED_CODEX_RESUME_TURN_S": "0.2",
        "SCRIPTED_AGENT_LOG": str(log),
        "PATH": "/usr/bin:/bin",
    }
    params = _params(scripted_cli, tmp_path, env, "sb-os-codex")
    runtime = CodexExecRuntime(sandbox_factory=factory, settle_policy=POLICY)
    run = RunThread(runtime, params).start()

    def thread_known() -> bool:
        queue = runtime._queues.lookup("sb-os-codex")
        return queue is not None and bool(queue.thread_id)

    wait_for(thread_known, "codex reported its thread")
    thread_id = runtime._queues.lookup("sb-os-codex").thread_id  # type: ignore[union-attr]
    runtime.steer(params.sandbox_name, SteerMessage(77, "head moved"))  # the 30 s turn is interrupted
    runtime.settle(params.sandbox_name)
    result = run.join()
    assert result.exit_code == 0 and not result.is_error, result.error
    assert [(s.follow_up_run_id, s.mode) for s in result.steers] == [(77, "resume")]
    envelope = render_steer(SteerMessage(77, "head moved"))
    assert read_log(log) == [PROMPT, envelope]
    flags = ["--model", "claude-sonnet-4-5"]
    assert _launch_scripts(state, "sb-os-codex") == [
        codex_command(flags, PROMPT, program=scripted_cli),
        codex_command(flags, envelope, thread_id, program=scripted_cli),
    ]
    verbs = [
        " ".join(c[:3]) if c[1] != "exec" else ("exec resume" if " resume '" in c[-1] else "exec")
        for c in _calls(state)
    ]
    assert (
        verbs.index("sandbox stop sb-os-codex") < verbs.index("sandbox start sb-os-codex") < verbs.index("exec resume")
    )
    assert verbs.count("exec resume") == 1 and not any("provider" in " ".join(c) for c in _calls(state))
