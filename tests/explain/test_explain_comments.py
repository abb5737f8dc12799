"""Why ``fullsend explain`` calls a comment context: the reasons it prints, word for word."""

from __future__ import annotations

from dataclasses import replace

from fullsend.app.commands.explain.comments import bind, why_context
from fullsend.core.model import Comment, WorkflowRun
from fullsend.core.provenance.verdicts import Verdict
from fullsend.core.scalars import parse_time

COMMAND = Comment(
    id=501,
    body="/fs-review please re-check the migration",
    author="reviewer",
    created_at=parse_time("2026-09-03T10:05:00Z"),
    updated_at=parse_time("2026-09-03T10:05:00Z"),
)
RUN = WorkflowRun(
    id=33740015300,
    run_attempt=1,
    actor="reviewer",
    created_at=parse_time("2026-09-03T10:05:03Z"),
    event="issue_comment",
)
ACCEPTED = {RUN.id: Verdict(RUN.id, "accept", "", "", "its Route job concluded success and selected my stage")}


def test_an_accepted_run_that_still_binds_nothing_names_the_unbound_rule() -> None:
    """Every other reason ruled out, the line ends with the rule id docs/rules.md explains."""
    assert why_context(COMMAND, {COMMAND.id: RUN}, ACCEPTED) == "not bound to its run 33740015300 [unbound]"


def test_a_rejected_run_names_its_own_rule() -> None:
    rejected = {RUN.id: Verdict(RUN.id, "reject", "route-not-success", "route", "its Route job concluded failure")}
    assert why_context(COMMAND, {COMMAND.id: RUN}, rejected) == (
        "its run 33740015300 was rejected [route-not-success]: its Route job concluded failure"
    )


def test_a_review_thread_run_never_binds_the_issue_comment_of_the_same_number() -> None:
    """A ``review_comment:501`` title names review comment 501, not issue comment 501."""
    thread_run = replace(RUN, event="pull_request_review_comment", display_title="org/repo#7 review_comment:501")
    comment_run = replace(thread_run, event="issue_comment", display_title="org/repo#7 comment:501")
    since = parse_time("2026-09-03T10:00:00Z")
    assert since is not None
    assert bind([COMMAND], since, frozenset(), [thread_run], [thread_run]).by_comment == {}
    assert bind([COMMAND], since, frozenset(), [comment_run], []).by_comment == {501: (RUN.id,)}
