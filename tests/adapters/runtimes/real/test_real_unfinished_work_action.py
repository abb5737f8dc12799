"""Issue 43 acceptance with the real, pinned Claude Code CLI through the whole action: the
entrypoint as a runner starts it, the GitHub simulator, a scripted Anthropic server.  A follow-up
comment is steered in and acknowledged while the agent works; the agent hands the work to a
background sub-agent and ends its turns.  After the settle the CLI waits for the sub-agent up to
``delegated_wait_seconds`` (the action passes it as the print-mode wait ceiling): stopped there, the
run fails with ``delegated-unfinished`` and posts no receipt, although every ``result`` said success
and the CLI exited 0; finished within the wait, the receipt is posted as before.  Full tier."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from fullsend.core.scalars import format_time
from fullsend.simulator.fixtures import add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.adapters.runtimes.real.delegation import delegating
from tests.adapters.runtimes.real.real_cli import cli_bin_dir, require_cli
from tests.doubles.anthropic_server import FakeAnthropic
from tests.support.action_run import ActionRun, run_entrypoint, runner_env

pytestmark = [pytest.mark.slow, pytest.mark.full, pytest.mark.timeout(240)]
COMMAND = "/fs-review please re-check the migration"


def _run(tmp_path: Path, sub_s: float, wait_s: int) -> tuple[ActionRun, list[dict[str, Any]], int]:
    claude = require_cli("claude")
    with GitHubSimulator() as sim, FakeAnthropic(delegating(sub_s), max_requests=80) as model:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        added: dict[str, Any] = {}
        listing = sim.match("GET", r"/actions/workflows/fullsend\.yml/runs")
        sim.on_request(listing, lambda s: added.setdefault("run", add_comment_follow_up(s, COMMAND)[1]))
        inputs = {"runtime": "claude", "agent_cli": claude, "delegated_wait_seconds": str(wait_s)}
        env = runner_env(tmp_path, sim, fix, inputs=inputs)
        env.update(
            PATH=f"{cli_bin_dir()}:{env.get('PATH', '/usr/bin:/bin')}",
            ANTHROPIC_BASE_URL=model.base_url,
            ANTHROPIC_API_KEY="sk-ant-fake-unfinished",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
        )
        run = run_entrypoint(env, tmp_path, timeout_s=200)
        receipts = [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login]
    assert run.outputs.get("steers") == "1", run.stdout[-4000:] + run.stderr[-2000:]
    return run, receipts, int(added["run"]["id"])


def test_a_sub_agent_stopped_at_the_wait_fails_the_run_without_a_receipt(tmp_path: Path) -> None:
    run, receipts, follow_up = _run(tmp_path, sub_s=90, wait_s=4)
    assert run.exit_code == 1, run.stdout[-4000:] + run.stderr[-2000:]
    assert run.outputs["outcome"] == "failed" and run.outputs["receipt_url"] == "" and receipts == []
    assert (
        '::error::The run failed: work the agent delegated did not finish: sub-agent "migration checks" '
        "(local_agent) stopped [delegated-unfinished]"
    ) in run.stdout
    assert f"- follow-up run {follow_up} [no-receipt]" in run.summary.splitlines()


def test_a_sub_agent_finishing_within_the_wait_keeps_the_receipt(tmp_path: Path) -> None:
    run, receipts, follow_up = _run(tmp_path, sub_s=3, wait_s=120)
    assert run.exit_code == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert run.outputs["outcome"] == "succeeded" and run.outputs["consumed_run_ids"] == str(follow_up)
    assert len(receipts) == 1
