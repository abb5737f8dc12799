"""The steer receipt: WIRE format, parser, whole-body grammar, selection, neutralising.

Implements docs/architecture.md "Receipt" and "Receipt reader", and the neutralising of
docs/architecture.md "Status comments".  A receipt is a stand-alone comment whose *whole* body is::

    <!-- fullsend:steer consumed=<ids> head=<sha> -->\\n_The run already working on ..._

Every parse defect degrades to "my run is not listed" (do the work), never to "listed".
The writer's pure decisions (what the shipped iteration absorbed, whether to post, the
status-comment copy; docs/architecture.md "Receipt writer") follow the reader.  Pure: standard library
and ``fullsend.core`` only.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from fullsend.core.agent_end import AgentEnd
from fullsend.core.identity import Identity, from_rest, same_identity
from fullsend.core.model import Comment
from fullsend.core.scalars import INT64_MAX, decimal_id
from fullsend.core.text.inert import inert
from fullsend.core.watch.steer import DeliveredSteer

#: The WIRE marker grammar: exact single spaces, lower-case, ``head=`` after ``consumed=``.
MARKER_RE = re.compile(r"<!-- fullsend:steer consumed=([0-9,]*) head=([0-9a-fA-F]*) -->")

#: The WIRE human line, split around the ids joined by ``", "``.
HUMAN_PREFIX = "_The run already working on this item absorbed follow-up run(s) "
HUMAN_SUFFIX = ", so a run queued for those events exits without repeating the work._"
_HUMAN_RE = re.compile(re.escape(HUMAN_PREFIX) + r"([0-9]+(?:, [0-9]+)*)" + re.escape(HUMAN_SUFFIX))

#: Limits: a longer body, or a longer consumed list, is never a receipt.
MAX_RECEIPT_BODY_BYTES = 65_536
MAX_RECEIPT_IDS = 1_000

_HEX_RE = re.compile(r"[0-9a-fA-F]+")
_TRAILING_ASCII_WS = " \t\n\r\f\v"

#: The neutraliser.  Go's ``(?is)<!--\s*fullsend\s*:``: whitespace is an explicit ASCII class
#: (Go's ``\s`` plus ``\v``); case folding is Unicode-aware so ``ſ`` (U+017F) and ``K`` (U+212A)
#: spellings are escaped too.  Both widenings only escape more, never less.
_NEUTRALIZE_RE = re.compile(r"<(?=!--[\t\n\v\f\r ]*fullsend[\t\n\v\f\r ]*:)", re.IGNORECASE)


@dataclass(frozen=True)
class Marker:
    """A parsed marker: ``consumed`` run ids (body order, duplicates kept) and the ``head`` SHA.

    ``head`` is ``""`` for issues.
    """

    consumed: tuple[int, ...] = ()
    head: str = ""

    def lists(self, run_id: int) -> bool:
        """True when ``run_id`` (> 0) is one of the consumed ids (linear scan)."""
        return run_id > 0 and run_id in self.consumed


def normalize_ids(ids: Iterable[int]) -> tuple[int, ...]:
    """Drop ids ``<= 0`` (and non-int64 values), deduplicate, sort ascending."""
    return tuple(sorted({i for i in ids if isinstance(i, int) and 0 < i <= INT64_MAX}))


def clean_head(head: str) -> str:
    """Keep ``head`` only when it is non-empty pure hex, else ``""``."""
    return head if isinstance(head, str) and _HEX_RE.fullmatch(head) else ""


def build_marker(ids: Iterable[int], head: str) -> str:
    """The WIRE marker line for normalised ``ids`` and ``head``, or ``""`` when both are empty.

    A head-only marker is rendered (status-comment copy), a receipt never is.
    """
    norm, sha = normalize_ids(ids), clean_head(head)
    if not norm and not sha:
        return ""
    return f"<!-- fullsend:steer consumed={','.join(str(i) for i in norm)} head={sha} -->"


def _parse_ids(field: str) -> tuple[int, ...]:
    """Comma-separated base-10 ids; empty, overflowing (> int64) and ``<= 0`` fields skipped."""
    out = []
    for part in field.split(","):
        n = decimal_id(part)  # never int() on a 4,301-digit part: it is simply not an id
        if n:
            out.append(n)
    return tuple(out)


def parse_marker(body: str) -> Marker | None:
    """The leftmost WIRE marker anywhere in ``body``, or ``None``.

    This is the parser as a function; whether a comment is a receipt is decided only by
    :func:`whole_body_receipt`.
    """
    m = MARKER_RE.search(body) if isinstance(body, str) else None
    if m is None:
        return None
    return Marker(consumed=_parse_ids(m.group(1)), head=m.group(2))


def human_line(ids: Iterable[int]) -> str:
    """The WIRE human line for normalised ``ids``; ``""`` when none remain."""
    norm = normalize_ids(ids)
    if not norm:
        return ""
    return HUMAN_PREFIX + ", ".join(str(i) for i in norm) + HUMAN_SUFFIX


def receipt_body(ids: Iterable[int], head: str) -> str:
    """The whole WIRE receipt body (marker, ``\\n``, human line); ``""`` with no ids.

    The one renderer of the receipt: the writer (``fullsend.app.action.skip.receipt``) posts exactly
    this, and :func:`whole_body_receipt` reads it back (tested as a property).
    """
    norm = normalize_ids(ids)
    if not norm:
        return ""
    return build_marker(norm, head) + "\n" + human_line(norm)


def whole_body_receipt(body: str) -> Marker | None:
    """The receipt a comment body *is*, or ``None``.

    The body must be exactly: the marker line, one ``\\n`` or ``\\r\\n``, the human line listing
    the same normalised id set, then at most trailing ASCII white space.  Bodies over
    65,536 bytes, lists over 1,000 ids and id-less markers are not receipts.
    """
    found = whole_body_match(body, MARKER_RE)
    return found[1] if found is not None else None


def whole_body_match(body: str, marker_re: re.Pattern[str]) -> tuple[re.Match[str], Marker] | None:
    """The whole-body grammar of a receipt whose marker line is ``marker_re`` (groups 1 and 2:
    the ids and the head): ``(the marker's match, its Marker)``, or ``None`` when ``body`` is
    not exactly the marker line, one line break, the human line listing the same normalised id
    set and trailing ASCII white space, within 65,536 bytes and 1,000 ids.  Shared by the
    unsigned and the signed form (``fullsend.core.receipt.signed``)."""
    if not isinstance(body, str) or len(body.encode("utf-8", "surrogatepass")) > MAX_RECEIPT_BODY_BYTES:
        return None
    first, sep, second = body.rstrip(_TRAILING_ASCII_WS).partition("\n")
    if not sep:
        return None
    first = first[:-1] if first.endswith("\r") else first
    m = marker_re.fullmatch(first)
    h = _HUMAN_RE.fullmatch(second)
    if m is None or h is None:
        return None
    marker = Marker(consumed=_parse_ids(m.group(1)), head=m.group(2))
    if not marker.consumed or len(marker.consumed) > MAX_RECEIPT_IDS:
        return None
    human_ids = _parse_ids(h.group(1).replace(", ", ","))
    if set(normalize_ids(human_ids)) != set(normalize_ids(marker.consumed)):
        return None
    return m, marker


def is_unedited(comment: Comment) -> bool:
    """Whether a comment counts as never edited (docs/rules.md#receipt-lists-my-run).

    Project decision: when GraphQL said (``comment.edited`` is not ``None``), its
    ``lastEditedAt`` decides: ``null`` is unedited, whatever ``updated_at`` says (GitHub bumps
    ``updated_at`` a second past ``created_at`` on comments nobody edited).  Read over REST,
    the strict rule stays: the raw ``updated_at`` equals the raw, non-empty ``created_at``.
    """
    if comment.edited is not None:
        return not comment.edited
    return bool(comment.created_at_raw) and comment.updated_at_raw == comment.created_at_raw


def receipt_listing_run(comments: Sequence[Comment], receipt_login: str, my_run_id: int) -> Comment | None:
    """The first unedited receipt by the receipt login that lists ``my_run_id``, or ``None``.

    Union of every receipt, identities compared as in
    ``fullsend.core.identity`` (case-insensitive, ``[bot]`` optional, a User never matches a Bot),
    edited comments dropped.  Empty login or ``my_run_id <= 0`` ⇒ ``None``.
    """
    if not receipt_login.strip() or my_run_id <= 0:
        return None
    writer = Identity(receipt_login)
    for comment in comments:
        if not is_unedited(comment):
            continue
        if not same_identity(from_rest(comment.author, comment.author_type), writer):
            continue
        marker = whole_body_receipt(comment.body)
        if marker is not None and marker.lists(my_run_id):
            return comment
    return None


def neutralize(text: str) -> str:
    """Escape the ``<`` of every ``<!--\\s*fullsend\\s*:`` opener as ``&lt;``.

    Case-insensitive, whitespace may span lines; idempotent; other HTML comments untouched.
    Applied to agent-written text the runner posts.
    """
    return _NEUTRALIZE_RE.sub("&lt;", text) if text else text


# --- writer decisions (docs/architecture.md "Receipt writer") ---------------------------------


def should_post_receipt(
    *,
    run_failed: bool,
    cancelled: bool,
    skipped: bool,
    post_script_withheld: bool,
    transcript_error: bool,
    agent_end: AgentEnd | None = None,
) -> bool:
    """True only for an outright success whose output was published.

    Any run error (agent, validation, timeout, post-script), cancellation, a pre-script skip, a
    withheld post-script or an agent-reported transcript error ⇒ no receipt; and so does any
    end of the shipped iteration other than ``AgentEnd.SUCCESS``, including none.
    """
    if agent_end is not AgentEnd.SUCCESS:
        return False
    return not (run_failed or cancelled or skipped or post_script_withheld or transcript_error)


def marker_from(delivered: Sequence[DeliveredSteer], acked: Iterable[int], head: str) -> Marker:
    """The consumed set of one iteration: run ids of every delivered batch whose message id was
    acknowledged, normalised, with the settled ``head``.
    """
    acked_ids = set(acked)
    ids = [rid for batch in delivered if batch.message_id in acked_ids for rid in batch.run_ids]
    return Marker(consumed=normalize_ids(ids), head=clean_head(head))


def status_marker_copy(status: str, marker: Marker | None) -> str:
    """The informational marker for the terminal status comment: kept only for ``success``
    (may be head-only); ``""`` otherwise.  The skip check never honours it.
    """
    if status != "success" or marker is None:
        return ""
    return build_marker(marker.consumed, marker.head)


def status_commit_shas(start_sha: str, copy: Marker | None) -> tuple[str, str]:
    """``(shown7, started_on7)`` for the status comment's commit line.

    When the copy lists ≥ 1 run and its head differs from the start SHA the line shows the
    settled head and ``started_on7`` is the start SHA; otherwise ``(start7, "")``.
    """
    start7 = start_sha[:7]
    if copy is not None and normalize_ids(copy.consumed) and copy.head and copy.head.lower() != start_sha.lower():
        return copy.head[:7], start7
    return start7, ""


MAX_DETAIL_RUNES = 200


def sanitize_detail(detail: str) -> str:
    """Status-comment detail: control characters → space, at most 200 code points + ``…``,
    then made inert (``fullsend.core.text.inert``: no HTML, link, mention or line break) and
    every ``[`` → ``&#91;``.
    """
    text = "".join(" " if unicodedata.category(ch) == "Cc" else ch for ch in detail)
    if len(text) > MAX_DETAIL_RUNES:
        text = text[:MAX_DETAIL_RUNES] + "…"
    return inert(text).replace("[", "&#91;")


def clock_label(at: datetime) -> str:
    """``h:mm AM/PM UTC`` of an aware instant, e.g. ``8:30 AM UTC``."""
    utc = at.astimezone(UTC)
    return f"{utc.hour % 12 or 12}:{utc.minute:02d} {'AM' if utc.hour < 12 else 'PM'} UTC"
