"""The signed receipt: its WIRE form, its canonical bytes and the audience that binds them.

Implements docs/architecture.md "Signed receipts" and docs/rules.md#receipt-lists-my-run ("Signed
form").  A signed receipt is a stand-alone comment whose *whole* body is::

    <!-- fullsend:steer-signed consumed=<ids> head=<sha> run=<writer run id> proof=<jwt> -->\\n<human line>

The human line is the unsigned receipt's (``fullsend.core.receipt.marker.human_line``).  The
marker is not the unsigned one's: a reader that knows only ``<!-- fullsend:steer consumed=``
(fullsend's, or an older steer-action) finds no receipt in it and its queued run works.  The
``proof`` is GitHub's OIDC token, requested by the writer run with the audience
:func:`receipt_audience`: ``fullsend-receipt:`` and the SHA-256 of :func:`canonical_bytes`, which
name the repository, the item, the writer run, the ids and the head, so the proof fits this one
receipt and no other.  Pure: standard library and ``fullsend.core`` only.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fullsend.core.identity import Identity, from_rest, same_identity
from fullsend.core.model import Comment
from fullsend.core.receipt.marker import (
    Marker,
    clean_head,
    human_line,
    is_unedited,
    normalize_ids,
    whole_body_match,
    whole_body_receipt,
)
from fullsend.core.scalars import decimal_id

#: The WIRE signed marker: exact single spaces, lower-case keys in this order; the proof is a
#: compact JWS (base64url parts joined by dots).
SIGNED_MARKER_RE = re.compile(
    r"<!-- fullsend:steer-signed consumed=([0-9,]*) head=([0-9a-fA-F]*) run=([0-9]+) "
    r"proof=([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+) -->"
)
#: The audience's WIRE prefix; the rest is the lower-case hex SHA-256 of the canonical bytes.
AUDIENCE_PREFIX = "fullsend-receipt:"
#: The first line of the canonical bytes (their version).
CANONICAL_VERSION = "fullsend-receipt/1"


@dataclass(frozen=True)
class SignedReceipt:
    """A parsed signed receipt: what it claims (``marker``), the ``writer_run_id`` that wrote it
    and the ``proof`` (the OIDC token, compact form)."""

    marker: Marker
    writer_run_id: int
    proof: str

    def lists(self, run_id: int) -> bool:
        """True when ``run_id`` (> 0) is one of the consumed ids."""
        return self.marker.lists(run_id)


def canonical_bytes(repository: str, item: int, writer_run_id: int, ids: Iterable[int], head: str) -> bytes:
    """The bytes a receipt's proof binds, UTF-8 (all ASCII), each line ending in ``\\n``::

        fullsend-receipt/1
        repository=<owner/repo, lower-case>
        item=<issue or pull request number>
        run=<writer run id>
        consumed=<normalised ids joined by ",">
        head=<head as written, "" for an issue>

    ``ids`` are normalised (``normalize_ids``) and ``head`` cleaned (``clean_head``) first, as the
    writer writes them, so the reader rebuilds the same bytes from the marker it parsed.
    """
    lines = (
        CANONICAL_VERSION,
        f"repository={repository.lower()}",
        f"item={item}",
        f"run={writer_run_id}",
        f"consumed={','.join(str(i) for i in normalize_ids(ids))}",
        f"head={clean_head(head)}",
    )
    return "".join(line + "\n" for line in lines).encode("ascii", "replace")


def receipt_audience(repository: str, item: int, writer_run_id: int, ids: Iterable[int], head: str) -> str:
    """``fullsend-receipt:`` + the lower-case hex SHA-256 of :func:`canonical_bytes` (WIRE)."""
    digest = hashlib.sha256(canonical_bytes(repository, item, writer_run_id, ids, head)).hexdigest()
    return AUDIENCE_PREFIX + digest


def signed_marker(ids: Iterable[int], head: str, writer_run_id: int, proof: str) -> str:
    """The WIRE signed marker line; ``""`` with no ids, no writer run or a proof of another shape."""
    norm = normalize_ids(ids)
    line = (
        f"<!-- fullsend:steer-signed consumed={','.join(str(i) for i in norm)} head={clean_head(head)} "
        f"run={writer_run_id} proof={proof} -->"
    )
    return line if norm and writer_run_id > 0 and SIGNED_MARKER_RE.fullmatch(line) else ""


def signed_receipt_body(ids: Iterable[int], head: str, writer_run_id: int, proof: str) -> str:
    """The whole WIRE signed receipt (marker, ``\\n``, human line); ``""`` when the marker is.

    The one renderer: the writer posts exactly this, :func:`whole_body_signed_receipt` reads it back.
    """
    marker = signed_marker(ids, head, writer_run_id, proof)
    return marker + "\n" + human_line(ids) if marker else ""


def whole_body_signed_receipt(body: str) -> SignedReceipt | None:
    """The signed receipt a comment body *is*, or ``None``.

    The grammar of ``whole_body_receipt`` (``whole_body_match``) with the signed marker line,
    and a writer run id in ``1 … INT64_MAX``.  Whether the proof holds is
    ``fullsend.core.receipt.proof.verify``'s to say.
    """
    found = whole_body_match(body, SIGNED_MARKER_RE)
    if found is None:
        return None
    match, marker = found
    run_id = decimal_id(match.group(3))
    return SignedReceipt(marker, run_id, match.group(4)) if run_id > 0 else None


def any_receipt(body: str) -> Marker | SignedReceipt | None:
    """The receipt a comment body is, signed (:class:`SignedReceipt`) or unsigned (``Marker``), or ``None``."""
    return whole_body_signed_receipt(body) or whole_body_receipt(body)


def receipt_claim(body: str) -> Marker | None:
    """What a receipt body claims (its ids and head), signed or unsigned; ``None`` when the body
    is no receipt.  Says nothing of whether it counts."""
    found = any_receipt(body)
    return found.marker if isinstance(found, SignedReceipt) else found


def receipts_listing_run(
    comments: Sequence[Comment], receipt_login: str, my_run_id: int
) -> list[tuple[Comment, Marker | SignedReceipt]]:
    """Every unedited comment by ``receipt_login`` whose whole body is a receipt of either form
    listing ``my_run_id``, oldest first, with what it is; ``[]`` for an empty login or a run id
    ``<= 0``.  Whether a signed one's proof holds, and whether an unsigned one may count, is the
    reader's to decide (docs/rules.md "Receipt proof", #receipt-unsigned)."""
    if not receipt_login.strip() or my_run_id <= 0:
        return []
    writer = Identity(receipt_login)
    found: list[tuple[Comment, Marker | SignedReceipt]] = []
    for comment in comments:
        if not is_unedited(comment) or not same_identity(from_rest(comment.author, comment.author_type), writer):
            continue
        receipt = any_receipt(comment.body)
        if receipt is not None and receipt.lists(my_run_id):
            found.append((comment, receipt))
    return found
