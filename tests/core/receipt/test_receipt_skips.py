"""The head-reviewed skip as a pure decision, event kinds and run ids
(docs/rules.md#head-reviewed)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fullsend.core.receipt.skips import (
    RULE_HEAD_REVIEWED,
    HeadReviewFacts,
    NotSkipped,
    Skip,
    head_review_decision,
    head_reviewed,
    is_manual_rerun,
    review_bot_logins,
    transition_kind,
)
from fullsend.core.scalars import parse_run_id, parse_time
from tests.core.receipt.receipt_forge import review

HEAD = "f3af8c5a" + "0" * 32
BASE = HeadReviewFacts(
    stage="review",
    kind="label_changed",
    run_attempt="1",
    run_id=35752742886,
    run_repo="org/repo",
    pr_repo="org/repo",
    pr_number=1480,
    review_bot_logins=review_bot_logins((), "org"),
    run_created_at=parse_time("2026-09-23T16:14:04Z"),
    head_sha=HEAD,
    reviews=(review(),),
)


def test_V89_skip() -> None:
    verdict = head_reviewed(BASE)
    assert verdict == Skip(RULE_HEAD_REVIEWED, verdict.reason) and verdict.skip_reason == "head-reviewed"  # type: ignore[union-attr]


SKIP_CASES = [
    ("V90-opened", {"kind": "opened"}),
    ("V90-synchronized", {"kind": "synchronized"}),
    ("reopened", {"kind": "reopened"}),
    ("marked_ready", {"kind": "marked_ready"}),
    ("V91-attempt-empty", {"run_attempt": ""}),
    ("V92-shared-review-app", {"reviews": (review(login="fullsend-ai-review[bot]"),)}),
    ("V93-case", {"reviews": (review(login="Org-Review[bot]"),)}),
    (
        "V105-later-human-review",
        {"reviews": (review(), review(login="maintainer", user_type="User", submitted="2026-09-23T16:40:00Z"))},
    ),
    (
        "V106-later-app-review-of-old-head",
        {"reviews": (review(), review(commit="0101" + "0" * 36, submitted="2026-09-23T16:40:00Z"))},
    ),
    ("commit-case", {"reviews": (review(commit=HEAD.upper()),)}),
    ("changes-requested", {"reviews": (review(state="CHANGES_REQUESTED"),)}),
    ("fractional-second-after", {"reviews": (review(submitted="2026-09-23T16:14:04.001Z"),)}),
]


@pytest.mark.parametrize(("vid", "change"), SKIP_CASES)
def test_skip(vid: str, change: dict) -> None:
    assert isinstance(head_reviewed(replace(BASE, **change)), Skip)


RUN_CASES = [
    ("V94-comment-added", {"kind": "comment_added"}, 'event "comment_added"'),
    ("V95-kind-empty", {"kind": ""}, 'event ""'),
    ("V96-attempt-2", {"run_attempt": "2"}, "run attempt 2 is a manual re-run"),
    ("V97-triage", {"stage": "triage"}, 'stage "triage" is not review'),
    ("V98-head-moved", {"head_sha": "b0b0" + "0" * 36}, "no review App review of b0b000000000"),
    ("V99-before-run", {"reviews": (review(submitted="2026-09-23T16:10:00Z"),)}, "after 2026-09-23T16:14:04Z"),
    ("V100-equal-instant", {"reviews": (review(submitted="2026-09-23T16:14:04Z"),)}, "no review App review"),
    ("V101-human", {"reviews": (review(login="maintainer", user_type="User"),)}, "no review App review"),
    ("V102-look-alike", {"reviews": (review(login="org-review-bot"),)}, "no review App review"),
    ("V103-coder-app", {"reviews": (review(login="org-coder[bot]"),)}, "no review App review"),
    ("V104-not-bot-type", {"reviews": (review(user_type="User"),)}, "no review App review"),
    (
        "V107-app-reviews-wrong-way-round",
        {
            "reviews": (
                review(submitted="2026-09-23T16:10:00Z"),
                review(commit="0101" + "0" * 36, submitted="2026-09-23T16:30:00Z"),
            )
        },
        "no review App review",
    ),
    ("V108-dismissed", {"reviews": (review(state="DISMISSED"),)}, "no review App review"),
    ("pending", {"reviews": (review(state="PENDING"),)}, "no review App review"),
    (
        "unknown-state-named",
        {"reviews": (review(state="SUPER_APPROVED"),)},
        'is in state "SUPER_APPROVED", unknown to this version',
    ),
    ("V109-no-reviews", {"reviews": ()}, "no review App review"),
    ("V110-review-commit-empty", {"reviews": (review(commit=""),)}, "no review App review"),
    ("V111-both-empty", {"head_sha": "", "reviews": (review(commit=""),)}, "head is unknown"),
    ("V112-created-unreadable", {"run_created_at": parse_time("yesterday")}, "created_at is unreadable"),
    ("V114-run-repo", {"run_repo": "repo"}, 'run repository "repo" is not owner/repo'),
    ("pr-repo", {"pr_repo": "org/"}, 'pull request repository "org/"'),
    ("V115-run-id-0", {"run_id": 0}, "no run id"),
    ("no-pr-number", {"pr_number": 0}, "no pull request number"),
    ("submitted-unknown", {"reviews": (review(submitted="soon"),)}, "no review App review"),
    ("configured-logins-replace-default", {"review_bot_logins": ("other-review[bot]",)}, "no review App review"),
]


def test_a_known_uncounted_state_or_another_apps_unknown_state_is_not_named() -> None:
    for reviews in ((review(state="DISMISSED"),), (review(state="SUPER_APPROVED", login="other[bot]"),)):
        verdict = head_review_decision(replace(BASE, reviews=reviews))
        assert isinstance(verdict, NotSkipped) and "unknown to this version" not in verdict.reason


@pytest.mark.parametrize(("vid", "change", "why"), RUN_CASES)
def test_run(vid: str, change: dict, why: str) -> None:
    verdict = head_review_decision(replace(BASE, **change))
    assert isinstance(verdict, NotSkipped) and why in verdict.reason
    assert head_reviewed(replace(BASE, **change)) is None


def test_review_bot_logins_default_and_input() -> None:
    assert review_bot_logins((), "acme") == ("acme-review[bot]", "fullsend-ai-review[bot]")
    assert review_bot_logins((" x[bot] ", ""), "acme") == ("x[bot]",)


@pytest.mark.parametrize(("attempt", "rerun"), [("", False), ("1", False), ("2", True), ("01", True), (" 1", True)])
def test_manual_rerun(attempt: str, rerun: bool) -> None:
    assert is_manual_rerun(attempt) is rerun


def pr_payload(action: str, number: int = 7) -> dict:
    return {"action": action, "pull_request": {"number": number}}


@pytest.mark.parametrize(
    ("vid", "normalized", "event", "payload", "number", "kind"),
    [
        ("V126", "synchronized", "issue_comment", {"action": "created"}, 7, "synchronized"),
        ("V127-labeled", "", "pull_request_target", pr_payload("labeled"), 7, "label_changed"),
        ("V127-unlabeled", "", "pull_request_target", pr_payload("unlabeled"), 7, "label_changed"),
        ("V128", "", "pull_request_target", pr_payload("opened"), 7, "opened"),
        ("V129", "", "pull_request", pr_payload("reopened"), 7, "reopened"),
        ("V130", "", "pull_request_target", pr_payload("synchronize"), 7, "synchronized"),
        ("V131", "", "pull_request_target", pr_payload("ready_for_review"), 7, "marked_ready"),
        ("V132", "", "issue_comment", {"action": "created"}, 7, "comment_added"),
        ("V133", "", "pull_request_target", pr_payload("edited"), 7, ""),
        ("V134", "", "workflow_dispatch", {"inputs": {}}, 7, ""),
        ("V135", "", "pull_request_target", None, 7, ""),
        ("V136", "", "pull_request_target", pr_payload("opened", 7), 8, ""),
        ("V137", "", "pull_request_target", {"action": "labeled"}, 0, ""),
        ("number-is-bool", "", "pull_request_target", {"action": "opened", "pull_request": {"number": True}}, 1, ""),
        ("number-is-string", "", "pull_request", {"action": "opened", "pull_request": {"number": "7"}}, 7, ""),
        ("issues-event", "", "issues", {"action": "labeled"}, 7, ""),
    ],
)
def test_transition_kind(vid: str, normalized: str, event: str, payload: dict | None, number: int, kind: str) -> None:
    assert transition_kind(normalized, event, payload, number) == kind


@pytest.mark.parametrize(
    ("raw", "run_id"),
    [
        ("33740015232", 33740015232),
        ("not-a-number", 0),
        ("", 0),
        ("0", 0),
        ("-5", 0),
        ("9223372036854775808", 0),
        (" 12", 0),
        ("1_000", 0),
        ("\u0661\u0662", 0),
    ],
)
def test_V161_run_id(raw: str, run_id: int) -> None:
    assert parse_run_id(raw) == run_id
