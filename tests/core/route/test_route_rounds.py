"""docs/rules.md#route-fix-rounds and #route-fork-head for a fix: the review App's rounds bound
the Review → Fix chain; a fix needs its head branch in this repository (issue 42)."""

from __future__ import annotations

import pytest

from fullsend.core.model import Review
from fullsend.core.route.decision import RULE_FORK_HEAD, RULE_REVIEW_FIX, RouteDecision
from fullsend.core.route.policy import read_policy
from fullsend.core.route.rounds import (
    RULE_FIX_ROUNDS,
    FixHead,
    bound_fix,
    fix_head_decision,
    fix_rounds,
    parse_max_fix_rounds,
)

FIX = RouteDecision("fix", RULE_REVIEW_FIX, "changes requested on a pull request by the App @coder[bot]; selects fix")
APP = "org-review[bot]"


def _review(author: str, state: str) -> Review:
    return Review(id=1, author=author, state=state)


def test_only_the_review_apps_changes_requested_reviews_count() -> None:
    reviews = [
        _review("ORG-review[bot]", "CHANGES_REQUESTED"),
        _review(APP, "COMMENTED"),
        _review(APP, "APPROVED"),
        _review("wendy", "CHANGES_REQUESTED"),
        _review(APP, "changes_requested"),
    ]
    assert fix_rounds(reviews, APP) == 2


@pytest.mark.parametrize(("rounds", "stage"), [(1, "fix"), (3, "fix"), (4, "")])
def test_a_fix_starts_up_to_max_fix_rounds_and_then_none(rounds: int, stage: str) -> None:
    decision = bound_fix(FIX, rounds, 3)
    assert decision.stage == stage
    if stage:
        assert decision.rule == RULE_REVIEW_FIX and decision.reason.endswith(f"(round {rounds} of 3)")
    else:
        assert decision.rule == RULE_FIX_ROUNDS
        assert "changes_requested review 4 on this pull request, and max_fix_rounds is 3" in decision.reason


def test_rounds_that_cannot_be_counted_start_no_fix() -> None:
    decision = bound_fix(FIX, None, 3, "HTTP 502")
    assert (decision.stage, decision.rule) == ("", RULE_FIX_ROUNDS) and "(HTTP 502)" in decision.reason


@pytest.mark.parametrize(
    ("head", "stage"),
    [
        (FixHead("feature", "org/repo"), "fix"),
        (FixHead("feature", "ORG/Repo"), "fix"),
        (FixHead("feature", "fork/repo"), ""),
        (FixHead("", "org/repo"), ""),
        (FixHead(unreadable="HTTP 404"), ""),
    ],
)
def test_a_fix_needs_its_head_branch_in_this_repository(head: FixHead, stage: str) -> None:
    decision = fix_head_decision(FIX, head, "org/repo")
    assert decision.stage == stage and (stage or decision.rule == RULE_FORK_HEAD)


@pytest.mark.parametrize(("text", "value"), [("", 3), (" 0 ", 0), ("7", 7), ("100", 100)])
def test_max_fix_rounds_reads_a_whole_number(text: str, value: int) -> None:
    assert parse_max_fix_rounds(text) == value
    assert read_policy({"max_fix_rounds": text}).max_fix_rounds == value


@pytest.mark.parametrize("text", ["-1", "101", "three", "2.5", "٣"])
def test_max_fix_rounds_refuses_anything_else(text: str) -> None:
    with pytest.raises(ValueError, match=r"max_fix_rounds .*: give a whole number from 0 to 100"):
        read_policy({"max_fix_rounds": text})
