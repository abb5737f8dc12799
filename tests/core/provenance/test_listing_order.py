"""The one de-duplication of the run listing (``order_listing``): a run read twice because the listing shifted between page reads is kept once,
as its fresher copy — the newer ``updated_at``, and on a tie or an unknown one the later read."""

from __future__ import annotations

import pytest

from fullsend.core.model import WorkflowRun
from fullsend.core.provenance.verdicts import order_listing
from fullsend.core.scalars import parse_time

CREATED = "2026-09-03T10:05:00Z"


def run(run_id: int, status: str, updated_at: str | None, created_at: str = CREATED) -> WorkflowRun:
    updated = parse_time(updated_at) if updated_at is not None else None
    return WorkflowRun(id=run_id, status=status, created_at=parse_time(created_at), updated_at=updated)


@pytest.mark.parametrize(
    ("first", "second", "kept"),
    [
        # page 1 saw it queued, page 2 (read later) saw it running: the newer updated_at wins
        (("queued", "2026-09-03T10:05:00Z"), ("in_progress", "2026-09-03T10:05:07Z"), "in_progress"),
        # the earlier read somehow holds the newer record: updated_at still decides
        (("completed", "2026-09-03T10:06:00Z"), ("in_progress", "2026-09-03T10:05:07Z"), "completed"),
        # one-second resolution: a tie goes to the later read
        (("queued", "2026-09-03T10:05:00Z"), ("in_progress", "2026-09-03T10:05:00Z"), "in_progress"),
        # an unknown updated_at cannot be compared: the later read wins
        (("queued", None), ("in_progress", "2026-09-03T10:05:07Z"), "in_progress"),
        (("queued", "2026-09-03T10:06:00Z"), ("in_progress", None), "in_progress"),
    ],
    ids=["newer-later", "newer-earlier", "tie-later-read", "unknown-first", "unknown-second"],
)
def test_a_run_read_twice_keeps_its_fresher_copy(first, second, kept) -> None:
    listing = order_listing([run(7, *first), run(8, "queued", None), run(7, *second)])
    assert [(r.id, r.status) for r in listing] == [(7, kept), (8, "queued")]


def test_the_listing_is_oldest_first_with_unknown_created_at_first_and_ties_by_id() -> None:
    listing = order_listing(
        [
            run(30, "queued", None, "2026-09-03T10:07:00Z"),
            run(20, "queued", None, "2026-09-03T10:06:00Z"),
            run(10, "queued", None, "2026-09-03T10:06:00Z"),
            run(40, "queued", None, "not a time"),
        ]
    )
    assert [r.id for r in listing] == [40, 10, 20, 30]


def test_the_input_is_not_changed() -> None:
    reads = [run(7, "queued", None), run(7, "in_progress", None)]
    order_listing(reads)
    assert [r.status for r in reads] == ["queued", "in_progress"]
