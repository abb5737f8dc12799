"""The step summary's **Left to the queued run** names every accepted run the posted receipt does
not (docs/architecture.md "The receipt's promise")."""

from __future__ import annotations

from dataclasses import replace

from fullsend.app.action.finish import LeftFacts, RunOutcome, render_summary
from fullsend.app.action.outputs import ActionOutcome
from fullsend.app.timeline import Timeline
from fullsend.core.receipt.marker import Marker
from fullsend.core.receipt.post import PostState, ReceiptPost
from fullsend.errors import ExitCode


def test_the_summary_lines_follow_whether_the_receipt_was_posted() -> None:
    outcome = RunOutcome(
        ActionOutcome.SUCCEEDED,
        ExitCode.OK,
        marker=Marker(consumed=(11,), head="aaa111"),
        left=LeftFacts(((40, "deadline"),), delivered=(11, 12), acknowledged=(11,)),
    )
    assert outcome.left_over() == [
        "follow-up run 40 [deadline]",
        "follow-up run 11 [no-receipt]",
        "follow-up run 12 [not-acknowledged]",
    ]
    outcome = replace(outcome, receipt=ReceiptPost(PostState.POSTED))
    assert outcome.left_over() == ["follow-up run 40 [deadline]", "follow-up run 12 [not-acknowledged]"]


def test_the_summary_section_lists_them() -> None:
    outcome = RunOutcome(ActionOutcome.FAILED, ExitCode.FAILED, left=LeftFacts(delivered=(11,), acknowledged=(11,)))
    summary = render_summary(outcome, "review", "#7", Timeline())
    assert "### Left to the queued run\n\n- follow-up run 11 [no-receipt]\n" in summary
