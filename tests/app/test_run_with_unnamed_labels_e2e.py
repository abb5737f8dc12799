"""An issue record whose labels carry no ``name`` (GitHub's label schema requires none), end to end.

The real lifecycle runs in process against the simulator with the scripted agent as a real
subprocess; every ``GET …/issues/{n}`` answer has its labels' ``name`` removed.  Steering as a
whole stays on: label-change reporting alone degrades (one warning names the field), and a
follow-up run is still steered and receipted (docs/architecture.md "Binding").
"""

from __future__ import annotations

from pathlib import Path

from fullsend.simulator.faults import drop_field
from fullsend.simulator.fixtures import add_comment_follow_up
from fullsend.simulator.server import GitHubSimulator
from tests.support.fault_harness import new_scenario, receipts, run_in_process, runner_env


def test_labels_without_a_name_still_steer_with_one_warning(tmp_path: Path) -> None:
    with GitHubSimulator() as sim:
        fix = new_scenario(sim)
        sim.update_issue(fix.pr, labels=["ready-for-review", "area/db"])
        _, run = add_comment_follow_up(
            sim, "/fs-review please re-check the migration", event="pull_request_review", pull_requests=(fix.pr,)
        )
        follow_up = int(run["id"])
        dropped = sim.mutate("GET", rf"/issues/{fix.pr}$", drop_field("name"), None)
        result = run_in_process(runner_env(tmp_path, sim, fix, fix.my_run_id), tmp_path)
        assert "Traceback" not in result.console and result.exit_code == 0, result.console
        assert dropped.fired > 0
        assert "MalformedResponse" not in result.console and "labels[0].name" not in result.console
        assert result.outputs["outcome"] == "succeeded"
        assert follow_up in result.acked_run_ids()
        degraded = [line for line in result.console.splitlines() if "label with no name" in line]
        assert degraded == [
            "::warning::GitHub's record of the work item lists a label with no name field, so a "
            "change among such labels is never reported; every other change still is"
        ], degraded
        assert receipts(sim, fix).run_ids == {follow_up}
