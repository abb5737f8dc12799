"""The real pinned Claude Code CLI, issue 43: work it calls done that is not proven finished.

Against the scripted Anthropic server, with the input closed after the opening turn (the settle):

* a background sub-agent still working when the turn ends outlives its parent turn; the CLI waits
  for it up to ``CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS`` (the action sets it from
  ``delegated_wait_s``), then stops it (``task_notification`` ``stopped``) and exits 0 after a
  ``success``: ``delegated-unfinished``; with a longer wait it finishes, and the run succeeds;
* a background shell the agent started (a dev server) is stopped by the CLI at its own deadline
  and logged: the run succeeds;
* a refused ``Bash`` and a ``Read`` a path rule refuses: ``tool-refused``, each seen in the tool
  result the CLI writes (its ``tool_result_meta``), not only in ``permission_denials``; listed in
  ``expected_denials`` they change nothing.

Slow and in the full tier (seconds of real waiting each).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fullsend.adapters.runtimes.claude.runtime import ClaudeRuntime
from fullsend.adapters.runtimes.events import RefusalEvent
from fullsend.core.agent_end import AgentEnd
from fullsend.ports import AgentParams, AgentRunResult
from tests.adapters.runtimes.real.delegation import delegating
from tests.adapters.runtimes.real.real_cli import RunInThread, claude_offline_env, record_events, render, require_cli
from tests.doubles.anthropic_server import FakeAnthropic, Reply, ToolCall, assistant_tool_uses

pytestmark = [pytest.mark.slow, pytest.mark.full, pytest.mark.timeout(180)]


def _one_call(tool: ToolCall) -> Any:
    def script(body: dict[str, Any]) -> Reply:
        if not body.get("tools"):
            return Reply(text="Scripted title")
        if assistant_tool_uses(body) == 0:
            return Reply(text="Working.", tool=tool)
        return Reply(text="All done.")

    return script


def _run(
    tmp_path: Path, script: Any, *extra: str, wait_s: float = 600.0, expected: tuple[str, ...] = ()
) -> tuple[AgentRunResult, list[str], list[RefusalEvent]]:
    work = tmp_path / "work"
    (work / "secrets").mkdir(parents=True, exist_ok=True)
    (work / "secrets" / "key.pem").write_text("not a key\n")
    warnings: list[str] = []
    with FakeAnthropic(script, max_requests=60) as model:
        env = claude_offline_env(tmp_path / "home", model.base_url)
        params = AgentParams(
            sandbox_name="sb-real-claude-unfinished",
            agent_cli=require_cli("claude"),
            prompt="Check the migration.",
            workdir=work,
            env=env,
            steerable=False,  # the input closes after the opening turn: the settle
            timeout_s=150,
            model="claude-sonnet-4-5",
            extra_args=extra,
            delegated_wait_s=wait_s,
            expected_denials=expected,
        )
        runtime = ClaudeRuntime(sandbox_root_parent=tmp_path, render=render, warn=warnings.append)
        refusals: list[RefusalEvent] = record_events(runtime, RefusalEvent)
        result = RunInThread(runtime, params).start().join(170.0)
    return result, warnings, refusals


def test_a_sub_agent_outliving_its_turn_stopped_at_the_wait_is_unfinished(tmp_path: Path) -> None:
    result, _warnings, _refusals = _run(tmp_path, delegating(sub_s=60), wait_s=4)
    assert (result.end, result.exit_code, result.end_rule) == (AgentEnd.INTERRUPTED, 0, "delegated-unfinished")
    assert result.error == (
        'work the agent delegated did not finish: sub-agent "migration checks" (local_agent) stopped'
    ), result.error


def test_a_sub_agent_finishing_within_the_wait_is_success(tmp_path: Path) -> None:
    result, _warnings, _refusals = _run(tmp_path, delegating(sub_s=3), wait_s=90)
    assert (result.end, result.is_error, result.exit_code) == (AgentEnd.SUCCESS, False, 0), result.error
    assert result.turns >= 2  # the opening turn and the one the CLI ran when the sub-agent reported


def test_a_foreground_sub_agent_that_reports_is_success(tmp_path: Path) -> None:
    """The success path: a sub-agent the turn waits for ends ``completed`` (its own task lines)."""
    result, warnings, _refusals = _run(tmp_path, delegating(sub_s=1, background=False), wait_s=4)
    assert (result.end, result.is_error, result.exit_code) == (AgentEnd.SUCCESS, False, 0), result.error
    assert warnings == []


def test_a_background_shell_is_stopped_logged_and_changes_nothing(tmp_path: Path) -> None:
    server = {"command": "sleep 60", "description": "dev server", "timeout": 3000}  # stopped at its 3 s deadline
    result, warnings, _refusals = _run(tmp_path, _one_call(ToolCall("Bash", input=server, background=True)))
    assert (result.end, result.is_error) == (AgentEnd.SUCCESS, False), result.error
    assert warnings == [
        'The agent\'s background shell "dev server" (local_bash) stopped at its end; it does not change the outcome'
    ]


@pytest.mark.parametrize(
    ("rule", "name"), [("Bash(echo:*)", "Bash"), ("Read(./secrets/**)", "Read")], ids=["bash", "read-by-path-rule"]
)
def test_a_refused_tool_fails_the_run_unless_expected(tmp_path: Path, rule: str, name: str) -> None:
    for case in ("refused", "expected"):
        key = tmp_path / case / "work" / "secrets" / "key.pem"
        calls = {"Bash": ToolCall("Bash", "echo hi"), "Read": ToolCall("Read", input={"file_path": str(key)})}
        expected = (rule,) if case == "expected" else ()
        result, _warnings, refusals = _run(
            tmp_path / case, _one_call(calls[name]), "--disallowedTools", rule, expected=expected
        )
        assert [d.tool_name for e in refusals for d in e.denials] == [name]  # read from the tool result itself
        assert [d.tool_name for d in result.denials] == [name]
        if case == "refused":
            assert (result.end, result.end_rule) == (AgentEnd.AGENT_ERROR, "tool-refused"), result.error
            assert result.error == f"the agent was refused a tool that expected_denials does not list: {name}"
        else:
            assert (result.end, result.is_error) == (AgentEnd.SUCCESS, False), result.error
