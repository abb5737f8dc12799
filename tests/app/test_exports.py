"""Issue 6 exports: FULLSEND_RUN_STARTED_AT / FULLSEND_RUN_HEAD_SHA always, FULLSEND_STEER_ACTIVE
only while a watcher actually runs for the iteration."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from fullsend.core.scalars import format_time
from fullsend.simulator.fixtures import standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import run_entrypoint, runner_env

PR_EVENT = {"action": "synchronize", "pull_request": {"number": 7, "head": {"sha": "aaa111"}}}


@pytest.mark.parametrize(("inputs", "active"), [({}, "1"), ({"steer_enabled": "false"}, None)])
def test_run_facts_and_steer_active(tmp_path, inputs, active):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        env = runner_env(tmp_path, sim, fix, inputs=inputs, event=PR_EVENT)
        env["GITHUB_EVENT_NAME"] = "pull_request_target"
        env["SCRIPTED_AGENT_ENV_DUMP"] = str(tmp_path / "env.json")
        env["SCRIPTED_AGENT_TURN_S"] = "0.5"
        env["FULLSEND_STEER_ACTIVE"] = "1"  # a value planted earlier must not survive an unwatched run
        run = run_entrypoint(env, tmp_path)
    assert run.exit_code == 0, run.stdout + run.stderr
    child = json.loads((tmp_path / "env.json").read_text())
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", child["FULLSEND_RUN_STARTED_AT"])
    assert child["FULLSEND_RUN_HEAD_SHA"] == "aaa111"
    assert child.get("FULLSEND_STEER_ACTIVE") == active


def test_an_issue_run_exports_an_empty_head(tmp_path):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        sim.add_issue(12, title="A bug", body="It breaks.")
        env = runner_env(
            tmp_path,
            sim,
            fix,
            inputs={"item": "12", "steer_enabled": "false"},
            event={"action": "opened", "issue": {"number": 12}},
        )
        env["GITHUB_EVENT_NAME"] = "issues"
        env["SCRIPTED_AGENT_ENV_DUMP"] = str(tmp_path / "env.json")
        env["SCRIPTED_AGENT_TURN_S"] = "0.5"
        run = run_entrypoint(env, tmp_path)
    assert run.exit_code == 0, run.stdout + run.stderr
    child = json.loads((tmp_path / "env.json").read_text())
    assert child["FULLSEND_RUN_HEAD_SHA"] == ""
    assert run.outputs["head_sha"] == ""
