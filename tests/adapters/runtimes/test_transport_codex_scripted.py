"""CodexExecRuntime on the local sandbox against the scripted codex (docs/architecture.md "Codex";
a sandbox lost after an interrupt, and no process of the stopped sandbox left alive)."""

from __future__ import annotations

import json
from pathlib import Path

from fullsend.adapters.runtimes.codex.exec.interrupt import SettlePolicy
from fullsend.adapters.runtimes.codex.exec.loop import SESSION_LOST_NOTE, STOPPED_FOR_STEER_NOTE
from fullsend.adapters.runtimes.codex.exec.runtime import CodexExecRuntime
from fullsend.core.watch.steer import SteerMessage
from fullsend.errors import NoSteerSession, SteerSessionLost
from fullsend.ports import AgentParams
from fullsend.wording import render_steer
from tests.doubles.error_sandbox import ErrorSandbox
from tests.support.transport_run import RunThread, read_log, wait_for

PROMPT = "Implement issue 12"
#: The opening turn's first item: from here on its thread can be resumed, so a steer stops it.
FIRST_ITEM = {"type": "item.started", "item": {"id": "item_1", "type": "command_execution", "status": "in_progress"}}
POLICY = SettlePolicy(window_s=0.3, confirm_s=1.0, poll_s=0.02, read_bound_s=1.0)


def _params(cli: str, tmp_path: Path, env: dict[str, str], steerable: bool = True) -> AgentParams:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return AgentParams(
        sandbox_name="sb-codex", agent_cli=cli, prompt=PROMPT, workdir=work, env=env, steerable=steerable, timeout_s=60
    )


def _thread_known(runtime: CodexExecRuntime) -> bool:
    queue = runtime._queues.lookup("sb-codex")
    return queue is not None and bool(queue.thread_id)


def _resumable(runtime: CodexExecRuntime) -> bool:
    queue = runtime._queues.lookup("sb-codex")
    return queue is not None and bool(queue.thread_id) and queue.resumable


def _settle_after(run: RunThread, runtime: CodexExecRuntime, turns: int) -> None:
    run.on_turn = lambda at: runtime.settle("sb-codex") if len(run.turn_ends) >= turns else None


def test_v90_steer_interrupts_then_resume_delivers(scripted_cli: str, tmp_path: Path) -> None:
    log, pids = tmp_path / "log.ndjson", tmp_path / "pids"
    runtime = CodexExecRuntime(sandbox_root_parent=tmp_path, settle_policy=POLICY)
    env = {
        "SCRIPTED_AGENT_TURN_S": "2.0",
        "SCRIPTED_AGENT_LOG": str(log),
        "SCRIPTED_AGENT_PID_FILE": str(pids),
        "SCRIPTED_AGENT_SPAWN_CHILD": "1",
        "SCRIPTED_CODEX_FIRST_EVENTS": json.dumps([FIRST_ITEM]),
    }
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env))
    _settle_after(run, runtime, 1)
    run.start()
    wait_for(lambda: _resumable(runtime), "the opening turn can be resumed")
    runtime.steer("sb-codex", SteerMessage(77, "head moved"))
    result = run.join()
    assert result.exit_code == 0 and not result.is_error, result.error
    assert [(s.follow_up_run_id, s.mode) for s in result.steers] == [(77, "resume")]
    assert STOPPED_FOR_STEER_NOTE in run.output and not any("ERROR" in line for line in run.output)
    assert read_log(log) == [PROMPT, render_steer(SteerMessage(77, "head moved"))]
    alive_checks = (tmp_path / "pids.alive").read_text().splitlines()
    assert alive_checks == ["", ""]  # the resume found no pid of the stopped sandbox alive
    assert len(pids.read_text().split()) == 4  # two processes, each with a child


def test_idle_steer_after_turn_resumes_without_interrupt(scripted_cli: str, tmp_path: Path) -> None:
    log = tmp_path / "log.ndjson"
    runtime = CodexExecRuntime(sandbox_root_parent=tmp_path, settle_policy=POLICY)
    env = {"SCRIPTED_AGENT_TURN_S": "0.2", "SCRIPTED_AGENT_LOG": str(log)}
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env))
    run.on_turn = lambda at: (
        runtime.steer("sb-codex", SteerMessage(8, "late update"))
        if len(run.turn_ends) == 1
        else runtime.settle("sb-codex")
    )
    result = run.start().join()
    assert result.exit_code == 0 and [s.follow_up_run_id for s in result.steers] == [8]
    assert STOPPED_FOR_STEER_NOTE not in run.output and result.turns == 2


def test_a_failed_turn_stays_the_verdict_after_a_resume_completes(scripted_cli: str, tmp_path: Path) -> None:
    """Every turn is judged (docs/runtimes.md "Which end counts"): the first turn fails, a steer
    resumes the thread and that turn completes, and the run still fails by the first turn."""
    runtime = CodexExecRuntime(sandbox_root_parent=tmp_path, settle_policy=POLICY)
    env = {
        "SCRIPTED_AGENT_TURN_S": "0.2",
        "SCRIPTED_CODEX_FIRST_RESULT": json.dumps({"type": "turn.failed", "error": {"message": "model broke"}}),
    }
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env))
    run.on_turn = lambda at: (
        runtime.steer("sb-codex", SteerMessage(8, "late update"))
        if len(run.turn_ends) == 1
        else runtime.settle("sb-codex")
    )
    result = run.start().join()
    assert result.turns == 2 and [s.follow_up_run_id for s in result.steers] == [8]
    assert result.is_error and result.end == "agent-error"
    assert result.error == "the codex turn failed (turn.failed): model broke"


def test_v87_failing_resume_is_dropped_after_two_tries(scripted_cli: str, tmp_path: Path) -> None:
    warnings: list[str] = []
    runtime = CodexExecRuntime(sandbox_root_parent=tmp_path, settle_policy=POLICY, warn=warnings.append)
    env = {
        "SCRIPTED_AGENT_TURN_S": "0.2",
        "SCRIPTED_CODEX_RESUME_EXIT": "1",
        "SCRIPTED_AGENT_PID_FILE": str(tmp_path / "p"),
    }
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env))
    run.on_turn = lambda at: (
        runtime.steer("sb-codex", SteerMessage(4242, "x")) if len(run.turn_ends) == 1 else runtime.settle("sb-codex")
    )
    result = run.start().join()
    assert result.exit_code == 0 and result.steers == []  # the failed resume costs the steer, not the run
    assert len((tmp_path / "p").read_text().split()) == 3  # first process + 2 resume attempts
    assert any("4242" in w and "queued run will redo" in w for w in warnings)


def test_v91_guard_exit_on_resume_is_the_verdict(scripted_cli: str, tmp_path: Path) -> None:
    runtime = CodexExecRuntime(sandbox_root_parent=tmp_path, settle_policy=POLICY)
    env = {
        "SCRIPTED_AGENT_TURN_S": "0.2",
        "SCRIPTED_CODEX_RESUME_EXIT": "97",
        "SCRIPTED_AGENT_PID_FILE": str(tmp_path / "p"),
    }
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env))
    run.on_turn = lambda at: runtime.steer("sb-codex", SteerMessage(5, "x")) if len(run.turn_ends) == 1 else None
    result = run.start().join()
    assert result.exit_code == 97 and result.is_error
    assert len((tmp_path / "p").read_text().split()) == 2  # exactly one resume, no retry


def test_v91_first_turn_guard_and_crash_end_the_run(scripted_cli: str, tmp_path: Path) -> None:
    runtime = CodexExecRuntime(sandbox_root_parent=tmp_path, settle_policy=POLICY)
    guard = RunThread(runtime, _params(scripted_cli, tmp_path, {"SCRIPTED_CODEX_FIRST_EXIT": "98"})).start().join()
    assert guard.exit_code == 98 and guard.is_error
    crash = RunThread(runtime, _params(scripted_cli, tmp_path, {"SCRIPTED_CODEX_FIRST_EXIT": "1"})).start().join()
    assert crash.exit_code == 1 and crash.is_error


def test_v96_turn_completed_before_a_late_steer_keeps_its_success(scripted_cli: str, tmp_path: Path) -> None:
    """turn.completed was read and the process lingers: the steer does not stop it (the turn has
    ended); it waits for the exit and is resumed, and the completed turn keeps its success."""
    runtime = CodexExecRuntime(sandbox_root_parent=tmp_path, settle_policy=POLICY)
    flag = tmp_path / "terminal.flag"
    env = {
        "SCRIPTED_AGENT_TURN_S": "0.2",
        "SCRIPTED_CODEX_FIRST_EVENTS": json.dumps([FIRST_ITEM]),
        "SCRIPTED_CODEX_FIRST_LINGER_S": "2",
        "SCRIPTED_CODEX_RESUME_EXIT": "1",
        "SCRIPTED_CODEX_TERMINAL_FLAG": str(flag),
    }
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env))
    _settle_after(run, runtime, 1)
    run.start()
    wait_for(lambda: flag.exists() and not runtime._queues.lookup("sb-codex").turn_running, "turn.completed read")
    runtime.steer("sb-codex", SteerMessage(6, "x"))
    result = run.join()
    assert result.exit_code == 0 and not result.is_error and result.steers == []
    assert STOPPED_FOR_STEER_NOTE not in run.output


def test_v100_sandbox_lands_in_error_after_the_start(scripted_cli: str, tmp_path: Path) -> None:
    sandbox = ErrorSandbox("sb-codex", tmp_path)
    sandbox.force_error_after_start(delay_s=0.07)
    runtime = CodexExecRuntime(sandbox_factory=lambda _n: sandbox, settle_policy=POLICY)
    log = tmp_path / "log.ndjson"
    env = {"SCRIPTED_AGENT_TURN_S": "5", "SCRIPTED_AGENT_LOG": str(log)}
    env["SCRIPTED_CODEX_FIRST_EVENTS"] = json.dumps([FIRST_ITEM])
    run = RunThread(runtime, _params(scripted_cli, tmp_path, env)).start()
    wait_for(lambda: _resumable(runtime), "the opening turn can be resumed")
    try:
        runtime.steer("sb-codex", SteerMessage(2101, "update"))
    except SteerSessionLost as exc:
        lost = exc
    else:
        raise AssertionError("steer did not report the lost session")
    assert 'phase "Error"' in str(lost)
    result = run.join()
    assert result.session_lost and result.exit_code == -1 and result.is_error and result.steers == []
    assert "session lost" in result.error
    assert SESSION_LOST_NOTE in run.output and "queued run will redo the work" in SESSION_LOST_NOTE
    assert read_log(log) == [PROMPT]  # no resume ran
    try:
        runtime.steer("sb-codex", SteerMessage(2102, "later"))
    except NoSteerSession:
        pass  # the run returned and unregistered


def test_codex_argv_and_env(scripted_cli: str, tmp_path: Path) -> None:
    argv_dump, env_dump = tmp_path / "argv.json", tmp_path / "env.json"
    env = {
        "SCRIPTED_AGENT_TURN_S": "0.1",
        "SCRIPTED_AGENT_ARGV_DUMP": str(argv_dump),
        "SCRIPTED_AGENT_ENV_DUMP": str(env_dump),
        "LC_ALL": "C.UTF-8",
    }
    runtime = CodexExecRuntime(sandbox_root_parent=tmp_path)
    result = RunThread(runtime, _params(scripted_cli, tmp_path, env, steerable=False)).start().join()
    assert result.exit_code == 0 and result.turns == 1
    argv = json.loads(argv_dump.read_text())
    assert argv[:4] == ["exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
    assert argv[-1] == "-" and "resume" not in argv and PROMPT not in " ".join(argv)
    assert json.loads(env_dump.read_text()) == {**env, "IS_SANDBOX": "1"}
