"""Issue 18 through the whole action: shapes GitHub really answers never crash the run.

Each test runs the real lifecycle in process against the simulator, with the scripted agent as a
real subprocess (``tests.support.fault_harness``), and checks exit code, outputs, summary, and
what was posted: GraphQL ``{"data": "x"}`` under the job token (the login resolution of the
pre-flight and of the receipt writer, after a steer was acknowledged) and 4,301-digit ids in receipt-shaped comments.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fullsend.app.action.finish import RunOutcome, outputs_of
from fullsend.app.action.outputs import ActionOutcome
from fullsend.errors import ExitCode
from fullsend.simulator.faults import replace_body
from fullsend.simulator.fixtures import JOB_LOGIN, add_comment_follow_up, add_follow_up_run, genuine_receipt
from fullsend.simulator.server import GitHubSimulator
from tests.support.fault_harness import (
    ActionResult,
    check_invariant,
    new_scenario,
    queued_run_skips,
    receipts,
    run_in_process,
    runner_env,
)

COMMAND = "/fs-review please re-check the migration"
HUGE_ID = "9" * 4301
OUTPUTS = set(outputs_of(RunOutcome(ActionOutcome.FAILED, ExitCode.FAILED)))  # every documented output, in action.yml


def _no_traceback(result: ActionResult) -> None:
    assert "Traceback" not in result.console and result.exit_code in (0, 1), result.console
    assert set(result.outputs) == OUTPUTS


def test_graphql_data_as_a_string_for_the_job_token_fails_open_and_posts_no_receipt(tmp_path: Path) -> None:
    with GitHubSimulator() as sim:
        fix = new_scenario(sim)
        follow_up = int(add_comment_follow_up(sim, COMMAND)[1]["id"])
        sim.mutate("POST", r"^/graphql$", replace_body({"data": "x"}), times=None, login=JOB_LOGIN)
        result = run_in_process(runner_env(tmp_path, sim, fix, fix.my_run_id), tmp_path)
        _no_traceback(result)
        assert result.exit_code == 0 and result.outputs["outcome"] == "succeeded"
        assert follow_up in result.acked_run_ids()  # the role token resolved: the steer went through
        assert "Not posting a steer receipt: resolving the receipt login" in result.console
        assert result.outputs["consumed_run_ids"] == "" and receipts(sim, fix).comments == []
        terminal = [c for c in sim.comments(fix.pr) if "fullsend:status" in c["body"]]
        assert terminal and "success" in terminal[-1]["body"].lower()  # the status comment was finished


@pytest.mark.parametrize(
    "body",
    [
        f"<!-- fullsend:steer consumed={HUGE_ID} head=aaa111 -->\n_The run already working on this item absorbed "
        f"follow-up run(s) {HUGE_ID}, so a run queued for those events exits without repeating the work._",
        f"<!-- fullsend:steer consumed={HUGE_ID},{{run}} head=aaa111 -->",
    ],
    ids=["whole-receipt-of-a-huge-id", "marker-with-a-huge-id"],
)
def test_a_4301_digit_id_never_hides_a_genuine_receipt(tmp_path: Path, body: str) -> None:
    with GitHubSimulator() as sim:
        fix = new_scenario(sim)
        queued = 33740015299
        add_follow_up_run(sim, run_id=queued)
        sim.add_comment(fix.pr, body.format(run=queued), JOB_LOGIN)
        assert not queued_run_skips(sim, fix, queued, tmp_path)  # no receipt lists it, and nothing raised
        sim.add_comment(fix.pr, genuine_receipt(sim, [queued], fix.head), JOB_LOGIN)
        assert queued_run_skips(sim, fix, queued, tmp_path)


def test_the_invariant_holds_when_graphql_answers_errors_objects(tmp_path: Path) -> None:
    """An ``errors`` object (not a list) for every GraphQL query: REST fallbacks everywhere."""
    with GitHubSimulator() as sim:
        fix = new_scenario(sim)
        follow_up = int(add_comment_follow_up(sim, COMMAND)[1]["id"])
        sim.graphql_errors({"errors": {"message": "boom"}}, times=None)
        result = run_in_process(runner_env(tmp_path, sim, fix, fix.my_run_id), tmp_path)
        _no_traceback(result)
        fate = check_invariant(result, sim, fix, [follow_up], tmp_path)
        assert result.exit_code == 0 and fate[follow_up] in ("absorbed", "left")
