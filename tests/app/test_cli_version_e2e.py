"""Issue 16 acceptance: an unsupported agent CLI version exits 2 before the agent starts, for each
runtime, through the whole action (entrypoint subprocess, runner env, GitHub simulator).

The CLI is a tiny script: ``--version`` prints what an old (or too new) CLI prints; any other
invocation (an agent launch) leaves a mark, which must never appear.
"""

from __future__ import annotations

import pytest

from fullsend.simulator.fixtures import standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import run_entrypoint, runner_env

FAKE_CLI = """#!/bin/sh
if [ "$1" = "--version" ]; then printf '%s\\n' '{version}'; exit 0; fi
touch '{launched}'
exit 0
"""


@pytest.mark.parametrize(
    ("runtime", "version", "says"),
    [
        (
            "claude",
            "2.0.77 (Claude Code)",
            "is Claude Code 2.0.77, but the claude runtime supports Claude Code >= 2.1.296",
        ),
        ("pi", "0.84.4", "is pi 0.84.4, but the pi runtime supports pi >= 1.6.0 and < 1.7.0"),
        ("codex", "codex-cli 0.99.0", "is Codex 0.99.0, but the codex runtime supports Codex >= 0.152.1"),
    ],
)
def test_an_unsupported_cli_exits_2_before_the_agent_starts(tmp_path, runtime, version, says):
    launched = tmp_path / "launched"
    cli = tmp_path / "old-cli"
    cli.write_text(FAKE_CLI.format(version=version, launched=launched))
    cli.chmod(0o755)
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        run = run_entrypoint(
            runner_env(tmp_path, sim, fix, inputs={"runtime": runtime, "agent_cli": str(cli)}), tmp_path
        )
        posted = sim.comments(fix.pr)
    assert run.exit_code == 2, run.stdout + run.stderr
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 1 and says in errors[0] and errors[0].endswith("[cli-unsupported]"), errors
    assert "npm install" in errors[0]
    assert not launched.exists(), "the agent was started"
    assert [c for c in posted if c["user"]["login"] in (fix.job_login, fix.role_login)] == []
    assert "Traceback" not in run.stdout + run.stderr


def test_a_supported_cli_is_named_in_the_log(tmp_path):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        env = runner_env(tmp_path, sim, fix, inputs={"steer_enabled": "false"})
        env["SCRIPTED_AGENT_TURN_S"] = "0.2"
        run = run_entrypoint(env, tmp_path)
    assert run.exit_code == 0, run.stdout + run.stderr
    assert "Agent CLI: Claude Code 2.1.332 (supported >= 2.1.296 and < 2.2.0)" in run.stdout.splitlines()
