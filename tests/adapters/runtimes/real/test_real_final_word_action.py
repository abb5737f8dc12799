"""Issue 32 acceptance with the real, pinned Claude Code CLI: the whole action, run as a runner
starts it against the simulator and a scripted Anthropic server, with ``agent_args`` refusing the
model's Bash call by ``--disallowedTools``.  The refused tool appears in the step summary and the
terminal status comment with the ``agent_args`` lines that would allow it, and the agent's answer
is the ``final_message`` output (docs/rules.md#tool-denied).  The refusal, which no
``expected_denials`` line covers, fails the run: no receipt (issue 43, docs/rules.md#tool-refused)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fullsend.core.text.inert import ZWSP
from fullsend.simulator.fixtures import standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.adapters.runtimes.real.conformance import busy_then_done
from tests.adapters.runtimes.real.real_cli import cli_bin_dir, require_cli
from tests.doubles.anthropic_server import FakeAnthropic
from tests.support.action_run import run_entrypoint, runner_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


def test_a_tool_refused_by_disallowed_tools_shows_in_summary_and_terminal_comment(tmp_path: Path) -> None:
    claude = require_cli("claude")
    with GitHubSimulator() as sim, FakeAnthropic(busy_then_done("touch pushed.flag")) as model:
        fix = standard_pr_scenario(sim)
        env = runner_env(
            tmp_path,
            sim,
            fix,
            inputs={
                "runtime": "claude",
                "agent_cli": claude,
                "steer_enabled": "false",
                "agent_args": "--disallowedTools\nBash(touch:*)\n--max-turns\n6",
            },
        )
        env.update(
            PATH=f"{cli_bin_dir()}:{env.get('PATH', '/usr/bin:/bin')}",
            ANTHROPIC_BASE_URL=model.base_url,
            ANTHROPIC_API_KEY="sk-ant-fake-final-word",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
        )
        run = run_entrypoint(env, tmp_path, timeout_s=150)
        terminal = [c["body"] for c in sim.comments(fix.pr) if "fullsend:status:terminal" in c["body"]]
    assert run.exit_code == 1, run.stdout[-4000:] + run.stderr[-2000:]
    assert run.outputs["outcome"] == "failed" and run.outputs["final_message"] == "All done."
    assert (
        "::error::The run failed: the agent was refused a tool that expected_denials does not list: Bash [tool-refused]"
        in (run.stdout)
    )
    assert run.outputs["receipt_url"] == ""
    assert not (tmp_path / "workspace" / "pushed.flag").exists(), "the refused command ran"
    line = (
        '`Bash` with input {"command":"touch pushed.flag","description":"scripted step"} — to allow it, add the lines `--allowedTools` and '
        "`Bash` to `agent_args` (and take it out of any `--disallowedTools` there)"
    )
    assert f"### Tools the agent was refused\n\n- {line} [`tool-denied`]\n" in run.summary
    assert "### Final message\n\n> All done.\n" in run.summary
    assert len(terminal) == 1 and f"- {line}" in terminal[0]
    assert "<!-- fullsend:end-rule:tool-refused -->" in terminal[0]
    assert "[tool-denied]" in run.stdout
    assert ZWSP not in run.outputs["final_message"]
