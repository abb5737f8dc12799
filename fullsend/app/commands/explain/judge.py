"""Judging runs for ``fullsend explain`` with the real core rules.

* The run in flight: the newest shim run bound to the item whose Start would succeed
  (``fullsend.core.watch.start.my_run_facts``: one Route job, one in-progress stage job), or the
  ``--run`` run, whose stage job may have finished (then it is the one non-Route job that ran).
* Each follow-up: ``fullsend.core.provenance.verdicts.judge_record`` then ``judge_jobs`` — the verdict by
  rule id (docs/rules.md#provenance), spread over the check table in the watcher's order.
* Each run id: whether a queued run with that id would skip, by ``receipt-lists-my-run``
  (``fullsend.core.receipt.marker``) and by ``head-reviewed`` (``fullsend.core.receipt.skips``).

Explain keeps no judged set (the watcher's memory is not readable), so ``once`` is reported as
not known, and every follow-up is judged as if it were listed for the first time.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from fullsend.app.commands.explain.model import (
    ACCEPT,
    NOT_KNOWN,
    NOT_REACHED,
    PASS,
    PENDING,
    REJECT_FINAL,
    CheckReport,
    RunReport,
    SkipReport,
)
from fullsend.app.commands.explain.read import ExplainReader
from fullsend.app.commands.proofs import OfflineProofs
from fullsend.core.model import Comment, Job, Review, WorkflowRun
from fullsend.core.provenance import verdicts as provenance
from fullsend.core.provenance.verdicts import MyRun, Verdict
from fullsend.core.receipt.marker import Marker, is_unedited
from fullsend.core.receipt.proof.verify import RULE_KEYS_UNREACHABLE, RULE_UNSIGNED
from fullsend.core.receipt.signed import SignedReceipt, receipt_claim, receipts_listing_run
from fullsend.core.receipt.skips import (
    RULE_HEAD_REVIEWED,
    RULE_RECEIPT,
    HeadReviewFacts,
    Skip,
    head_review_decision,
    is_manual_rerun,
)
from fullsend.core.scalars import format_time
from fullsend.core.watch.start import (
    StartRefused,
    check_own_run,
    fresh_after,
    is_route_job_name,
    my_run_facts,
    resolve_route_job,
)

#: The checks in the order the watcher runs them (docs/architecture.md "Provenance").
CHECK_ORDER = ("self", "shim", "event", "fresh", "item", "chain", "once", "jobs", "route", "stage")
#: How many of the item's newest shim runs are probed for the run in flight (one jobs read each).
IN_FLIGHT_PROBES = 10
_OUTCOMES = {"accept": ACCEPT, "reject": REJECT_FINAL, "pending": PENDING}
_PR_EVENTS = frozenset({"pull_request", "pull_request_target"})


def outcome_of(verdict: Verdict) -> str:
    """``accept`` / ``reject-final`` / ``pending`` for a core verdict."""
    return _OUTCOMES.get(verdict.outcome, verdict.outcome)


def check_table(verdict: Verdict) -> tuple[CheckReport, ...]:
    """Every check of one run, in order: the ones before the deciding check passed (the order is
    fixed, so they must have), the deciding one carries the verdict and rule id, later ones were
    not reached.  ``once`` is not known to explain; ``jobs`` is shown only when it decided."""
    decided = verdict.check if verdict.outcome != "accept" else ""
    rows: list[CheckReport] = []
    reached = True
    for check in CHECK_ORDER:
        if check == decided:
            rows.append(CheckReport(check, outcome_of(verdict), verdict.rule_id, verdict.detail))
            reached = False
        elif check == "jobs":
            continue
        elif check == "once" and reached:
            rows.append(
                CheckReport(
                    check, NOT_KNOWN, "once", "explain keeps no judged set; the watcher never judges a run twice"
                )
            )
        else:
            rows.append(CheckReport(check, PASS if reached else NOT_REACHED))
    return tuple(rows)


def judge(run: WorkflowRun, me: MyRun, reader: ExplainReader) -> tuple[Verdict, bool]:
    """Phase A, then phase B on the run's jobs (one recorded read), as the watcher does.

    Returns the deciding verdict and whether phase A records the run as observed (an
    ``issue_comment`` run that passed the record checks keeps its slot in comment pairing).
    """
    verdict = provenance.judge_record(run, me, frozenset())
    observe = verdict.observe
    if verdict.outcome != "accept":
        return verdict, observe
    jobs, err = reader.jobs(run.id)
    if err is not None or jobs is None:
        permanent = err.permanent if err is not None else True
        return provenance.jobs_unreadable(run.id, permanent, f"reading its jobs failed: {err}"), observe
    return provenance.judge_jobs(run, jobs, me), observe


def run_report(run: WorkflowRun, role: str, verdict: Verdict | None = None, **extra: Any) -> RunReport:
    """A :class:`RunReport` of ``run``; with ``verdict``, its outcome and check table."""
    base = RunReport(
        run_id=run.id,
        role=role,
        event=run.event,
        actor=run.actor,
        created_at=format_time(run.created_at),
        status=run.status,
        display_title=run.display_title,
        run_attempt=run.run_attempt,
        html_url=run.html_url,
    )
    if verdict is not None:
        base = replace(
            base,
            outcome=outcome_of(verdict),
            rule_id=verdict.rule_id,
            check=verdict.check,
            detail=verdict.detail,
            checks=check_table(verdict),
        )
    return replace(base, **extra)


# ---- the run in flight ---------------------------------------------------------------------
def find_in_flight(
    candidates: Sequence[WorkflowRun], reader: ExplainReader, run_name: str, number: int
) -> tuple[WorkflowRun | None, MyRun | None, list[str]]:
    """The newest candidate whose Start succeeds: its own record and one Route job and one
    in-progress stage job (docs/architecture.md "Start").  Returns ``(run, facts, notes)``;
    ``(None, None, reasons)`` when none qualifies."""
    reasons: list[str] = []
    for run in candidates[:IN_FLIGHT_PROBES]:
        jobs, _ = reader.jobs(run.id)
        if jobs is None:
            continue
        try:
            me, notes = my_run_facts(run, jobs, run_name=run_name, item_number=number, started_at=None, stage_hints=())
        except StartRefused as exc:
            reasons.append(f"run {run.id}: {exc}")
            continue
        return run, me, notes
    return None, None, reasons


def facts_for_given_run(run: WorkflowRun, jobs: Sequence[Job], run_name: str, number: int) -> tuple[MyRun, list[str]]:
    """Start's facts for the ``--run`` run.  A finished run has no in-progress stage job; its
    stage job is then the one non-Route job that ran (concluded, and not ``skipped``).

    Raises:
        StartRefused: when Start's rules fail and no single stage job can be told.
    """
    try:
        return my_run_facts(run, jobs, run_name=run_name, item_number=number, started_at=None, stage_hints=())
    except StartRefused as exc:
        ran = [j for j in jobs if not is_route_job_name(j.name) and j.conclusion not in (None, "skipped")]
        if len(ran) != 1 or any(j.status == "in_progress" for j in jobs):
            raise exc
    effective, notes = check_own_run(run, run_name)
    me = MyRun(
        run.id,
        run.path,
        run.referenced_workflows,
        fresh_after(run, None),
        effective,
        number,
        resolve_route_job(jobs),
        ran[0].name,
    )
    return me, [
        *notes,
        f"Run {run.id} has finished; its stage job is taken to be {ran[0].name!r}, the one job besides Route that ran",
    ]


# ---- the two pre-flight skips ------------------------------------------------------------------
def _attempt_text(run: WorkflowRun) -> str:
    return str(run.run_attempt) if run.run_attempt > 0 else ""


def receipt_skip(
    run: WorkflowRun,
    comments: Sequence[Comment],
    proofs: OfflineProofs | None = None,
    item: int = 0,
    allow_unsigned: bool = False,
) -> SkipReport:
    """Would a queued run with this id skip on a receipt (docs/architecture.md "Receipt reader")?

    Explain cannot resolve the job token's login, so any App author of a receipt stands in for
    it; the report names that author so it can be compared.  Edited receipts never count; a
    signed one counts when ``proofs`` finds its proof holds for ``run`` on ``item``, an unsigned
    one only with ``allow_unsigned`` (docs/rules.md "Receipt proof"), each refusal naming its rule.
    """
    if is_manual_rerun(_attempt_text(run)):
        return SkipReport(
            RULE_RECEIPT, False, f"run attempt {run.run_attempt} is a manual re-run, which never skips on a receipt"
        )
    refused: list[SkipReport] = []
    for login in _receipt_authors(comments):
        for comment, found in receipts_listing_run(comments, login, run.id):
            why = _not_honoured(comment, found, run, proofs, item, allow_unsigned)
            what = f"receipt comment {comment.id} by {comment.author} (unedited"
            if why is None:
                signed = ", its proof holds" if isinstance(found, SignedReceipt) else ", unsigned"
                return SkipReport(
                    RULE_RECEIPT, True, f"{what}{signed}) lists run {run.id}", comment.id, comment.author, False
                )
            refused.append(
                SkipReport(RULE_RECEIPT, False, f"{what}) lists run {run.id}, but {why}", comment.id, comment.author)
            )
    if refused:
        return refused[0]
    listing = [c for c in comments if _lists(c, run.id)]
    edited = [c for c in listing if c.author_is_app and not is_unedited(c)]
    if edited:
        c = edited[0]
        return SkipReport(
            RULE_RECEIPT,
            False,
            f"receipt comment {c.id} by {c.author} lists run {run.id} but was "
            f"edited (updated {c.updated_at_raw or 'at an unknown time'}); an edited receipt never "
            "counts, so the run does the work",
            c.id,
            c.author,
            True,
        )
    if listing:
        c = listing[0]
        return SkipReport(
            RULE_RECEIPT,
            False,
            f"comment {c.id} by {c.author} is shaped like a receipt listing run "
            f"{run.id}, but its author is not an App, so it never counts",
            c.id,
            c.author,
            False,
        )
    return SkipReport(RULE_RECEIPT, False, f"no receipt lists run {run.id}")


def _not_honoured(
    comment: Comment,
    found: Marker | SignedReceipt,
    run: WorkflowRun,
    proofs: OfflineProofs | None,
    item: int,
    allow_unsigned: bool,
) -> str | None:
    """Why a receipt listing ``run`` does not count, ending in its rule id; ``None`` when it does."""
    if not isinstance(found, SignedReceipt):
        if allow_unsigned:
            return None
        return f"it is unsigned, and any workflow of the repository could have written it [{RULE_UNSIGNED}]"
    if proofs is None:
        return f"its proof was not checked [{RULE_KEYS_UNREACHABLE}]"
    verdict = proofs.verdict(found, comment, item, run)
    return None if verdict.ok else f"its proof fails: {verdict.why} [{verdict.rule_id}]"


def _lists(comment: Comment, run_id: int) -> bool:
    marker = receipt_claim(comment.body)
    return marker is not None and marker.lists(run_id)


def _receipt_authors(comments: Iterable[Comment]) -> list[str]:
    """App authors of whole-body receipts, in first-seen order."""
    seen: dict[str, str] = {}
    for c in comments:
        if c.author_is_app and c.author and receipt_claim(c.body) is not None:
            seen.setdefault(c.author.lower(), c.author)
    return list(seen.values())


def stage_of(stage_job_name: str) -> str:
    """The stage a stage job runs: ``dispatch / Review`` → ``review`` (the last name segment)."""
    return stage_job_name.rsplit(" / ", 1)[-1].strip().lower()


def head_reviewed_skip(
    run: WorkflowRun,
    stage_job_name: str,
    repository: str,
    number: int,
    is_pr: bool,
    head_sha: str,
    reviews: Sequence[Review],
    review_logins: Sequence[str],
) -> SkipReport:
    """Would a queued run with this id skip because the review App already reviewed the head
    (docs/architecture.md "Pre-flight skips")?  The run record has the event but not its action:
    a pull-request event is evaluated as one a duplicate review comes from, and says so."""
    if not is_pr:
        return SkipReport(RULE_HEAD_REVIEWED, False, "the item is an issue; this skip is for pull request reviews")
    assumed = run.event in _PR_EVENTS
    kind = "comment_added" if run.event == "issue_comment" else ("synchronized" if assumed else "")
    facts = HeadReviewFacts(
        stage=stage_of(stage_job_name),
        kind=kind,
        run_attempt=_attempt_text(run),
        run_id=run.id,
        run_repo=repository,
        pr_repo=repository,
        pr_number=number,
        review_bot_logins=tuple(review_logins),
        run_created_at=run.created_at,
        head_sha=head_sha,
        reviews=tuple(reviews),
    )
    if facts.stage == "review" and kind == "":
        return SkipReport(RULE_HEAD_REVIEWED, False, f'event "{run.event}" is not one a duplicate review comes from')
    decision = head_review_decision(facts)
    reason = decision.reason
    if assumed and facts.stage == "review":
        reason = (
            f"if its {run.event} action was opened, reopened, synchronize, ready_for_review or "
            f"(un)labeled (the run record does not say): {reason}"
        )
    return SkipReport(RULE_HEAD_REVIEWED, isinstance(decision, Skip), reason)
