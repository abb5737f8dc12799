"""Issue 43: a tool Codex refused fails the turn unless an ``expected_denials`` line covers it
(docs/rules.md#tool-refused; ``codex/refusals.py``): what the pinned Codex reports of a refusal
on each transport, the matcher, and both transports' runs against the scripted Codex."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fullsend.adapters.runtimes.codex.appserver.runtime import CodexAppServerRuntime
from fullsend.adapters.runtimes.codex.exec.interrupt import SettlePolicy
from fullsend.adapters.runtimes.codex.exec.runtime import CodexExecRuntime
from fullsend.adapters.runtimes.codex.refusals import item_refusal, request_refusal, rule_matches
from fullsend.adapters.runtimes.events import RefusalEvent, SendEvent
from fullsend.core.agent_end import AgentEnd
from fullsend.core.final_word import ToolDenial
from fullsend.ports import AgentParams
from tests.support.transport_run import RunThread

PUSH = "/bin/bash -lc 'git push origin main'"


@pytest.mark.parametrize(
    ("item", "denial"),
    [
        (
            {"type": "commandExecution", "id": "call_1", "command": PUSH, "status": "declined"},
            ToolDenial("shell", "call_1", PUSH, "codex"),
        ),
        (
            {"type": "command_execution", "id": "item_3", "command": PUSH, "status": "declined"},
            ToolDenial("shell", "item_3", PUSH, "codex"),
        ),
        (
            {
                "type": "fileChange",
                "id": "call_2",
                "changes": [{"path": "a.py"}, {"path": "b.py"}],
                "status": "declined",
            },
            ToolDenial("apply_patch", "call_2", "a.py b.py", "codex"),
        ),
        ({"type": "commandExecution", "id": "call_1", "command": PUSH, "status": "failed"}, None),
        ({"type": "command_execution", "id": "item_3", "command": PUSH, "status": "completed"}, None),
        ({"type": "agentMessage", "id": "m", "status": "declined"}, None),
    ],
    ids=["app-server-command", "exec-command", "file-change", "failed-is-not-refused", "completed", "other-item"],
)
def test_a_declined_item_is_a_refusal(item: dict[str, Any], denial: ToolDenial | None) -> None:
    assert item_refusal(item) == denial


@pytest.mark.parametrize(
    ("method", "params", "name"),
    [
        ("item/commandExecution/requestApproval", {"itemId": "c1", "command": PUSH}, "shell"),
        ("execCommandApproval", {"callId": "c1", "command": PUSH}, "shell"),
        ("item/fileChange/requestApproval", {"itemId": "c1", "reason": "write outside"}, "apply_patch"),
        ("item/permissions/requestApproval", {"itemId": "c1", "reason": "network"}, "permissions"),
        ("item/tool/requestUserInput", {"itemId": "c1"}, "request_user_input"),
        ("item/tool/call", {"callId": "c1", "tool": "lookup", "arguments": {"q": 1}}, "lookup"),
        ("mcpServer/elicitation/request", {"serverName": "docs", "message": "pick"}, "mcp__docs"),
        ("account/chatgptAuthTokens/refresh", {}, None),
    ],
)
def test_a_request_the_action_refuses_is_a_refusal_when_it_is_about_a_tool(
    method: str, params: dict[str, Any], name: str | None
) -> None:
    denial = request_refusal(method, params, 7)
    assert (denial.tool_name if denial else None) == name
    if denial is not None:  # told apart by its item (an elicitation names none: the request)
        assert denial.tool_use_id == ("request-7" if name == "mcp__docs" else "c1") and denial.cli == "codex"


@pytest.mark.parametrize(
    ("rule", "command", "covered"),
    [
        ("shell", PUSH, True),
        ("shell(*)", PUSH, True),
        ("shell(git push)", PUSH, True),
        ("shell(git push origin main)", PUSH, True),
        ("shell(git pull)", PUSH, False),
        ("shell(git push --force)", PUSH, False),
        ("shell(git)", "git push", True),
        ("apply_patch", PUSH, False),
        ("Bash(git push:*)", PUSH, False),
        ("shell(git push", PUSH, False),
    ],
)
def test_expected_denials_lines_in_codex_terms(rule: str, command: str, covered: bool) -> None:
    assert rule_matches(rule, ToolDenial("shell", "c", command, "codex")) is covered


def test_apply_patch_is_covered_by_its_name_only() -> None:
    patch = ToolDenial("apply_patch", "c", "a.py", "codex")
    assert rule_matches("apply_patch", patch) and not rule_matches("apply_patch(a.py)", patch)


def _params(cli: str, tmp_path: Path, env: dict[str, str], expected: tuple[str, ...] = ()) -> AgentParams:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return AgentParams(
        sandbox_name="sb-codex",
        agent_cli=cli,
        prompt="Fix issue 42.",
        workdir=work,
        env=env,
        steerable=False,
        timeout_s=60,
        expected_denials=expected,
    )


DECLINED = {"type": "item.completed", "item": {"id": "item_4", "type": "command_execution", "command": PUSH}}
DECLINED["item"]["status"] = "declined"  # type: ignore[index]


@pytest.mark.parametrize("transport", ["exec", "app-server"])
@pytest.mark.parametrize(("expected", "end"), [((), AgentEnd.AGENT_ERROR), (("shell(git push)",), AgentEnd.SUCCESS)])
def test_a_refused_command_fails_the_run_unless_expected(
    scripted_cli: str, tmp_path: Path, transport: str, expected: tuple[str, ...], end: AgentEnd
) -> None:
    if transport == "exec":
        env = {"SCRIPTED_AGENT_TURN_S": "0.1", "SCRIPTED_CODEX_FIRST_EVENTS": json.dumps([DECLINED])}
        runtime: Any = CodexExecRuntime(sandbox_root_parent=tmp_path, settle_policy=SettlePolicy(window_s=0.3))
    else:
        env = {"SCRIPTED_AGENT_TURN_S": "0.1", "SCRIPTED_APP_SERVER_DECLINE": PUSH}
        runtime = CodexAppServerRuntime(sandbox_root_parent=tmp_path)
    result = RunThread(runtime, _params(scripted_cli, tmp_path, env, expected)).start().join()
    assert result.end == end, result.error
    assert [(d.tool_name, d.tool_input, d.cli) for d in result.denials] == [("shell", PUSH, "codex")]
    if end is not AgentEnd.SUCCESS:
        assert (result.end_rule, result.error) == (
            "tool-refused",
            "the agent was refused a tool that expected_denials does not list: shell",
        )


def test_an_approval_request_the_action_answers_no_is_a_refused_tool(scripted_cli: str, tmp_path: Path) -> None:
    env = {"SCRIPTED_AGENT_TURN_S": "0.1", "SCRIPTED_APP_SERVER_APPROVAL": PUSH}
    runtime = CodexAppServerRuntime(sandbox_root_parent=tmp_path)
    result = RunThread(runtime, _params(scripted_cli, tmp_path, env)).start().join()
    assert (result.end, result.end_rule) == (AgentEnd.AGENT_ERROR, "tool-refused"), result.error
    assert [(d.tool_name, d.tool_input) for d in result.denials] == [("shell", PUSH)]


def test_the_app_server_parser_reports_a_refused_request() -> None:
    from datetime import UTC, datetime

    from fullsend.adapters.runtimes.codex.appserver.stream import AppServerParser
    from tests.support.transport_run import FixedClock

    parser = AppServerParser(FixedClock(datetime(2026, 9, 16, tzinfo=UTC)))
    request = {"id": 3, "method": "item/commandExecution/requestApproval", "params": {"itemId": "c9", "command": PUSH}}
    events = parser.parse(request)
    assert isinstance(events[0], SendEvent) and json.loads(events[0].line)["error"]["code"] == -32601
    assert events[-1] == RefusalEvent((ToolDenial("shell", "c9", PUSH, "codex"),))
