"""Issue 9 acceptance: every fault × every phase, through the real action, keeps the invariant.

For each case the action runs in process (``run_action``) against the simulator with the
scripted agent as a real subprocess; one authorized follow-up exists when the agent starts
(a push for the ``compare`` phase), and one fault is armed (``fault_plan``).  After the run:

* the invariant (``fault_harness.check_invariant``): every accepted follow-up run is either
  acknowledged and listed in the receipt (its queued run skips), or listed nowhere (its queued
  run does the work); no receipt lists an unacknowledged run; no receipt after a failed run;
  outputs and step summary report the receipt that exists;
* the agent run is never crashed by a watcher fault: exit 0, ``succeeded``, the agent exited 0;
* the expected fate of the follow-up (``fault_plan.expected_fate``), so a case cannot pass by
  absorbing nothing;
* what the action said: a warning naming the failing read when a fault exhausted its retries;
  the retry waited what the server asked (``Retry-After``, ``X-RateLimit-Reset``), recorded by
  the clock and never slept.

Cells that are named cases carry the name in the test id (``fault_plan.VECTORS``): S9/S10 and
three past listing bugs at the listing, J15/J16 at the jobs, a forbidden receipt post.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import tests.faults.fault_plan as plan
from fullsend.simulator.server import GitHubSimulator
from tests.support.fault_harness import (
    ActionResult,
    check_invariant,
    fast_http,
    new_scenario,
    run_in_process,
    runner_env,
)

pytestmark = (
    pytest.mark.slow
)  # the fault matrix is in .ci/run's slow tier (docs/architecture.md "Tests"): ~6 min on 2 cores

SAYS = {  # what the log must say when a phase's request failed for good (the project's wording)
    "start": "Steering disabled",
    "listing": "Listing follow-up runs failed",
    "jobs": "reading its jobs failed",
    "item-reads": "Building the work-item delta failed",
    "receipt-read": "Could not check whether this update was already handled",
    "receipt-post": "Failed to post the steer receipt",
}
BACKOFF_S = 1.0  # the adapter's first exponential backoff when the server names no wait


def _ids() -> list[str]:
    return [
        f"{fault}@{phase}" + (f"-{plan.VECTORS[(fault, phase)]}" if (fault, phase) in plan.VECTORS else "")
        for fault, phase in plan.cases()
    ]


@pytest.mark.parametrize(("fault", "phase"), plan.cases(), ids=_ids())
def test_fault_matrix_keeps_the_invariant(
    fault: str, phase: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast_http(monkeypatch)
    with GitHubSimulator() as sim:
        case = plan.Case(fault, phase, sim, new_scenario(sim))
        plan.add_follow_up(case)
        if phase != "receipt-read":
            plan.arm(case)
        first = run_in_process(runner_env(tmp_path / "a", sim, case.fix, case.fix.my_run_id), tmp_path / "a")
        _agent_never_crashed(first)
        queued = None
        if phase == "receipt-read":
            sim.clear_faults()
            plan.arm(case)
            queued = run_in_process(
                runner_env(tmp_path / "q", sim, case.fix, case.follow_ups[0], turn_s="1"), tmp_path / "q"
            )
        fate = check_invariant(first, sim, case.fix, case.follow_ups, tmp_path)
    expected = plan.expected_fate(fault, phase)
    if queued is not None:
        _check_queued_run(queued, expected, fate)
    else:
        assert fate[case.follow_ups[0]] == expected, first.console
    if phase == "compare":
        _check_head_move(fault, first)
    if phase == "start":  # the summary shows whether the agent ran steerable
        assert ("agent launched (steerable)" in first.summary) == (expected == "absorbed"), first.summary
    _check_what_was_said(fault, phase, queued or first)


def _agent_never_crashed(result: ActionResult) -> None:
    assert result.exit_code == 0, result.console
    assert result.outputs["outcome"] == "succeeded"
    assert any("agent exited with code 0" in e.text for e in result.timeline.of_kind("agent")), result.console


def _check_queued_run(queued: ActionResult, expected: str, fate: dict[int, str]) -> None:
    """The first run absorbed the follow-up; its queued run skips only when it could read the receipt."""
    assert list(fate.values()) == ["absorbed"]
    assert queued.exit_code == 0, queued.console
    if expected == "skipped":
        assert queued.outputs["outcome"] == "skipped" and queued.outputs["skip_reason"] == "receipt"
        assert queued.agent_messages == []
    else:  # fail open: the queued run does the work, and claims nothing
        assert queued.outputs["outcome"] == "succeeded" and queued.outputs["skip_reason"] == ""
        assert queued.agent_messages and queued.outputs["receipt_url"] == ""


def _fails_for_good(fault: str, phase: str) -> bool:
    """The phase's request failed after every attempt (a POST is repeated only after a rate limit;
    a POST whose 2xx answer is not a comment was posted, its URL unknown)."""
    if phase == "receipt-post":
        return fault not in ("missing-field", "non-json", *plan.RATE_LIMITS)
    return fault in plan.TRANSIENT + plan.PERMANENT


def _check_what_was_said(fault: str, phase: str, result: ActionResult) -> None:
    """A failure is warned in the phase's words; a recovered one is not, and its wait is the server's."""
    warnings = "\n".join(result.warnings())
    if phase in SAYS and _fails_for_good(fault, phase):
        assert SAYS[phase] in warnings, result.console
    if phase == "receipt-post" or fault not in (*plan.RATE_LIMITS, "timeout"):
        return
    assert SAYS.get(phase, "\0") not in warnings, result.console
    if fault == "primary-403":  # X-RateLimit-Reset was 30 s ahead when armed: wait until then + 1 s
        assert (
            len(result.slept_s) == 1
            and plan.PRIMARY_RESET_IN_S - 10 <= result.slept_s[0] <= plan.PRIMARY_RESET_IN_S + 1
        )
    else:
        wait = {"rate-429": plan.RATE_429_WAIT_S, "secondary-403": plan.SECONDARY_WAIT_S}.get(fault, BACKOFF_S)
        assert result.slept_s == [float(wait)], result.slept_s


def _check_head_move(fault: str, result: ActionResult) -> None:
    """compare: the steer names the new head either way; the file list only when the compare was read."""
    steer = next(m for m in result.agent_messages if plan.PUSH_HEAD in m)  # the first head move
    readable = fault in (*plan.RATE_LIMITS, "timeout", "page-shift")
    assert ("db/migrate.sql" in steer) == readable, steer
