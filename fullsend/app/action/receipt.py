"""The receipt writer: post what the shipped iteration absorbed, under the job token.

The body is ``fullsend.core.receipt.marker.receipt_body``, the one renderer of the WIRE receipt,
kept beside the parser that reads it back.  The login checks are the pre-flight's
(``fullsend.app.action.preflight.distinct_logins``): a receipt is written only where the receipt
check would honour it.  Every line goes through ``log(level, message)``; no token is ever part
of a message.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from fullsend.app.action.preflight import CheckFailed, PreflightFacts, distinct_logins, redacting
from fullsend.core.model import Comment, Repo
from fullsend.core.receipt.marker import Marker, normalize_ids, receipt_body
from fullsend.core.scalars import format_time
from fullsend.errors import ForgeError, MalformedResponse, RateLimited
from fullsend.ports import Forge, Log


class PostState(Enum):
    """What became of the receipt's POST (docs/rules.md#receipt-unknown)."""

    POSTED = "posted"  # GitHub created it and described it
    POSTED_URL_UNKNOWN = "posted-url-unknown"  # created; the answer, a JSON object, did not describe it
    MAYBE_POSTED = "maybe-posted"  # no positive proof either way: the receipt may exist
    NOT_POSTED = "not-posted"  # nothing was posted (receipts off, a refusal, a rate limit given up on)


@dataclass(frozen=True)
class ReceiptPost:
    """``post_receipt``'s result: the ``state`` and, when ``POSTED``, the created comment."""

    state: PostState
    comment: Comment | None = None

    @property
    def exists(self) -> bool:
        """True when GitHub is known to have created the receipt."""
        return self.state in (PostState.POSTED, PostState.POSTED_URL_UNKNOWN)


NOT_POSTED = ReceiptPost(PostState.NOT_POSTED)


#: How long the receipt writer waits out a rate limit before it gives up (best effort;
#: docs/rules.md#rate-limited).
RECEIPT_MAX_WAIT_S = 120.0


def post_receipt(forge: Forge, facts: PreflightFacts, marker: Marker, log: Log) -> ReceiptPost:
    """Post the steer receipt for the shipped iteration's ``marker`` under the job token.

    Call once per run, after the post-script, and only when ``core.receipt.should_post_receipt``
    holds.  Best effort: silent when nothing was absorbed or there is no work item; one line
    saying why when receipts are off (no swap, malformed repo, same identity, unresolvable
    logins) or the post fails.  A rate limit is waited out for at most
    :data:`RECEIPT_MAX_WAIT_S`.  Returns a ``ReceiptPost``: ``POSTED`` with the created comment
    (its ``html_url`` is the ``receipt_url`` output), ``POSTED_URL_UNKNOWN`` when GitHub's answer,
    a JSON object, did not describe it, ``MAYBE_POSTED`` when the POST got no positive proof either
    way (no answer, a cut-off one, a 5xx, a 2xx that is not a JSON object: the receipt may exist),
    or ``NOT_POSTED``; never raises ``ForgeError``.
    docs/architecture.md "Receipt writer".
    """
    ids = normalize_ids(marker.consumed)
    if not ids or not facts.repository or facts.item_number <= 0:
        return NOT_POSTED
    log = redacting(log, facts)
    forge = forge.bounded(max_wait_s=RECEIPT_MAX_WAIT_S)
    if not facts.receipt_token:
        log("info", "Not posting a steer receipt: no role token distinct from the job token, so it would prove nothing")
        return NOT_POSTED
    if Repo.parse(facts.repository) is None:
        log("warning", f'Not posting the steer receipt: status repo "{facts.repository}" is not in owner/repo form')
        return NOT_POSTED
    try:
        distinct_logins(forge)
    except CheckFailed as exc:
        log("info", f"Not posting a steer receipt: {exc}")
        return NOT_POSTED
    try:
        comment = forge.post_comment(facts.item_number, receipt_body(ids, marker.head), credential="job")
    except ForgeError as exc:
        return _post_failed(exc, log)
    author = comment.author if comment is not None else ""
    log("done", f"Posted the steer receipt as {author}" if author else "Posted the steer receipt")
    return ReceiptPost(PostState.POSTED, comment) if comment is not None else ReceiptPost(PostState.POSTED_URL_UNKNOWN)


def _post_failed(exc: ForgeError, log: Log) -> ReceiptPost:
    """What a failed receipt POST means (docs/rules.md#receipt-unknown): posted with its URL unknown
    (a 2xx JSON object that does not describe the comment), given up on a rate limit, maybe posted
    (no answer, a cut-off one, a 5xx, or a 2xx that is not a JSON object: a POST is not idempotent and
    GitHub may have created the comment), or not posted (any other refusal)."""
    if isinstance(exc, MalformedResponse) and exc.status is not None and 200 <= exc.status < 300 and exc.field:
        log(
            "done",
            f"Posted the steer receipt; GitHub's answer did not describe the comment ({exc.field}: "
            f"{exc.problem}), so its URL is unknown",
        )
        return ReceiptPost(PostState.POSTED_URL_UNKNOWN)
    if isinstance(exc, RateLimited):
        log(
            "warning",
            f"Gave up posting the steer receipt: GitHub's rate limit for the job token holds until "
            f"{format_time(exc.until)}, longer than the {RECEIPT_MAX_WAIT_S:g} s the writer waits; the queued run "
            "will redo this work",
        )
    elif _maybe_posted(exc):
        log(
            "warning",
            f"Failed to post the steer receipt ({_why_unknown(exc)}, so it may exist after all; "
            f"if not, the queued run will redo this work): {exc}",
        )
        return ReceiptPost(PostState.MAYBE_POSTED)
    else:
        log("warning", f"Failed to post the steer receipt; the queued run will redo this work: {exc}")
    return NOT_POSTED


def _maybe_posted(exc: ForgeError) -> bool:
    """True when the POST may have created the comment: no status, a 5xx, or a 2xx body that is not an object."""
    if exc.status is None or exc.status >= 500:
        return True
    return isinstance(exc, MalformedResponse) and 200 <= exc.status < 300


def _why_unknown(exc: ForgeError) -> str:
    """The words for the fate the writer cannot know, naming the value that surprised it."""
    if exc.status is None:
        return "no usable answer"
    if exc.status >= 500:
        return f"GitHub answered {exc.status}, which does not say whether it created the comment"
    return f"GitHub answered {exc.status} with a body that is not a JSON object"
