"""Issue 18: ``fullsend explain`` reads shapes GitHub really sends without a traceback."""

from __future__ import annotations

from fullsend.simulator.fixtures import StandardScenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.explain_command import run_explain

HUGE_ID = "9" * 4301


def test_a_receipt_shaped_comment_with_a_4301_digit_id_is_reported_not_raised(
    sim: GitHubSimulator, fix: StandardScenario
) -> None:
    body = (
        f"<!-- fullsend:steer consumed={HUGE_ID} head=aaa111 -->\n_The run already working on this item "
        f"absorbed follow-up run(s) {HUGE_ID}, so a run queued for those events exits without repeating the work._"
    )
    sim.add_comment(7, body, "github-actions[bot]", created_at="2026-09-03T10:20:00Z")
    proc = run_explain(sim)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr


def test_an_author_without_a_type_is_shown_as_unknown(sim: GitHubSimulator, fix: StandardScenario) -> None:
    from fullsend.simulator.faults import MISSING, set_field

    sim.add_comment(7, "hello", "github-actions[bot]", created_at="2026-09-03T10:20:00Z")
    sim.mutate("GET", r"/issues/7/comments$", set_field("*.user.type", MISSING), times=None)
    proc = run_explain(sim)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
