"""Pre-flight: gather the facts through the ``Forge`` port and let ``core`` decide.

Implements docs/architecture.md "Pre-flight skips": the receipt check (its reader is
``fullsend.app.action.skip.receipt.check_receipt``), then the head-reviewed check and its reads, called
once before any comment or script.  The facts both read are ``fullsend.app.action.skip.facts``'.
Both checks fail OPEN: every error logs one line naming why and the run does the work.
Every line goes through ``log(level, message)`` (levels ``info``, ``warning``, ``done``); no
token is ever part of a message.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from fullsend.adapters.github.client import at_once
from fullsend.app.action.skip.facts import CheckFailed, PreflightFacts, redacting
from fullsend.app.action.skip.receipt import check_receipt
from fullsend.core.model import Repo, WorkflowRun
from fullsend.core.receipt.skips import (
    RULE_HEAD_REVIEWED,
    HeadReviewFacts,
    NotSkipped,
    Skip,
    head_review_decision,
    head_review_precheck,
    review_bot_logins,
    transition_kind,
)
from fullsend.errors import ForgeError, NotFoundError

if TYPE_CHECKING:  # annotations only: the fast skip runs these checks without loading the ports
    from fullsend.ports import Forge, Log

#: How long the pre-flight waits out a rate limit before it fails open (docs/rules.md#rate-limited).
PREFLIGHT_MAX_WAIT_S = 120.0


def run_preflight(forge: Forge, facts: PreflightFacts, log: Log, wake: threading.Event | None = None) -> Skip | None:
    """The two pre-flight skips, in order.  Call exactly once, before the start comment and the
    pre-script; a ``Skip`` means exit 0 with nothing posted.  A rate limit is waited out for at
    most :data:`PREFLIGHT_MAX_WAIT_S` per read; beyond that the check fails open
    (docs/rules.md#rate-limited).

    When the head-reviewed check may apply (its pre-checks pass), its reads go out beside the
    receipt check's, both checks at once (one round trip decides either skip); its lines are
    logged after the receipt check's, and only when no receipt skip came first.  ``wake``: an
    event a signal handler sets to end the wait early (``InterruptedError``, the fast skip's).
    """
    log = redacting(log, facts)
    forge = cast("Forge", OneRunRead(forge.bounded(max_wait_s=PREFLIGHT_MAX_WAIT_S), facts.run_id))
    held: list[tuple[str, str]] = []

    def receipt() -> Skip | None:
        return _guarded(check_receipt, forge, facts, log, "this update was already handled")

    def head() -> Skip | None:
        return _guarded(
            check_head_reviewed, forge, facts, lambda *line: held.append(line), "this head was already reviewed"
        )

    base = head_review_base(facts)
    if base is not None and head_review_precheck(base) is None:
        skip, reviewed = at_once(receipt, head, wake=wake)
    else:
        skip, reviewed = receipt(), None
        if skip is None:
            reviewed = head()
    if skip is None:
        for level, text in held:
            log(level, text)
        skip = reviewed
    if skip is not None:
        announce(skip, facts.run_id_raw, log)
    return skip


class OneRunRead:
    """The pre-flight's forge: this run's record (``run_id``) is read once, by whichever check asks
    first — the receipt's proof or the head-reviewed check, which read it at once — and the other
    is given that answer, or that error.  Every other call goes to ``forge``.  Lives for one
    pre-flight: the forge handed on keeps no answer."""

    def __init__(self, forge: Forge, run_id: int) -> None:
        self._forge, self._run_id = forge, run_id
        self._lock = threading.Lock()
        self._answer: tuple[WorkflowRun | None, ForgeError | None] | None = None

    def get_run(self, run_id: int) -> WorkflowRun:
        """``Forge.get_run``; for this run, one request whoever asks (the other waits for it)."""
        if run_id != self._run_id:
            return self._forge.get_run(run_id)
        with self._lock:
            if self._answer is None:
                try:
                    self._answer = (self._forge.get_run(run_id), None)
                except ForgeError as exc:
                    self._answer = (None, exc)
            run, error = self._answer
        if error is not None:
            raise error
        assert run is not None
        return run

    def __getattr__(self, name: str) -> Any:
        return getattr(self._forge, name)


def announce(skip: Skip, run: str, log: Log) -> None:
    """The lines a skip ends the run with (the fast skip writes the same: docs/architecture.md "Fast skip")."""
    if skip.rule_id == RULE_HEAD_REVIEWED:
        log(
            "done",
            f"The review App already reviewed this head after run {run} was created; nothing to do [head-reviewed]",
        )
        return
    log(
        "done",
        f"This update was already absorbed by the run in flight (follow-up run {run}); nothing to "
        "do [receipt-lists-my-run]",
    )
    log("info", skip.reason[:1].upper() + skip.reason[1:])  # which receipt, and why it counts
    if skip.stands_on:
        log("info", f"Saved by standing on {skip.stands_on}")


Check = Callable[["Forge", PreflightFacts, "Log"], "Skip | None"]


def _guarded(check: Check, forge: Forge, facts: PreflightFacts, log: Log, what: str) -> Skip | None:
    """Run one check; an unexpected exception fails open with one warning."""
    try:
        return check(forge, facts, log)
    except Exception as exc:
        log("warning", f"Could not check whether {what}: unexpected {type(exc).__name__}: {exc}")
        return None


def check_head_reviewed(forge: Forge, facts: PreflightFacts, log: Log) -> Skip | None:
    """``Skip(head-reviewed)`` when the review App reviewed the current head after this run was
    created.  Runs whether or not steering is enabled; INFO says why it did not apply,
    WARN on read errors.
    """
    base = head_review_base(facts)
    if base is None:
        log(
            "info",
            "Head-reviewed skip not checked: it needs GitHub Actions with a job token and a role token [head-reviewed]",
        )
        return None
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


def head_review_base(facts: PreflightFacts) -> HeadReviewFacts | None:
    """The head-reviewed facts known before any read; ``None`` outside Actions or without both tokens."""
    if not (facts.in_actions and facts.job_token and facts.role_token):
        return None
    repo = Repo.parse(facts.repository)
    return HeadReviewFacts(
        stage=facts.stage,
        kind=transition_kind(facts.normalized_kind, facts.event_name, facts.event_payload, facts.item_number),
        run_attempt=facts.run_attempt,
        run_id=facts.run_id,
        run_repo=facts.repository,
        pr_repo=facts.repository,
        pr_number=facts.item_number,
        review_bot_logins=review_bot_logins(facts.review_bot_logins, repo.owner if repo else ""),
    )


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
