"""``fullsend explain``: whether a queued run would skip, by ``receipt-lists-my-run``
(docs/rules.md#receipt-lists-my-run) and by ``head-reviewed`` (docs/rules.md#head-reviewed), for the item's runs when nothing is in flight and for follow-ups."""

from __future__ import annotations

from typing import Any

from fullsend.core.receipt.marker import receipt_body
from fullsend.simulator.fixtures import StandardScenario, add_follow_up_run, genuine_receipt
from fullsend.simulator.server import GitHubSimulator
from tests.support.explain_command import command, explain_json, run_explain, run_of

RECEIPT_LOGIN = "github-actions[bot]"
RECEIPT_AT = "2026-09-03T10:20:00Z"


def _absorbed_then_queued(sim: GitHubSimulator, fix: StandardScenario, **receipt: Any) -> tuple[dict, dict]:
    """My run finished and posted a receipt for follow-up B, which is still queued behind it."""
    sim.update_job(fix.stage_job_id, status="completed", conclusion="success")
    _, queued = command(sim, "/fs-review cover the error path", "2026-09-03T10:05:00Z", "2026-09-03T10:05:03Z")
    body = genuine_receipt(sim, [queued["id"]], fix.head, issued_at="2026-09-03T10:19:58Z")  # signed just before
    posted = sim.add_comment(7, body, RECEIPT_LOGIN, created_at=RECEIPT_AT, **receipt)
    return queued, posted


def test_V33_skip_on_a_receipt(sim: GitHubSimulator, fix: StandardScenario) -> None:
    """With no run in flight, the queued run B is listed and an unedited App receipt lists it: it skips."""
    queued, posted = _absorbed_then_queued(sim, fix)

    doc = explain_json(sim)

    assert doc["in_flight"] is None and "No run of org/repo#7 is in flight" in doc["in_flight_note"]
    receipt = run_of(doc, queued["id"])["receipt"]
    assert (receipt["rule_id"], receipt["applies"], receipt["comment_id"], receipt["author"], receipt["edited"]) == (
        "receipt-lists-my-run",
        True,
        posted["id"],
        RECEIPT_LOGIN,
        False,
    )
    mine = run_of(doc, fix.my_run_id)["receipt"]
    assert (mine["applies"], mine["comment_id"]) == (False, 0)
    assert "its proof holds" in receipt["reason"]  # issue 45: a signed receipt counts by its proof
    text = run_explain(sim).stdout
    assert f"[receipt-lists-my-run] would skip: receipt comment {posted['id']} by {RECEIPT_LOGIN}" in text


def test_a_receipt_whose_key_rotated_away_is_explained_as_such(sim: GitHubSimulator, fix: StandardScenario) -> None:
    """Issue 45: once GitHub no longer publishes the key that signed a receipt, explain says so with
    its rule id, as the queued run would refuse it (docs/rules.md#receipt-proof-key-unknown)."""
    queued, posted = _absorbed_then_queued(sim, fix)
    sim.issuer.rotate()

    receipt = run_of(explain_json(sim), queued["id"])["receipt"]

    assert (receipt["applies"], receipt["comment_id"]) == (False, posted["id"])
    assert "rotated away" in receipt["reason"] and receipt["reason"].endswith("[receipt-proof-key-unknown]")


def test_V32_no_skip_because_the_receipt_was_edited(sim: GitHubSimulator, fix: StandardScenario) -> None:
    """The same receipt edited later never counts: the queued run does the work, and explain says which."""
    queued, posted = _absorbed_then_queued(sim, fix, updated_at="2026-09-03T10:25:00Z")

    doc = explain_json(sim)

    receipt = run_of(doc, queued["id"])["receipt"]
    assert (receipt["applies"], receipt["comment_id"], receipt["author"], receipt["edited"]) == (
        False,
        posted["id"],
        RECEIPT_LOGIN,
        True,
    )
    assert "edited" in receipt["reason"]
    (listed,) = doc["receipts"]
    assert (listed["edited"], listed["counts"], listed["consumed"]) == (True, False, [queued["id"]])
    assert "[receipt-lists-my-run] does not apply" in run_explain(sim).stdout


def test_V21_receipt_shaped_comment_by_a_person_never_counts(sim: GitHubSimulator, fix: StandardScenario) -> None:
    """A user account pasting a perfect receipt body does not make the queued run skip."""
    sim.update_job(fix.stage_job_id, status="completed", conclusion="success")
    _, queued = command(sim, "/fs-review again", "2026-09-03T10:05:00Z", "2026-09-03T10:05:03Z")
    forged = sim.add_comment(7, receipt_body([queued["id"]], fix.head), "attacker", created_at=RECEIPT_AT)

    doc = explain_json(sim)

    receipt = run_of(doc, queued["id"])["receipt"]
    assert (receipt["applies"], receipt["comment_id"]) == (False, forged["id"])
    assert doc["receipts"][0]["counts"] is False


def test_V45_manual_rerun_never_skips(sim: GitHubSimulator, fix: StandardScenario) -> None:
    """A queued run on attempt 2 is never skipped by the receipt that lists its id."""
    queued, _ = _absorbed_then_queued(sim, fix)
    sim.update_workflow_run(queued["id"], run_attempt=2)

    receipt = run_of(explain_json(sim), queued["id"])["receipt"]

    assert receipt["applies"] is False and "manual re-run" in receipt["reason"]


def test_V89_head_reviewed_skip_would_apply(sim: GitHubSimulator, fix: StandardScenario) -> None:
    """A review-stage follow-up from a pull request event skips when the review App reviewed the
    current head after it was created."""
    follow = add_follow_up_run(sim, event="pull_request_target", pull_requests=(7,), created_at="2026-09-03T10:03:00Z")
    sim.add_review(7, "org-review[bot]", "APPROVED", "LGTM", commit_id=fix.head, submitted_at="2026-09-03T10:10:00Z")

    doc = explain_json(sim)

    skip = run_of(doc, follow["id"])["head_reviewed"]
    assert (skip["rule_id"], skip["applies"]) == ("head-reviewed", True)
    assert "pull_request_target" in skip["reason"]
    mine = doc["in_flight"]["head_reviewed"]
    assert (mine["applies"], mine["reason"]) == (
        False,
        'event "comment_added" is not one a duplicate review comes from',
    )


def test_V98_head_reviewed_skip_not_on_an_older_head(sim: GitHubSimulator, fix: StandardScenario) -> None:
    """A review of an older head does not stand in for the current one."""
    follow = add_follow_up_run(sim, event="pull_request_target", pull_requests=(7,), created_at="2026-09-03T10:03:00Z")
    sim.add_review(7, "org-review[bot]", "APPROVED", "LGTM", commit_id="0101", submitted_at="2026-09-03T10:10:00Z")

    skip = run_of(explain_json(sim), follow["id"])["head_reviewed"]

    assert skip["applies"] is False and "no review App review of aaa111" in skip["reason"]


def test_a_receipt_the_queued_run_refuses_is_explained_by_its_rule_id(
    sim: GitHubSimulator, fix: StandardScenario
) -> None:
    """Issue 45: explain checks a receipt as the queued run does (docs/rules.md "Receipt proof"): a
    signed one from a branch run of the shim and an unsigned one never count, each saying its rule
    id; with --allow-unsigned-receipts the unsigned one does."""
    sim.update_job(fix.stage_job_id, status="completed", conclusion="success")
    _, queued = command(sim, "/fs-review cover the error path", "2026-09-03T10:05:00Z", "2026-09-03T10:05:03Z")
    branch = {"workflow_ref": "org/repo/.github/workflows/fullsend.yml@refs/heads/evil"}
    signed = genuine_receipt(sim, [queued["id"]], fix.head, issued_at="2026-09-03T10:19:58Z", identity=branch)
    sim.add_comment(7, signed, RECEIPT_LOGIN, created_at=RECEIPT_AT)
    unsigned = sim.add_comment(7, receipt_body([queued["id"]], fix.head), RECEIPT_LOGIN, created_at=RECEIPT_AT)

    receipt = run_of(explain_json(sim), queued["id"])["receipt"]
    assert receipt["applies"] is False and receipt["reason"].endswith("[receipt-proof-workflow]")
    assert "refs/heads/evil" in receipt["reason"]
    receipt = run_of(explain_json(sim, "--allow-unsigned-receipts"), queued["id"])["receipt"]
    assert (receipt["applies"], receipt["comment_id"]) == (True, unsigned["id"])
