"""Issue 21 E: a receipt written by one release is read by the next.  The v1 fixtures are the
receipt bodies as release 1 writes them, frozen; every later release must read them as written.
Issue 45: release 1 writes the signed form (``signed-pr.md``, signed with the simulator's key);
the unsigned bodies of the first drafts (``pr.md``, ``issue.md``) are read under
``allow_unsigned_receipts`` (docs/versioning.md)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from fullsend.core.model import ReferencedWorkflow
from fullsend.core.receipt.marker import Marker, receipt_body, whole_body_receipt
from fullsend.core.receipt.proof.rs256 import parse_jwks
from fullsend.core.receipt.proof.verify import ProofContext, shim_workflow_refs, verify_proof
from fullsend.core.receipt.signed import signed_receipt_body, whole_body_signed_receipt
from fullsend.simulator.issuer import CURRENT_KEY

V1 = Path(__file__).resolve().parents[2] / "data" / "receipts" / "v1"


def test_v1_receipt_bodies_are_read_by_this_release():
    assert whole_body_receipt((V1 / "pr.md").read_text(encoding="utf-8")) == Marker((1001, 1002), "aaa111")
    assert whole_body_receipt((V1 / "issue.md").read_text(encoding="utf-8")) == Marker((2001,), "")


def test_this_release_still_writes_the_v1_bodies():
    """A change here is a change of the receipt marker: a major release (docs/versioning.md)."""
    assert receipt_body([1002, 1001], "aaa111") == (V1 / "pr.md").read_text(encoding="utf-8")
    assert receipt_body([2001], "") == (V1 / "issue.md").read_text(encoding="utf-8")


# ---- issue 45: the signed form, and the unsigned one under its input ------------------------------
SIGNED_WRITER, SIGNED_POSTED = 33740015232, datetime(2026, 9, 3, 10, 0, 2, tzinfo=UTC)


def _context() -> ProofContext:
    """The reader the frozen signed receipt was written for: org/repo#7, a queued run of the shim at
    main calling the dispatch at v1, checking against github.com's issuer with the simulator's key."""
    return ProofContext(
        issuer="https://token.actions.githubusercontent.com",
        repository="org/repo",
        item=7,
        reader_run_id=1001,
        workflow_refs=shim_workflow_refs("org/repo", ".github/workflows/fullsend.yml", ["refs/heads/main"]),
        chain=(ReferencedWorkflow("fullsend-ai/steer-action/.github/workflows/dispatch.yml@v1", "refs/tags/v1"),),
        keys=parse_jwks({"keys": [CURRENT_KEY.jwk()]}),
    )


def test_the_frozen_signed_receipt_is_read_and_its_proof_holds():
    body = (V1 / "signed-pr.md").read_text(encoding="utf-8")
    found = whole_body_signed_receipt(body)
    assert found is not None and (found.marker, found.writer_run_id) == (Marker((1001, 1002), "aaa111"), SIGNED_WRITER)
    assert verify_proof(found, SIGNED_POSTED, _context()).ok
    assert signed_receipt_body([1002, 1001], "aaa111", SIGNED_WRITER, found.proof) == body  # still written so


def test_the_v1_unsigned_receipts_are_honoured_only_under_allow_unsigned_receipts(tmp_path):
    """docs/versioning.md: a release reads what an earlier one wrote; the unsigned form now only
    through the explicit input (docs/rules.md#receipt-unsigned)."""
    from fullsend.app.action.skip.facts import PreflightFacts
    from fullsend.app.action.skip.receipt import check_receipt
    from tests.core.receipt.receipt_forge import FakeForge, LogSink, comment

    body = (V1 / "pr.md").read_text(encoding="utf-8")
    base = dict(
        stage="review",
        run_id_raw="1001",
        run_attempt="1",
        repository="org/repo",
        item_number=7,
        job_token="ghs_job",
        role_token="ghs_role",
        minted=True,
        fullsend_dir=str(tmp_path),
        proof_reads=False,
    )
    log = LogSink()
    assert check_receipt(FakeForge(comments=[comment(body)]), PreflightFacts(**base), log) is None
    assert "[receipt-unsigned]" in log.text
    allowed = PreflightFacts(**base, allow_unsigned_receipts=True)
    assert check_receipt(FakeForge(comments=[comment(body)]), allowed, LogSink()) is not None
