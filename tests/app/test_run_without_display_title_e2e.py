"""A workflow run record without ``display_title`` (older GHES omit it), through the whole action.

The real lifecycle runs in process against the simulator with the scripted agent as a real
subprocess; every Actions answer has ``display_title`` removed.  Steering as a whole stays on:
title binding alone is off (one warning names the field), and a follow-up run bound by its
``pull_requests[]`` is still steered and receipted (docs/architecture.md "Binding").
"""

from __future__ import annotations

from pathlib import Path

from fullsend.simulator.faults import drop_field
from fullsend.simulator.fixtures import add_comment_follow_up
from fullsend.simulator.server import GitHubSimulator
from tests.support.fault_harness import new_scenario, queued_run_skips, receipts, run_in_process, runner_env


def test_a_run_record_without_display_title_still_steers_a_pull_request_run(tmp_path: Path) -> None:
    with GitHubSimulator() as sim:
        fix = new_scenario(sim)
        _, run = add_comment_follow_up(
            sim, "/fs-review please re-check the migration", event="pull_request_review", pull_requests=(fix.pr,)
        )
        follow_up = int(run["id"])
        dropped = sim.mutate("GET", r"/actions/", drop_field("display_title"), None)
        result = run_in_process(runner_env(tmp_path, sim, fix, fix.my_run_id), tmp_path)
        assert "Traceback" not in result.console and result.exit_code == 0, result.console
        assert dropped.fired > 0
        assert "field display_title" not in result.console
        assert result.outputs["outcome"] == "succeeded"
        assert follow_up in result.acked_run_ids()
        assert result.outputs["consumed_run_ids"] == str(follow_up)
        degraded = [line for line in result.console.splitlines() if "title binding is off" in line.lower()]
        assert degraded == [
            "::warning::GitHub's record of my own run has no display_title field (older GitHub "
            "Enterprise Server releases leave it out), so title binding is off; only pull-request "
            "runs can bind"
        ], degraded
        assert receipts(sim, fix).run_ids == {follow_up}
        assert queued_run_skips(sim, fix, follow_up, tmp_path)
