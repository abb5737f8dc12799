"""Why ``fullsend explain`` calls a comment context: the reasons it prints, word for word."""

from __future__ import annotations

from fullsend.app.commands.explain.comments import why_context
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
