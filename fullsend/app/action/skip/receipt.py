"""The receipt, reader and writer: the one place that reads receipts for the pre-flight, decides
whether this run may post one, posts it under the job token and records what became of it
(docs/architecture.md "Receipt").

The WIRE format is ``fullsend.core.receipt.marker``'s (``receipt_body`` renders it, beside the
parser that reads it back); the login checks (:func:`distinct_logins`) are shared, so a receipt is
written only where the reader would honour it.  The reader runs in the queued run's fast skip:
this module imports the standard library, core and the ports only (docs/architecture.md "Fast
skip").  Every line goes through ``log(level, message)``; no token is ever part of a message.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from fullsend.app.action.outputs import ActionOutcome
from fullsend.app.action.providers import providers_refusal
from fullsend.app.action.skip.facts import CheckFailed, PreflightFacts, redacting
from fullsend.app.action.skip.receipt_proof import ProofNotHere, ProofReads
from fullsend.app.action.skip.receipt_sign import Signer, body_to_post
from fullsend.core.identity import Identity, same_identity
from fullsend.core.model import Comment, Repo
from fullsend.core.receipt.marker import (
    Marker,
    normalize_ids,
    should_post_receipt,
)
from fullsend.core.receipt.post import NOT_POSTED, PostState, ReceiptPost
from fullsend.core.receipt.proof.verify import RULE_UNSIGNED
from fullsend.core.receipt.signed import SignedReceipt, receipt_claim, receipts_listing_run
from fullsend.core.receipt.skips import RULE_RECEIPT, Skip, is_manual_rerun
from fullsend.core.report.figures import absorbing_run, stands_on
from fullsend.core.scalars import format_time
from fullsend.errors import ForgeError, MalformedResponse, RateLimited

#: What ``receipts_listing_run`` finds: each receipt comment listing this run, with its form.
Listing = list[tuple[Comment, "Marker | SignedReceipt"]]

if TYPE_CHECKING:
    from fullsend.app.action.finish import RunOutcome
    from fullsend.app.timeline import Timeline
    from fullsend.ports import Clock, Credential, Forge, Log  # the writer's records; never loaded on the fast skip


# ---- the reader ----------------------------------------------------------------------------------
def check_receipt(forge: Forge, facts: PreflightFacts, log: Log) -> Skip | None:
    """``Skip(receipt-lists-my-run)`` when an unedited job-token receipt lists this run.

    Silent when steering is off, outside Actions, or without a work item, receipt token or
    role token; INFO on a manual re-run or a provider refusal; WARN on any error.
    docs/architecture.md "Receipt reader".
    """
    if not (facts.steering_enabled and facts.in_actions):
        return None
    if not facts.repository or facts.item_number <= 0 or not facts.receipt_token or not facts.role_token:
        return None
    if is_manual_rerun(facts.run_attempt):
        log(
            "info",
            f"Not skipping on a steer receipt: run attempt {facts.run_attempt} is a manual re-run "
            "[receipt-lists-my-run]",
        )
        return None
    refusal = providers_refusal(facts.fullsend_dir, facts.workspace)
    if refusal is not None:
        log("info", f"Not skipping on a steer receipt: {refusal} [receipt-lists-my-run]")
        return None
    if facts.run_id <= 0:
        return None
    proof = ProofReads(forge, facts, log) if facts.proof_reads else None  # beside the receipt query
    try:
        listing, comments, role_login = _find_receipts(forge, facts)
        receipt = _honoured(listing, facts, proof, log)
    except (ForgeError, CheckFailed) as exc:
        log("warning", f"Could not check whether this update was already handled: {exc} [receipt-lists-my-run]")
        return None
    if receipt is None:
        return None
    comment, found = receipt
    return Skip(
        RULE_RECEIPT, _why(comment, found, facts.run_id), comment.html_url, _stands_on(comment, comments, role_login)
    )


def _why(comment: Comment, found: Marker | SignedReceipt, run_id: int) -> str:
    """The skip's reason: which receipt lists the run, and why it counts (its proof, or the input)."""
    if isinstance(found, SignedReceipt):
        return f"receipt comment {comment.id} lists run {run_id}; signed by run {found.writer_run_id}, its proof holds"
    return f"unsigned receipt comment {comment.id} lists run {run_id}, counted as allow_unsigned_receipts asks"


def _honoured(
    listing: Listing, facts: PreflightFacts, proof: ProofReads | None, log: Log
) -> tuple[Comment, Marker | SignedReceipt] | None:
    """The first receipt of ``listing`` that counts, with its form: a signed one whose proof
    holds, or an unsigned one where ``allow_unsigned_receipts`` says so; each other one says why in
    one line (docs/rules.md "Receipt proof").  Raises ``ProofNotHere`` for a signed one a reader
    without proof reads cannot check (a replay), ``CheckFailed`` when this run's record cannot be read."""
    for comment, found in listing:
        if isinstance(found, SignedReceipt):
            if proof is None:
                raise ProofNotHere
            verdict = proof.verdict(found, comment)
            if verdict.ok:
                return comment, found
            log("info", f"Not skipping on the steer receipt (comment {comment.id}): {verdict.why} [{verdict.rule_id}]")
        elif facts.allow_unsigned_receipts:
            return comment, found
        else:
            log(
                "info",
                f"Not skipping on an unsigned steer receipt (comment {comment.id}): any workflow of this "
                "repository can post as the job token's login, so only a signed receipt proves its writer; "
                f"allow_unsigned_receipts is not set [{RULE_UNSIGNED}]",
            )
    return None


def _stands_on(receipt: Comment, comments: list[Comment], role_login: str) -> str:
    """Whose work the skip stands on, from the absorbing run's terminal status under the role
    login (the one linking the receipt, else the last written before it); "" when unknown.
    Informational only."""
    marker = receipt_claim(receipt.body)
    located = (
        absorbing_run(comments, marker, role_login, receipt.created_at, receipt.html_url)
        if marker is not None
        else None
    )
    return stands_on(*located) if located is not None else ""


def _find_receipts(forge: Forge, facts: PreflightFacts) -> tuple[Listing, list[Comment], str]:
    """The receipt check's reads: repo form, both logins, identity difference, comments, and
    every receipt listing this run (``receipts_listing_run``: the union, both forms).

    GraphQL first: one request reads the job token's login and every comment with
    ``lastEditedAt``, a second resolves the role login.  Where GraphQL cannot answer, REST as
    before, with the strict edited rule (docs/rules.md#receipt-lists-my-run).
    """
    if Repo.parse(facts.repository) is None:
        raise CheckFailed(f'status repo "{facts.repository}" is not in owner/repo form')
    try:
        receipt_login, comments = forge.receipt_view(facts.item_number)
    except ForgeError:
        pass  # GraphQL unavailable or malformed: REST below, where only an equal updated_at counts
    else:
        _, role_login = distinct_logins(forge, receipt_login)
        return receipts_listing_run(comments, receipt_login, facts.run_id), comments, role_login
    receipt_login, role_login = distinct_logins(forge)
    try:
        comments = forge.list_issue_comments(facts.item_number, credential="job")
    except ForgeError as exc:
        raise CheckFailed(f"listing comments on {facts.repository}#{facts.item_number}: {exc}") from None
    return receipts_listing_run(comments, receipt_login, facts.run_id), comments, role_login


def _login(forge: Forge, credential: Credential, what: str) -> str:
    try:
        login = forge.viewer_login(credential)
    except ForgeError as exc:
        raise CheckFailed(f"resolving the {what} login: {exc}") from None
    if not login.strip():
        raise CheckFailed(f"resolving the {what} login: the token resolved to an empty login")
    return login


def distinct_logins(forge: Forge, receipt_login: str = "") -> tuple[str, str]:
    """``(receipt_login, role_login)``: the job token's login (resolved first, unless the caller
    read it already), then the role token's.  Raises ``CheckFailed`` when either cannot be
    resolved or both are the same identity (docs/architecture.md "Receipt"); the reader and the
    writer both need them apart.
    """
    receipt_login = receipt_login.strip() or _login(forge, "job", "receipt")
    role_login = _login(forge, "role", "role")
    if same_identity(Identity(receipt_login), Identity(role_login)):
        raise CheckFailed(
            f"the job token and the role token both act as {receipt_login}, "
            "so a receipt could have been written by the agent's own identity"
        )
    return receipt_login, role_login


# ---- the writer ----------------------------------------------------------------------------------
def receipt_allowed(
    outcome: RunOutcome, *, token_out_of_reach: bool, cancelled: bool, skipped: bool, restricted: bool
) -> bool:
    """Whether this run may post a receipt: outright success that absorbed ≥ 1 acknowledged run
    (docs/architecture.md "Receipt writer"), the shipped iteration's agent end ``AgentEnd.SUCCESS``,
    not cancelled, not skipped, not a restricted run (a fork pull request, Dependabot), and the job
    token out of the agent's reach (docs/rules.md#token-in-reach)."""
    return (
        bool(outcome.marker.consumed)
        and token_out_of_reach
        and not restricted
        and should_post_receipt(
            run_failed=outcome.outcome is not ActionOutcome.SUCCEEDED,
            cancelled=cancelled,
            skipped=skipped,
            post_script_withheld=False,
            transcript_error=False,
            agent_end=outcome.agent_end,
        )
    )


#: How long the receipt writer waits out a rate limit before it gives up (best effort;
#: docs/rules.md#rate-limited).
RECEIPT_MAX_WAIT_S = 120.0


def post_receipt(
    forge: Forge, facts: PreflightFacts, marker: Marker, log: Log, sign: Signer | None = None
) -> ReceiptPost:
    """Post the steer receipt for the shipped iteration's ``marker`` under the job token.

    Call once per run, after the post-script, and only when ``core.receipt.should_post_receipt``
    holds.  ``sign`` gives this job's OIDC token for the receipt's audience (``None``: the job
    cannot sign); the body is ``receipt_sign.body_to_post``'s, signed or, where allowed, unsigned.
    Best effort: silent when nothing was absorbed or there is no work item; one line
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
    body = body_to_post(facts, ids, marker.head, sign, log)
    if body is None:
        return NOT_POSTED
    try:
        comment = forge.post_comment(facts.item_number, body, credential="job")
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


def record_receipt(
    forge: Forge,
    facts: PreflightFacts,
    outcome: RunOutcome,
    item_url: str,
    timeline: Timeline,
    clock: Clock,
    log: Log,
    sign: Signer | None = None,
) -> RunOutcome:
    """Post the receipt for ``outcome.marker`` (job token, best effort); ``outcome`` carrying the
    ``ReceiptPost`` as it came back.  ``sign``: as ``post_receipt``'s.

    ``item_url`` is the work item's web URL (``<server>/<owner>/<repo>/issues/<n>``), used for
    ``receipt_url`` when the API reported no ``html_url``.  ``receipt_url`` stays empty when
    GitHub's answer did not say where ("posted, URL unknown", which the summary says too).  Adds a
    ``receipt`` timeline row, or a ``notice`` row when nothing was posted or the post got no
    answer (``receipt_unknown``; docs/architecture.md "Receipt writer").  Never raises ``ForgeError``.
    """
    post = post_receipt(forge, facts, outcome.marker, log, sign)
    outcome = replace(outcome, receipt=post)
    if post.state is PostState.MAYBE_POSTED:
        timeline.add(
            clock.now(),
            "notice",
            "the receipt's post got no answer: if it was created, the queued "
            "runs it names skip; if not, they redo the absorbed work",
        )
        return outcome
    if not post.exists:
        timeline.add(clock.now(), "notice", "the receipt was not posted; the queued run will redo the absorbed work")
        return outcome
    comment = post.comment
    url = (
        ""
        if comment is None
        else (comment.html_url or (f"{item_url}#issuecomment-{comment.id}" if comment.id > 0 else ""))
    )
    outcome = replace(outcome, receipt_url=url)
    unknown = "" if url else "; GitHub's answer did not say where (URL unknown)"
    timeline.add(clock.now(), "receipt", f"receipt posted listing run(s) {outcome.consumed_run_ids}{unknown}")
    return outcome
