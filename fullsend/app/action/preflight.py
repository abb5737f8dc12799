"""Pre-flight: gather the facts through the ``Forge`` port and let ``core`` decide.

Implements docs/architecture.md "Pre-flight skips" (:func:`run_preflight`: the receipt check, then
the head-reviewed check, called once before any comment or script), the receipt check with its
guards and the head-reviewed reads (docs/architecture.md "Receipt reader").  The receipt writer,
its other half, is ``fullsend.app.action.receipt``; it shares :func:`distinct_logins`.
Both checks fail OPEN: every error logs one line naming why and the run does the work.
Every line goes through ``log(level, message)`` (levels ``info``, ``warning``, ``done``); no
token is ever part of a message.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from fullsend.app.action.providers import providers_refusal
from fullsend.core.identity import Identity, same_identity
from fullsend.core.model import Comment, Repo
from fullsend.core.receipt.marker import receipt_listing_run
from fullsend.core.receipt.skips import (
    RULE_RECEIPT,
    HeadReviewFacts,
    NotSkipped,
    Skip,
    head_review_decision,
    head_review_precheck,
    is_manual_rerun,
    parse_run_id,
    review_bot_logins,
    transition_kind,
)
from fullsend.core.tokens.policy import receipt_token
from fullsend.errors import ForgeError, NotFoundError
from fullsend.ports import Credential, Forge, Log


class CheckFailed(Exception):
    """A pre-flight check could not decide; the message names why (never a token)."""


@dataclass(frozen=True)
class PreflightFacts:
    """Everything the pre-flight reads besides the forge.

    ``run_id_raw`` / ``run_attempt`` are ``GITHUB_RUN_ID`` / ``GITHUB_RUN_ATTEMPT`` as given
    (``""`` when unset); ``repository`` is ``GITHUB_REPOSITORY`` (the work item's repo) and
    ``item_number`` the issue or PR number.  ``minted`` follows ``core.tokens.counts_as_minted``.
    ``fullsend_dir`` is the path holding ``providers/`` (``""`` = unknown); ``workspace`` is
    ``GITHUB_WORKSPACE``, the tree provider definitions must lie in (``""``: not checked).  ``event_payload``
    is the parsed ``GITHUB_EVENT_PATH`` JSON (``None`` when missing or unreadable).
    ``review_bot_logins`` is the input (empty = default); ``in_actions`` is
    ``GITHUB_ACTIONS == "true"``; ``steering_enabled`` is the effective ``steer.enabled``.
    """

    stage: str
    run_id_raw: str
    run_attempt: str
    repository: str
    item_number: int
    job_token: str = field(repr=False)
    role_token: str = field(repr=False)
    minted: bool
    fullsend_dir: str
    event_name: str = ""
    event_payload: Mapping[str, Any] | None = None
    normalized_kind: str = ""
    review_bot_logins: tuple[str, ...] = ()
    steering_enabled: bool = True
    in_actions: bool = True
    workspace: str = ""

    @property
    def run_id(self) -> int:
        """``GITHUB_RUN_ID`` as int64; 0 when unset or malformed."""
        return parse_run_id(self.run_id_raw)

    @property
    def receipt_token(self) -> str:
        """The job token when a swap really happened, else ``""`` (docs/architecture.md "Receipt")."""
        return receipt_token(self.job_token, self.role_token, self.minted)


#: How long the pre-flight waits out a rate limit before it fails open (docs/rules.md#rate-limited).
PREFLIGHT_MAX_WAIT_S = 120.0


def run_preflight(forge: Forge, facts: PreflightFacts, log: Log) -> Skip | None:
    """The two pre-flight skips, in order.  Call exactly once, before the start comment and the
    pre-script; a ``Skip`` means exit 0 with nothing posted.  A rate limit is waited out for at
    most :data:`PREFLIGHT_MAX_WAIT_S` per read; beyond that the check fails open
    (docs/rules.md#rate-limited).
    """
    log = redacting(log, facts)
    forge = forge.bounded(max_wait_s=PREFLIGHT_MAX_WAIT_S)
    run = facts.run_id_raw
    skip = _guarded(check_receipt, forge, facts, log, "this update was already handled")
    if skip is not None:
        log(
            "done",
            f"This update was already absorbed by the run in flight (follow-up run {run}); nothing to "
            "do [receipt-lists-my-run]",
        )
        return skip
    skip = _guarded(check_head_reviewed, forge, facts, log, "this head was already reviewed")
    if skip is not None:
        log(
            "done",
            f"The review App already reviewed this head after run {run} was created; nothing to do [head-reviewed]",
        )
        return skip
    return None


def redacting(log: Log, facts: PreflightFacts) -> Log:
    """``log(level, message)`` with both token values of ``facts`` blanked out as ``***`` in every
    message (defence in depth; the messages are built never to hold a token)."""
    secrets = [t for t in (facts.job_token, facts.role_token) if t]

    def redacted(level: str, message: str) -> None:
        for secret in secrets:
            message = message.replace(secret, "***")
        log(level, message)

    return redacted


Check = Callable[[Forge, PreflightFacts, Log], "Skip | None"]


def _guarded(check: Check, forge: Forge, facts: PreflightFacts, log: Log, what: str) -> Skip | None:
    """Run one check; an unexpected exception fails open with one warning."""
    try:
        return check(forge, facts, log)
    except Exception as exc:
        log("warning", f"Could not check whether {what}: unexpected {type(exc).__name__}: {exc}")
        return None


def check_receipt(forge: Forge, facts: PreflightFacts, log: Log) -> Skip | None:
    """``Skip(receipt-lists-my-run)`` when an unedited job-token receipt lists this run.

    Silent when steering is off, outside Actions, or without a work item, receipt token or
    role token; INFO on a manual re-run or a provider refusal; WARN on any error.
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
    try:
        receipt = _find_receipt(forge, facts)
    except (ForgeError, CheckFailed) as exc:
        log("warning", f"Could not check whether this update was already handled: {exc} [receipt-lists-my-run]")
        return None
    if receipt is None:
        return None
    return Skip(RULE_RECEIPT, f"receipt comment {receipt.id} lists run {facts.run_id}", receipt.html_url)


def _find_receipt(forge: Forge, facts: PreflightFacts) -> Comment | None:
    """The receipt check's reads: repo form, both logins, identity difference, comments, union.

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
        distinct_logins(forge, receipt_login)
        return receipt_listing_run(comments, receipt_login, facts.run_id)
    receipt_login, _role_login = distinct_logins(forge)
    try:
        comments = forge.list_issue_comments(facts.item_number, credential="job")
    except ForgeError as exc:
        raise CheckFailed(f"listing comments on {facts.repository}#{facts.item_number}: {exc}") from None
    return receipt_listing_run(comments, receipt_login, facts.run_id)


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
    resolved or both are the same identity (docs/architecture.md "Receipt"); the receipt check
    and the receipt writer both need them apart.
    """
    receipt_login = receipt_login.strip() or _login(forge, "job", "receipt")
    role_login = _login(forge, "role", "role")
    if same_identity(Identity(receipt_login), Identity(role_login)):
        raise CheckFailed(
            f"the job token and the role token both act as {receipt_login}, "
            "so a receipt could have been written by the agent's own identity"
        )
    return receipt_login, role_login


def check_head_reviewed(forge: Forge, facts: PreflightFacts, log: Log) -> Skip | None:
    """``Skip(head-reviewed)`` when the review App reviewed the current head after this run was
    created.  Runs whether or not steering is enabled; INFO says why it did not apply,
    WARN on read errors.
    """
    if not (facts.in_actions and facts.job_token and facts.role_token):
        log(
            "info",
            "Head-reviewed skip not checked: it needs GitHub Actions with a job token and a role token [head-reviewed]",
        )
        return None
    repo = Repo.parse(facts.repository)
    base = HeadReviewFacts(
        stage=facts.stage,
        kind=transition_kind(facts.normalized_kind, facts.event_name, facts.event_payload, facts.item_number),
        run_attempt=facts.run_attempt,
        run_id=facts.run_id,
        run_repo=facts.repository,
        pr_repo=facts.repository,
        pr_number=facts.item_number,
        review_bot_logins=review_bot_logins(facts.review_bot_logins, repo.owner if repo else ""),
    )
    why = head_review_precheck(base)
    if why is None:
        try:
            gathered = _gather_review_facts(forge, base)
        except CheckFailed as exc:
            log("warning", f"Could not check whether this head was already reviewed: {exc} [head-reviewed]")
            return None
        verdict = gathered if isinstance(gathered, NotSkipped) else head_review_decision(gathered)
        if isinstance(verdict, Skip):
            return verdict
        why = verdict.reason
    log("info", f"Head-reviewed skip not applied: {why} [head-reviewed]")
    return None


def _gather_review_facts(forge: Forge, base: HeadReviewFacts) -> HeadReviewFacts | NotSkipped:
    """The head-reviewed reads: this run (job token), the PR head and every review (role token).

    A 404 on this run is "not found" (no skip, no error); other read errors raise ``CheckFailed``.
    """
    try:
        run = forge.get_run(base.run_id)
    except NotFoundError:
        return NotSkipped("this run was not found")
    except ForgeError as exc:
        raise CheckFailed(f"reading this run: {exc}") from None
    try:
        head = forge.get_pull_request(base.pr_number).head_sha
    except ForgeError as exc:
        raise CheckFailed(f"reading the pull request head: {exc}") from None
    try:
        reviews = tuple(forge.list_reviews(base.pr_number))
    except ForgeError as exc:
        raise CheckFailed(f"listing reviews: {exc}") from None
    return replace(base, run_created_at=run.created_at, head_sha=head, reviews=reviews)
