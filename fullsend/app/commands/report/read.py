"""The reads of ``fullsend report``: the repository's comments, its runs, and which receipts were edited.

Every read goes through the ``Forge`` port with one read-only token (docs/architecture.md
"Report").  A failed read raises ``ForgeError`` to the command, which prints one line and no
report: counts built without a read would claim less than happened.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from fullsend.core.identity import Identity, from_rest, same_identity
from fullsend.core.model import WorkflowRun
from fullsend.core.receipt.marker import Marker
from fullsend.core.receipt.signed import receipt_claim
from fullsend.core.report.tally import ItemComment
from fullsend.errors import ForgeError, NotFoundError
from fullsend.ports import Forge

#: Runs created up to this long before the window can still be listed by a receipt in it.
RUN_MARGIN = timedelta(days=1)
#: At most this many items are asked over GraphQL whether their receipts were edited, and at most
#: this many absorbed runs missing from the listing are read one by one.
MAX_EDIT_CHECKS = 200
MAX_RUN_READS = 100


@dataclass
class ReportReads:
    """What the report counts from: ``comments`` (oldest first), ``runs`` by id, and ``notes``
    saying where the reads were incomplete."""

    comments: list[ItemComment]
    runs: dict[int, WorkflowRun]
    notes: list[str] = field(default_factory=list)


def read_repository(forge: Forge, since: datetime, receipt_login: str) -> ReportReads:
    """Read everything the report needs for the window starting at ``since``; only receipts by
    ``receipt_login`` spend the per-item budgets.  Raises ``ForgeError``."""
    comments, capped = forge.list_repository_comments(since)
    reads = ReportReads(comments, {})
    if capped:
        reads.notes.append("more comments than one listing returns: later comments are not counted")
    writer = Identity(receipt_login)
    _mark_edits(forge, reads, writer)
    runs, capped_runs = forge.list_repository_runs(since - RUN_MARGIN)
    for run in runs:
        reads.runs.setdefault(run.id, run)
    if capped_runs:
        reads.notes.append("more runs than one listing returns: older runs were read one by one")
    _read_missing_runs(forge, reads, writer)
    return reads


def _receipts(comments: Sequence[ItemComment], writer: Identity) -> list[tuple[int, Marker]]:
    """``(item number, marker)`` of every receipt-shaped comment by ``writer``: a stranger's cannot
    spend the report's read budgets."""
    out = []
    for ic in comments:
        marker = receipt_claim(ic.comment.body)
        if marker is not None and same_identity(from_rest(ic.comment.author, ic.comment.author_type), writer):
            out.append((ic.number, marker))
    return out


def _mark_edits(forge: Forge, reads: ReportReads, writer: Identity) -> None:
    """Set ``Comment.edited`` from GraphQL's ``lastEditedAt`` on the items that carry receipts; an
    item GraphQL cannot answer keeps REST's timestamps (``tally`` counts a receipt they cannot
    vouch for apart)."""
    items = list(dict.fromkeys(number for number, _ in _receipts(reads.comments, writer)))
    if len(items) > MAX_EDIT_CHECKS:
        reads.notes.append(
            f"receipts on {len(items)} items: only the first {MAX_EDIT_CHECKS} were checked over GraphQL"
        )
    edited: dict[int, bool | None] = {}
    for number in items[:MAX_EDIT_CHECKS]:
        try:
            _, comments = forge.receipt_view(number)
        except ForgeError as exc:
            reads.notes.append(f"#{number}: GraphQL could not say which comments were edited ({exc}); REST's rule used")
            continue
        edited.update((c.id, c.edited) for c in comments)
    reads.comments = [
        ItemComment(ic.number, replace(ic.comment, edited=edited[ic.comment.id])) if ic.comment.id in edited else ic
        for ic in reads.comments
    ]


def _read_missing_runs(forge: Forge, reads: ReportReads, writer: Identity) -> None:
    """Read, one by one, absorbed runs the listing did not return (at most ``MAX_RUN_READS``)."""
    wanted: dict[int, None] = {}
    for _, receipt in _receipts(reads.comments, writer):
        wanted.update((i, None) for i in receipt.consumed if i not in reads.runs)
    if len(wanted) > MAX_RUN_READS:
        reads.notes.append(f"{len(wanted)} absorbed runs were not listed: only {MAX_RUN_READS} were read")
    for run_id in list(wanted)[:MAX_RUN_READS]:
        try:
            reads.runs[run_id] = forge.get_run(run_id)
        except NotFoundError:
            continue
