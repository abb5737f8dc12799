"""Issue 32: the agent's final message as the ``final_message`` output, in the step summary and in
the terminal status comment, for every runtime; and the tools Claude Code refused, listed with the
``agent_args`` lines that would allow them (docs/rules.md#tool-denied).  The action runs as a
runner starts it, against the simulator, with the scripted agent standing in for each CLI."""

from __future__ import annotations

import json

import pytest

from fullsend.core.text.inert import ZWSP
from fullsend.simulator.fixtures import standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import ActionRun, run_entrypoint, runner_env


def _run(tmp_path, inputs: dict[str, str], exit_code: int = 0, **agent_env: str) -> tuple[ActionRun, list[dict], str]:
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        env = runner_env(tmp_path, sim, fix, inputs={"steer_enabled": "false", **inputs})
        env["SCRIPTED_AGENT_TURN_S"] = "0.2"
        env.update(agent_env)
        run = run_entrypoint(env, tmp_path)
        terminal = [c for c in sim.comments(fix.pr) if "fullsend:status:terminal" in c["body"]]
    assert run.exit_code == exit_code, run.stdout + run.stderr
    return run, terminal, fix.role_token


@pytest.mark.parametrize(
    ("inputs", "said"),
    [
        ({"runtime": "claude"}, "turn 1 done"),
        ({"runtime": "pi"}, "turn 1 done"),
        ({"runtime": "codex", "codex_transport": "exec"}, "done"),
        ({"runtime": "codex", "codex_transport": "app-server"}, "done"),
    ],
    ids=["claude", "pi", "codex-exec", "codex-app-server"],
)
def test_every_runtime_gives_its_final_message_as_output_summary_and_terminal_comment(tmp_path, inputs, said):
    run, terminal, _role = _run(tmp_path, inputs)
    assert run.outputs["final_message"] == said
    assert f"### Final message\n\n> {said}\n" in run.summary
    assert len(terminal) == 1
    assert f"<details><summary>Final message</summary>\n\n> {said}\n\n</details>" in terminal[0]["body"]


def test_a_hostile_multi_line_answer_is_masked_inert_and_keeps_its_lines(tmp_path):
    """The answer quotes the run's model-provider key, mentions a person, links and opens a tag; the
    output masks the key and leaves nothing that renders, and the summary quotes every line.  (The
    job and role tokens cannot reach the agent at all: a variable holding one is dropped.)"""
    key = "sk-ant-e2e-final-word-key-0123456789"
    answer = f"Done, key {key}.\ncc @octocat see [the fix](https://evil.example) <img src=x>\n\n```\nend"
    run, terminal, _role = _run(
        tmp_path, {"runtime": "claude"}, ANTHROPIC_API_KEY=key, SCRIPTED_AGENT_RESULT=json.dumps({"result": answer})
    )
    out = run.outputs["final_message"]
    assert key not in out and key not in run.summary and key not in terminal[0]["body"]
    assert out == (
        f"Done, key ***.\ncc @{ZWSP}octocat see [the fix]{ZWSP}(https:{ZWSP}//evil.example) "
        f"<{ZWSP}img src=x>\n\n```\nend"
    )
    quoted = "\n".join(f"> {line}".rstrip() for line in out.split("\n"))
    assert f"### Final message\n\n{quoted}\n" in run.summary
    assert quoted in terminal[0]["body"]


DENIALS = [
    {"tool_name": "Bash", "tool_use_id": "toolu_1", "tool_input": {"command": "git push @octocat"}},
    {"tool_name": "WebFetch", "tool_use_id": "toolu_2", "tool_input": {"url": "https://example.com"}},
]


def test_denied_tools_are_listed_with_the_agent_args_that_allow_them(tmp_path):
    """Refusals no ``expected_denials`` line covers are listed, and fail the run (issue 43)."""
    run, terminal, _role = _run(
        tmp_path, {"runtime": "claude"}, 1, SCRIPTED_AGENT_RESULT=json.dumps({"permission_denials": DENIALS})
    )
    allow = (
        "— to allow it, add the lines `--allowedTools` and `{0}` to `agent_args` "
        "(and take it out of any `--disallowedTools` there)"
    )
    bash = f'`Bash` with input {{"command":"git push @{ZWSP}octocat"}} ' + allow.format("Bash")
    fetch = f'`WebFetch` with input {{"url":"https:{ZWSP}//example.com"}} ' + allow.format("WebFetch")
    assert f"### Tools the agent was refused\n\n- {bash} [`tool-denied`]\n- {fetch} [`tool-denied`]\n" in run.summary
    assert f"Tools the agent was refused [`tool-denied`]:\n\n- {bash}\n- {fetch}" in terminal[0]["body"]
    assert "| the agent was refused the tool Bash | `tool-denied` |" in run.summary
    assert (
        "::warning::The agent was refused the tool Bash; to allow it, add the lines --allowedTools and Bash "
        "to agent_args [tool-denied]"
    ) in run.stdout
    assert run.outputs["outcome"] == "failed"  # a refusal nobody expected fails the run (issue 43)
    assert (
        "::error::The run failed: the agent was refused a tool that expected_denials does not list: "
        "Bash, WebFetch [tool-refused]"
    ) in run.stdout


def test_expected_denials_are_listed_and_change_nothing(tmp_path):
    """Both refusals match a line of ``expected_denials`` (Claude Code's rule syntax): listed, the
    run succeeds."""
    inputs = {"runtime": "claude", "expected_denials": "Bash(git push:*)\nWebFetch(domain:example.com)"}
    run, terminal, _role = _run(tmp_path, inputs, SCRIPTED_AGENT_RESULT=json.dumps({"permission_denials": DENIALS}))
    assert run.outputs["outcome"] == "succeeded", run.stdout
    assert "### Tools the agent was refused" in run.summary and "tool-refused" not in run.stdout
    assert "Tools the agent was refused [`tool-denied`]" in terminal[0]["body"]


def test_no_agent_no_final_message(tmp_path):
    """A pre-script skip runs no agent: the output is there, empty, and the summary has no section."""
    run, _terminal, _role = _run(tmp_path, {"runtime": "claude", "pre_script": "exit 78"})
    assert run.outputs["outcome"] == "skipped" and run.outputs["final_message"] == ""
    assert "### Final message" not in run.summary and "### Tools the agent was refused" not in run.summary
