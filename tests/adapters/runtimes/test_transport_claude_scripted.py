"""ClaudeRuntime on the local sandbox against the scripted stream-json agent."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fullsend.adapters import proc
from fullsend.adapters.runtimes.claude.runtime import ClaudeRuntime
from fullsend.adapters.runtimes.feed import MAILBOX_NAME
from fullsend.adapters.sandbox.local import LocalSandbox
from fullsend.core.watch.steer import SteerMessage
from fullsend.core.wire import OPENING_LINE
from fullsend.errors import DuplicateSteer, NoSteerSession, SteerAfterSettle
from fullsend.ports import AgentParams
from fullsend.wording import render_steer
from tests.support.transport_run import RunThread, read_log, wait_for

PROMPT = "Fix issue 42 please"


def _params(
    cli: str, tmp_path: Path, env: dict[str, str], steerable: bool = True, timeout_s: float = 60
) -> AgentParams:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return AgentParams(
        sandbox_name="sb-test",
        agent_cli=cli,
        prompt=PROMPT,
        workdir=work,
        env=env,
        steerable=steerable,
        timeout_s=timeout_s,
    )


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "agent-log.ndjson"


def _steer_when_registered(runtime: ClaudeRuntime, msg: SteerMessage) -> None:
    def attempt() -> bool:
        try:
            runtime.steer("sb-test", msg)
        except NoSteerSession:
            return False
        return True

    wait_for(attempt, "the feed was registered")


def test_steer_mid_turn_is_echoed_acked_and_run_settles_v31_v35(scripted_cli: str, tmp_path: Path, log: Path) -> None:
    runtime = ClaudeRuntime(sandbox_root_parent=tmp_path)
    env = {"SCRIPTED_AGENT_TURN_S": "1.5", "SCRIPTED_AGENT_LOG": str(log)}
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env)).start()
    wait_for(lambda: read_log(log) == [PROMPT], "the opening prompt reached the agent")
    _steer_when_registered(runtime, SteerMessage(99, "rebased onto main", event="pull_request_target"))
    run.wait_turns(1)
    runtime.settle("sb-test")
    result = run.join()
    assert result.exit_code == 0 and not result.is_error
    assert [s.follow_up_run_id for s in result.steers] == [99]
    assert result.steers[0].mode == "live"
    assert result.turns == 1  # the steer was absorbed into the running turn
    texts = read_log(log)
    assert texts[0] == PROMPT
    assert texts[1] == render_steer(SteerMessage(99, "rebased onto main", event="pull_request_target"))
    assert len(texts) == 2


def test_boundary_echo_steer_consumed_after_step_is_acked(scripted_cli: str, tmp_path: Path, log: Path) -> None:
    """Note 9: the real CLI consumes a mid-turn steer only after the running step."""
    runtime = ClaudeRuntime(sandbox_root_parent=tmp_path)
    env = {"SCRIPTED_AGENT_TURN_S": "1.0", "SCRIPTED_AGENT_ECHO": "boundary", "SCRIPTED_AGENT_LOG": str(log)}
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env)).start()
    wait_for(lambda: read_log(log) == [PROMPT], "the opening prompt reached the agent")
    _steer_when_registered(runtime, SteerMessage(7, "also cover the error path"))
    runtime.settle("sb-test")  # settle while the steer is outstanding: must not close yet (v27)
    result = run.join()
    assert result.exit_code == 0
    assert [s.follow_up_run_id for s in result.steers] == [7]
    assert len(read_log(log)) == 2


def test_agent_written_mailbox_line_is_ignored_v43(scripted_cli: str, tmp_path: Path, log: Path) -> None:
    sandbox = LocalSandbox("sb-test", tmp_path)
    runtime = ClaudeRuntime(sandbox_factory=lambda _name: sandbox)
    mailbox = sandbox.root / "claude-config" / MAILBOX_NAME
    inject = json.dumps({"path": str(mailbox), "text": "a line the agent wrote itself"})
    env = {"SCRIPTED_AGENT_TURN_S": "1.5", "SCRIPTED_AGENT_LOG": str(log), "SCRIPTED_AGENT_INJECT": inject}
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env)).start()
    wait_for(lambda: "a line the agent wrote itself" in read_log(log), "the agent consumed its own line")
    _steer_when_registered(runtime, SteerMessage(99, "the real steer"))
    run.wait_turns(1)
    runtime.settle("sb-test")
    result = run.join()
    assert result.exit_code == 0
    assert [s.follow_up_run_id for s in result.steers] == [99]
    assert read_log(log)[1] == "a line the agent wrote itself"


def _text_only(msg: SteerMessage) -> str:
    """An envelope keyed by the text alone, so two runs' steers of one text share a key."""
    return f"{OPENING_LINE}\n\n{msg.text}"


def test_duplicate_outstanding_steer_is_refused_v16(scripted_cli: str, tmp_path: Path, log: Path) -> None:
    runtime = ClaudeRuntime(sandbox_root_parent=tmp_path, render=_text_only)
    env = {"SCRIPTED_AGENT_TURN_S": "1.5", "SCRIPTED_AGENT_ECHO": "boundary", "SCRIPTED_AGENT_LOG": str(log)}
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env)).start()
    wait_for(lambda: read_log(log) == [PROMPT], "the opening prompt reached the agent")
    msg = SteerMessage(5, "same body")
    _steer_when_registered(runtime, msg)
    with pytest.raises(DuplicateSteer):
        runtime.steer("sb-test", SteerMessage(6, "same body"))
    runtime.settle("sb-test")
    result = run.join()
    assert [s.follow_up_run_id for s in result.steers] == [5]
    assert read_log(log).count(_text_only(msg)) == 1


def test_steer_after_settle_is_refused_v46(scripted_cli: str, tmp_path: Path, log: Path) -> None:
    runtime = ClaudeRuntime(sandbox_root_parent=tmp_path)
    env = {"SCRIPTED_AGENT_TURN_S": "1.0", "SCRIPTED_AGENT_LOG": str(log)}
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env)).start()
    wait_for(lambda: read_log(log) == [PROMPT], "the opening prompt reached the agent")
    runtime.settle("sb-test")
    with pytest.raises(SteerAfterSettle):
        runtime.steer("sb-test", SteerMessage(5, "late"))
    result = run.join()
    assert result.exit_code == 0 and result.steers == []
    assert read_log(log) == [PROMPT]
    with pytest.raises(NoSteerSession):  # the run returned: unregistered (v34)
        runtime.steer("sb-test", SteerMessage(5, "late"))
    runtime.settle("sb-test")  # no-op on an unknown sandbox


def test_cancel_kills_the_whole_group(scripted_cli: str, tmp_path: Path) -> None:
    sandbox = LocalSandbox("sb-test", tmp_path)
    pgid = sandbox.pgid
    runtime = ClaudeRuntime(sandbox_factory=lambda _name: sandbox)
    pid_file = tmp_path / "pids"
    env = {"SCRIPTED_AGENT_TURN_S": "60", "SCRIPTED_AGENT_SPAWN_CHILD": "1", "SCRIPTED_AGENT_PID_FILE": str(pid_file)}
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env)).start()
    wait_for(lambda: pid_file.exists() and len(pid_file.read_text().split()) == 2, "agent and child started")
    pids = [int(p) for p in pid_file.read_text().split()]
    assert set(pids) <= set(proc.group_members(pgid))
    runtime.cancel("sb-test")
    result = run.join()
    assert result.cancelled and result.is_error and result.steers == []
    assert proc.group_members(pgid) == []
    for pid in pids:
        assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_agent_env_is_params_env_plus_is_sandbox_and_no_prompt_on_argv(scripted_cli: str, tmp_path: Path) -> None:
    dump, argv_dump = tmp_path / "env.json", tmp_path / "argv.json"
    env = {
        "SCRIPTED_AGENT_TURN_S": "0.1",
        "SCRIPTED_AGENT_ENV_DUMP": str(dump),
        "SCRIPTED_AGENT_ARGV_DUMP": str(argv_dump),
        "GH_TOKEN": "role-token-value",
        "LC_ALL": "C.UTF-8",  # else the interpreter itself adds LC_CTYPE (PEP 538)
    }
    runtime = ClaudeRuntime(sandbox_root_parent=tmp_path)
    result = RunThread(runtime, _params(scripted_cli, tmp_path, env, steerable=False)).start().join()
    assert result.exit_code == 0 and result.turns == 1
    # plus the wait for delegated work (the default 600 s), which the launch adds (claude_launch_env)
    assert json.loads(dump.read_text()) == {**env, "IS_SANDBOX": "1", "CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS": "600000"}
    argv = json.loads(argv_dump.read_text())
    assert argv[:7] == [
        "--print",
        "--verbose",
        "--output-format",
        "stream-json",
        "--input-format",
        "stream-json",
        "--replay-user-messages",
    ]
    assert not any(PROMPT in a for a in argv)


def test_timeout_kills_the_group(scripted_cli: str, tmp_path: Path) -> None:
    env = {"SCRIPTED_AGENT_TURN_S": "60"}
    runtime = ClaudeRuntime(sandbox_root_parent=tmp_path)
    result = RunThread(runtime, _params(scripted_cli, tmp_path, env, timeout_s=1.0)).start().join()
    assert result.timed_out and result.is_error and result.exit_code != 0


def test_sandbox_root_is_removed_after_the_run(scripted_cli: str, tmp_path: Path) -> None:
    parent = tmp_path / "roots"
    parent.mkdir()
    runtime = ClaudeRuntime(sandbox_root_parent=parent)
    env = {"SCRIPTED_AGENT_TURN_S": "0.1"}
    result = RunThread(runtime, _params(scripted_cli, tmp_path, env, steerable=False)).start().join()
    assert result.exit_code == 0
    assert os.listdir(parent) == []
