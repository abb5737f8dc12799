"""A receipt POST whose answer proves nothing (docs/rules.md#receipt-unknown), through the whole action.

The real lifecycle runs in process against the simulator with the scripted agent as a real
subprocess (``tests.support.fault_harness``); the agent acknowledges a ``/fs-review`` follow-up
run, and the receipt POST under the job token is answered 500, 502 or 504 (nothing created), cut off
mid-body, or answered 201 with a JSON list (both created).  In every case the run claims nothing
(``consumed_run_ids`` and ``receipt_url`` empty), promises no redo, its summary says the receipt's
fate is unknown (never "none"), lists the run as ``receipt-unknown``, and the queued run decides by
what GitHub really holds.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from fullsend.simulator.faults import replace_body
from fullsend.simulator.fixtures import JOB_LOGIN, add_comment_follow_up
from fullsend.simulator.server import GitHubSimulator
from tests.support.fault_harness import (
    UNKNOWN_ROW,
    new_scenario,
    queued_run_skips,
    receipts,
    run_in_process,
    runner_env,
)

COMMAND = "/fs-review please re-check the migration"
RECEIPT_POST = r"/issues/7/comments$"

Fault = Callable[[GitHubSimulator], object]

FAULTS: dict[str, tuple[Fault, bool, str]] = {  # name: (fault, comment created, words of the warning)
    "500": (lambda sim: sim.fail("POST", RECEIPT_POST, 500, None, login=JOB_LOGIN), False, "GitHub answered 500"),
    "502": (lambda sim: sim.fail("POST", RECEIPT_POST, 502, None, login=JOB_LOGIN), False, "GitHub answered 502"),
    "504": (lambda sim: sim.fail("POST", RECEIPT_POST, 504, None, login=JOB_LOGIN), False, "GitHub answered 504"),
    "cut-off": (
        lambda sim: sim.fail_connection("POST", RECEIPT_POST, "truncate", None, login=JOB_LOGIN),
        True,
        "no usable answer",
    ),
    "json-list": (
        lambda sim: sim.mutate("POST", RECEIPT_POST, replace_body([]), None, login=JOB_LOGIN),
        True,
        "GitHub answered 201 with a body that is not a JSON object",
    ),
}


@pytest.mark.parametrize("name", list(FAULTS))
def test_a_receipt_post_without_positive_proof_claims_nothing_and_promises_no_redo(tmp_path: Path, name: str) -> None:
    fault, created, words = FAULTS[name]
    with GitHubSimulator() as sim:
        fix = new_scenario(sim)
        follow_up = int(add_comment_follow_up(sim, COMMAND)[1]["id"])
        fault(sim)
        result = run_in_process(runner_env(tmp_path, sim, fix, fix.my_run_id), tmp_path)
        assert "Traceback" not in result.console and result.exit_code == 0, result.console
        assert follow_up in result.acked_run_ids()
        assert result.outputs["outcome"] == "succeeded"
        assert result.outputs["consumed_run_ids"] == "" and result.outputs["receipt_url"] == ""
        assert UNKNOWN_ROW in result.summary
        assert "| Receipt | none |" not in result.summary
        assert f"follow-up run {follow_up} [receipt-unknown]" in result.summary
        assert "[no-receipt]" not in result.summary
        warning = [w for w in result.warnings() if "Failed to post the steer receipt" in w]
        assert len(warning) == 1 and words in warning[0] and "so it may exist after all" in warning[0], warning
        assert "the queued run will redo this work:" not in result.console
        assert receipts(sim, fix).run_ids == ({follow_up} if created else set())
        assert queued_run_skips(sim, fix, follow_up, tmp_path) == created
