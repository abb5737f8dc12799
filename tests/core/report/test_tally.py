"""``tally``: what steering saved, counted from comments and run records (docs/architecture.md "Report")."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from fullsend.core.model import Comment, WorkflowRun
from fullsend.core.receipt.marker import Marker, build_marker, receipt_body
from fullsend.core.report.figures import RunFigures, absorbing_run, figures_marker, stands_on
from fullsend.core.report.tally import (
    RULE_RECEIPT_AUTHOR,
    RULE_RECEIPT_EDITED,
    UNKNOWN_STAGE,
    ItemComment,
    tally,
)

JOB = "github-actions[bot]"
ROLE = "fullsend-ai-review[bot]"
T0 = "2026-11-02T10:00:00Z"


def comment(cid: int, body: str, author: str = ROLE, *, edited: bool | None = False, updated: str = T0) -> Comment:
    kind = "Bot" if author.endswith("[bot]") else "User"
    return Comment(cid, body, author, kind, created_at_raw=T0, updated_at_raw=updated, edited=edited)


def terminal(run_id: int, figures: RunFigures | None, consumed: tuple[int, ...] = (), head: str = "aaa111") -> str:
    lines = [f"<!-- fullsend:agent-status:{run_id} -->", "<!-- fullsend:status:terminal -->"]
    if consumed:
        lines.append(build_marker(consumed, head))
    lines.append("🤖 Finished Review · ✅ Success")
    if figures is not None:
        lines.append(figures_marker(figures))
    return "\n".join(lines)


def start(run_id: int) -> str:
    return f"<!-- fullsend:agent-status:{run_id} -->\n🤖 Review · Started 10:00 AM UTC"


def run(run_id: int, status: str = "completed", conclusion: str | None = "success") -> WorkflowRun:
    return WorkflowRun(run_id, status=status, conclusion=conclusion)


REVIEW = RunFigures("review", "claude", agent_s=600.0, cost_usd=1.5)
FIX = RunFigures("fix", "codex", agent_s=120.0, cost_usd=0.25)


def test_a_steered_run_and_the_queued_run_that_skipped():
    comments = [
        ItemComment(7, comment(1, terminal(100, REVIEW, consumed=(200,)))),
        ItemComment(7, comment(2, receipt_body((200,), "aaa111"), JOB)),
    ]
    result = tally(comments, {100: run(100), 200: run(200)}, JOB)
    row = result.stages["review"]
    assert (row.runs_worked, row.runs_steered, row.updates_absorbed, row.runs_skipped) == (1, 1, 1, 1)
    assert (row.agent_minutes_spent, row.cost_usd_spent) == (10.0, 1.5)
    assert (row.agent_minutes_saved, row.cost_usd_saved) == (10.0, 1.5)
    assert set(result.stages) == {"review"}
    assert sum(result.refused.values()) == 0 and sum(result.not_skipped.values()) == 0


@pytest.mark.parametrize(
    ("record", "own_status", "reason"),
    [
        (None, False, "no-run-record"),
        (run(200), True, "worked"),  # a re-run, or a run that started before the receipt
        (run(200, status="queued", conclusion=None), False, "not-finished"),
        (run(200, status="in_progress", conclusion=None), False, "not-finished"),
        (run(200, conclusion="cancelled"), False, "cancelled"),
        (run(200, conclusion="failure"), False, "other-conclusion"),
        (run(200, conclusion=None), False, "other-conclusion"),
    ],
)
def test_an_absorbed_run_is_a_skip_only_when_its_record_proves_it(record, own_status, reason):
    comments = [
        ItemComment(7, comment(1, terminal(100, REVIEW, consumed=(200,)))),
        ItemComment(7, comment(2, receipt_body((200,), "aaa111"), JOB)),
    ]
    if own_status:
        comments.append(ItemComment(7, comment(3, start(200))))
    runs = {200: record} if record is not None else {}
    result = tally(comments, runs, JOB)
    row = result.stages["review"]
    assert (row.updates_absorbed, row.runs_skipped, row.agent_minutes_saved, row.cost_usd_saved) == (1, 0, 0.0, 0.0)
    assert result.not_skipped[reason] == 1
    assert sum(result.not_skipped.values()) == 1


@pytest.mark.parametrize(
    ("receipt", "rule"),
    [
        (comment(2, receipt_body((200,), "aaa111"), JOB, edited=True), RULE_RECEIPT_EDITED),
        (comment(2, receipt_body((200,), "aaa111"), "mallory"), RULE_RECEIPT_AUTHOR),
        (comment(2, receipt_body((200,), "aaa111"), ROLE), RULE_RECEIPT_AUTHOR),  # the agent's App
        (comment(2, receipt_body((200,), "aaa111"), "github-actions"), RULE_RECEIPT_AUTHOR),  # a User so named
    ],
)
def test_a_receipt_the_reader_refuses_is_counted_by_rule_and_saves_nothing(receipt, rule):
    comments = [ItemComment(7, comment(1, terminal(100, REVIEW, consumed=(200,)))), ItemComment(7, receipt)]
    result = tally(comments, {200: run(200)}, JOB)
    assert result.refused[rule] == 1
    assert sum(result.refused.values()) == 1
    assert result.stages["review"].updates_absorbed == 0
    assert result.stages["review"].runs_skipped == 0


def test_a_receipt_whose_edits_only_rest_tells_is_neither_counted_nor_refused():
    receipt = comment(2, receipt_body((200,), "aaa111"), JOB, edited=None, updated="2026-11-02T10:00:01Z")
    comments = [ItemComment(7, comment(1, terminal(100, REVIEW, (200,)))), ItemComment(7, receipt)]
    result = tally(comments, {200: run(200)}, JOB)
    assert result.edit_unknown == 1
    assert sum(result.refused.values()) == 0 and result.stages["review"].updates_absorbed == 0


def test_a_receipt_read_over_rest_unedited_counts():
    receipt = comment(2, receipt_body((200,), "aaa111"), JOB, edited=None)  # updated_at == created_at
    result = tally(
        [ItemComment(7, comment(1, terminal(100, REVIEW, (200,)))), ItemComment(7, receipt)], {200: run(200)}, JOB
    )
    assert result.stages["review"].runs_skipped == 1


def test_a_receipt_whose_absorbing_run_left_no_figures_counts_under_unknown():
    comments = [
        ItemComment(7, comment(1, terminal(100, None, consumed=(200,)))),
        ItemComment(7, comment(2, receipt_body((200,), "aaa111"), JOB)),
    ]
    result = tally(comments, {200: run(200)}, JOB)
    row = result.stages[UNKNOWN_STAGE]
    assert (row.updates_absorbed, row.runs_skipped, row.skips_without_figures, row.cost_usd_saved) == (1, 1, 1, 0.0)


def test_the_absorbing_run_is_found_on_the_same_item_by_the_same_marker():
    comments = [
        ItemComment(8, comment(1, terminal(100, REVIEW, consumed=(200,)))),  # another item
        ItemComment(7, comment(2, terminal(101, FIX, consumed=(200,), head="bbb222"))),  # another head
        ItemComment(7, comment(3, terminal(102, FIX, consumed=(200, 201)))),  # another id set
        ItemComment(7, comment(4, receipt_body((200,), "aaa111"), JOB)),
    ]
    result = tally(comments, {200: run(200)}, JOB)
    unknown = result.stages[UNKNOWN_STAGE]
    assert (unknown.updates_absorbed, unknown.runs_skipped, result.not_skipped["unproven"]) == (1, 0, 1)
    assert result.stages["review"].updates_absorbed == 0
    assert result.stages["fix"].updates_absorbed == 0


def test_a_run_listed_by_two_receipts_counts_once():
    comments = [
        ItemComment(7, comment(1, terminal(100, REVIEW, consumed=(200, 201)))),
        ItemComment(7, comment(2, receipt_body((200, 201), "aaa111"), JOB)),
        ItemComment(7, comment(3, terminal(101, REVIEW, consumed=(201,)))),
        ItemComment(7, comment(4, receipt_body((201,), "aaa111"), JOB)),
    ]
    result = tally(comments, {200: run(200), 201: run(201)}, JOB)
    row = result.stages["review"]
    assert (row.runs_worked, row.runs_steered, row.updates_absorbed, row.runs_skipped) == (2, 2, 2, 2)
    assert row.cost_usd_saved == 3.0  # each skip saved its first absorbing run's spend


def test_stages_are_kept_apart_and_a_start_comment_alone_is_no_worked_run():
    comments = [
        ItemComment(7, comment(1, terminal(100, REVIEW))),
        ItemComment(9, comment(2, terminal(300, FIX, consumed=(400,)))),
        ItemComment(9, comment(3, receipt_body((400,), "aaa111"), JOB)),
        ItemComment(9, comment(4, start(500))),  # a run still working, or one that died: no figures
    ]
    result = tally(comments, {400: run(400)}, JOB)
    assert set(result.stages) == {"review", "fix"}
    review, fix = result.stages["review"], result.stages["fix"]
    assert (review.runs_worked, review.runs_steered, review.updates_absorbed) == (1, 0, 0)
    assert (fix.runs_worked, fix.runs_steered, fix.runs_skipped, fix.cost_usd_saved) == (1, 1, 1, 0.25)


def test_text_that_only_quotes_a_receipt_or_a_status_is_neither():
    quoted = "> " + receipt_body((200,), "aaa111").replace("\n", "\n> ")
    status_in_text = "see <!-- fullsend:agent-status:100 -->\n<!-- fullsend:status:terminal -->\n" + figures_marker(
        REVIEW
    )
    by_a_person = terminal(101, REVIEW)
    comments = [
        ItemComment(7, comment(1, quoted, JOB)),
        ItemComment(7, comment(2, status_in_text, ROLE)),
        ItemComment(7, comment(3, by_a_person, "someone")),
    ]
    result = tally(comments, {200: run(200)}, JOB)
    assert result.stages == {}
    assert sum(result.refused.values()) == 0


def test_an_edit_flag_from_graphql_wins_over_rest_timestamps():
    receipt = replace(
        comment(2, receipt_body((200,), "aaa111"), JOB), updated_at_raw="2026-11-02T10:00:01Z", edited=False
    )
    result = tally(
        [ItemComment(7, comment(1, terminal(100, REVIEW, (200,)))), ItemComment(7, receipt)], {200: run(200)}, JOB
    )
    assert result.stages["review"].runs_skipped == 1


def test_the_run_a_skip_stands_on_is_the_role_logins_last_terminal_status_before_the_receipt():
    receipt = Marker((200,), "aaa111")

    def at(minute: int) -> datetime:
        return datetime(2026, 11, 2, 10, minute, tzinfo=UTC)

    forged = replace(comment(4, terminal(666, RunFigures("review", "claude", 9e6, 9e5), (200,))), updated_at=at(1))
    comments = [
        replace(comment(1, terminal(100, REVIEW, consumed=(201,))), updated_at=at(2)),  # another receipt's
        replace(comment(2, terminal(101, REVIEW, consumed=(200,)), "someone"), updated_at=at(3)),  # a person's
        forged,  # the agent's, under the role login, written while it worked
        replace(comment(3, terminal(102, FIX, consumed=(200,))), updated_at=at(5)),  # the real one, edited last
        replace(comment(5, terminal(103, REVIEW, consumed=(200,))), updated_at=at(9)),  # after the receipt
    ]
    assert absorbing_run(comments, receipt, ROLE, before=at(6)) == ("102", FIX)
    assert absorbing_run(comments, receipt, "another-app[bot]", before=at(6)) is None
    assert absorbing_run(comments[:2], receipt) is None
    assert stands_on("102", FIX) == (
        "run 102's work, by its status comment: 2.0 agent minutes, $0.2500, 0 tokens in and 0 out"
    )
    assert stands_on("102", None) == "run 102's work (its status comment recorded no figures)"


def test_the_terminal_status_linking_the_receipt_is_the_one_a_skip_stands_on_even_edited_after_it():
    """The receipt link is edited in once the receipt exists (spaced like every status edit, so
    after the receipt's creation); nothing written before the receipt can carry its URL."""
    receipt, url = Marker((200,), "aaa111"), "https://github.example/org/repo/pull/7#issuecomment-9"

    def at(minute: int) -> datetime:
        return datetime(2026, 11, 2, 10, minute, tzinfo=UTC)

    linked = terminal(102, FIX, consumed=(200,)) + f"\nReceipt: [posted]({url}): the queued runs will skip."
    other = terminal(103, REVIEW, consumed=(200,)) + "\nReceipt: [posted](https://github.example/x#issuecomment-8)."
    comments = [
        replace(comment(1, terminal(101, REVIEW, consumed=(200,))), updated_at=at(5)),  # written before, unlinked
        replace(comment(2, linked), updated_at=at(7)),  # the real one: its link edit came after the receipt
        replace(comment(3, other), updated_at=at(8)),  # links another receipt, after this one
    ]
    assert absorbing_run(comments, receipt, ROLE, before=at(6), receipt_url=url) == ("102", FIX)
    assert absorbing_run(comments, receipt, ROLE, before=at(6)) == ("101", REVIEW)  # without the URL: time decides
