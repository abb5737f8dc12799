"""A receipt whose POST got no usable answer (docs/rules.md#receipt-unknown), against the simulator:
the run claims nothing in its outputs, its summary says the receipt may exist, and the queued run
decides by what GitHub really holds: it skips on a receipt that was created, and does the work
when none was."""

from __future__ import annotations

from pathlib import Path

import pytest

from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.action.finish import LeftFacts, RunOutcome
from fullsend.app.action.outputs import ActionOutcome
from fullsend.app.action.skip.facts import PreflightFacts
from fullsend.app.action.skip.preflight import run_preflight
from fullsend.app.action.skip.receipt import record_receipt
from fullsend.app.action.tokens import receipt_signer
from fullsend.app.timeline import Timeline
from fullsend.core.model import Repo
from fullsend.core.receipt.marker import Marker
from fullsend.core.receipt.signed import receipt_claim
from fullsend.errors import ExitCode
from fullsend.simulator.fixtures import (
    JOB_LOGIN,
    JOB_TOKEN,
    OIDC_REQUEST_TOKEN,
    ROLE_TOKEN,
    add_follow_up_run,
    shim_workflow_ref,
    standard_pr_scenario,
)
from fullsend.simulator.server import GitHubSimulator
from tests.doubles.recording_clock import RecordingVirtualClock

COMMENTS = r"/issues/7/comments$"


def _facts(sim: GitHubSimulator, run_id: int, tmp_path: Path) -> PreflightFacts:
    return PreflightFacts(
        stage="review",
        run_id_raw=str(run_id),
        run_attempt="1",
        repository="org/repo",
        item_number=7,
        job_token=JOB_TOKEN,
        role_token=ROLE_TOKEN,
        minted=True,
        fullsend_dir=str(tmp_path / ".fullsend"),
        event_name="issue_comment",
        in_actions=True,
        receipt_issuer=sim.issuer.url,
        workflow_ref=shim_workflow_ref(sim),
    )


@pytest.mark.parametrize(("mode", "created"), [("truncate", True), ("reset", False)])
def test_a_receipt_post_without_an_answer_leaves_the_decision_to_what_github_holds(
    tmp_path: Path, mode: str, created: bool
) -> None:
    clock = RecordingVirtualClock()
    with GitHubSimulator(clock=clock.now) as sim:
        fix = standard_pr_scenario(sim)
        follow_up = int(add_follow_up_run(sim)["id"])
        forge = GitHubForge(Repo("org", "repo"), sim.api_url, sim.graphql_url, JOB_TOKEN, ROLE_TOKEN, clock)
        outcome = RunOutcome(
            ActionOutcome.SUCCEEDED,
            ExitCode.OK,
            marker=Marker((follow_up,), "aaa111"),
            left=LeftFacts(delivered=(follow_up,), acknowledged=(follow_up,)),
        )
        sim.fail_connection("POST", COMMENTS, mode, 1)
        lines: list[tuple[str, str]] = []
        outcome = record_receipt(
            forge,
            _facts(sim, fix.my_run_id, tmp_path),
            outcome,
            "http://sim/org/repo/issues/7",
            Timeline(),
            clock,
            lambda level, message: lines.append((level, message)),
            receipt_signer(sim.oidc_request_url, OIDC_REQUEST_TOKEN, clock),
        )

        receipts = [c for c in sim.comments(7) if c["user"]["login"] == JOB_LOGIN and receipt_claim(c["body"])]
        assert len(receipts) == (1 if created else 0)
        assert outcome.receipt_unknown and not outcome.receipt_posted and outcome.consumed_run_ids == ""
        assert outcome.left_over() == [f"follow-up run {follow_up} [receipt-unknown]"]
        assert [level for level, m in lines if "it may exist after all" in m] == ["warning"]
        skip = run_preflight(forge, _facts(sim, follow_up, tmp_path), lambda level, message: None)
        assert (skip is not None) == created
