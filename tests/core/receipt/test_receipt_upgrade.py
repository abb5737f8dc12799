"""Issue 21 E: a receipt written by one release is read by the next.  The v1 fixtures are the
receipt bodies as release 1 writes them, frozen; every later release must read them as written."""

from __future__ import annotations

from pathlib import Path

from fullsend.core.receipt.marker import Marker, receipt_body, whole_body_receipt

V1 = Path(__file__).resolve().parents[2] / "data" / "receipts" / "v1"


def test_v1_receipt_bodies_are_read_by_this_release():
    assert whole_body_receipt((V1 / "pr.md").read_text(encoding="utf-8")) == Marker((1001, 1002), "aaa111")
    assert whole_body_receipt((V1 / "issue.md").read_text(encoding="utf-8")) == Marker((2001,), "")


def test_this_release_still_writes_the_v1_bodies():
    """A change here is a change of the receipt marker: a major release (docs/versioning.md)."""
    assert receipt_body([1002, 1001], "aaa111") == (V1 / "pr.md").read_text(encoding="utf-8")
    assert receipt_body([2001], "") == (V1 / "issue.md").read_text(encoding="utf-8")
