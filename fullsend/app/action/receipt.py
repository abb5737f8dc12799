"""The receipt writer: post what the shipped iteration absorbed, under the job token.

The body is ``fullsend.core.receipt.marker.receipt_body``, the one renderer of the WIRE receipt,
kept beside the parser that reads it back.  The login checks are the pre-flight's
(``fullsend.app.action.preflight.distinct_logins``): a receipt is written only where the receipt
check would honour it.  Every line goes through ``log(level, message)``; no token is ever part
of a message.
"""

from __future__ import annotations

from collections.abc import Callable

from fullsend.app.action.preflight import CheckFailed, PreflightFacts, distinct_logins, redacting
from fullsend.core.model import Comment, Repo
from fullsend.core.receipt.marker import Marker, normalize_ids, receipt_body
from fullsend.errors import ForgeError
from fullsend.ports import Forge

Log = Callable[[str, str], None]


def post_receipt(forge: Forge, facts: PreflightFacts, marker: Marker, log: Log) -> Comment | None:
    """Post the steer receipt for the shipped iteration's ``marker`` under the job token.

    Call once per run, after the post-script, and only when ``core.receipt.should_post_receipt``
    holds.  Best effort: silent when nothing was absorbed or there is no work item; one line
    saying why when receipts are off (no swap, malformed repo, same identity, unresolvable
    logins) or the post fails (the queued run then redoes the work).  Returns the created
    comment (its ``html_url`` is the ``receipt_url`` output) or ``None``; never raises
    ``ForgeError``.  docs/architecture.md "Receipt writer".
    """
    ids = normalize_ids(marker.consumed)
    if not ids or not facts.repository or facts.item_number <= 0:
        return None
    log = redacting(log, facts)
    if not facts.receipt_token:
        log("info", "Not posting a steer receipt: no role token distinct from the job token, so it would prove nothing")
        return None
    if Repo.parse(facts.repository) is None:
        log("warning", f'Not posting the steer receipt: status repo "{facts.repository}" is not in owner/repo form')
        return None
    try:
        distinct_logins(forge)
    except CheckFailed as exc:
        log("info", f"Not posting a steer receipt: {exc}")
        return None
    try:
        comment = forge.post_comment(facts.item_number, receipt_body(ids, marker.head), credential="job")
    except ForgeError as exc:
        if exc.status is None:  # the answer was lost: GitHub may have created the comment anyway
            log("warning", f"Failed to post the steer receipt (no usable answer, so it may exist after all; "
                f"if not, the queued run will redo this work): {exc}")
        else:
            log("warning", f"Failed to post the steer receipt; the queued run will redo this work: {exc}")
        return None
    author = comment.author if comment is not None else ""
    log("done", f"Posted the steer receipt as {author}" if author else "Posted the steer receipt")
    return comment
