"""Comments for ``fullsend explain``: own output, amendment or context, and why
(docs/architecture.md "Amendments and context").

Uses the real rules: ``fullsend.core.delta.ownoutput`` (rule ids ``self-login``, ``app-marker``),
``fullsend.core.delta.changes.eligible_comments`` and ``fullsend.core.provenance.binding.bind_triggers`` over the
accepted follow-ups (authorizations) and every observed ``issue_comment`` run.  Explain judges the
whole window since the run in flight was created as one poll; the live watcher moves its baseline
after each delivery, so a comment can land in a different batch there, but its kind is the same.
Receipts (comments whose whole body is a receipt) are listed by :func:`receipt_reports`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime

from fullsend.app.commands.explain.model import CommentReport, ReceiptReport, RunEndReport
from fullsend.core.delta.changes import eligible_comments
from fullsend.core.delta.ownoutput import is_own_output
from fullsend.core.model import Comment, WorkflowRun
from fullsend.core.provenance.binding import (
    Binding,
    authorizations,
    bind_triggers,
    binding_time,
    command_instruction,
    observed_authorizations,
    opens_with_stage_command,
    parse_title,
)
from fullsend.core.provenance.verdicts import Verdict
from fullsend.core.receipt.marker import is_unedited
from fullsend.core.receipt.signed import receipt_claim
from fullsend.core.receipt.status_comment import STATUS_MARKER, is_terminal, status_run_id, terminal_end_rule
from fullsend.core.scalars import format_time


def inferred_self_logins(comments: Sequence[Comment]) -> list[str]:
    """App authors of status comments: the role login the runs post under.

    Explain cannot resolve the role token; a status comment is posted under it, so its author
    stands in for the role login.  First-seen order, no duplicates.
    """
    seen: dict[str, str] = {}
    for c in comments:
        if c.author_is_app and c.author and STATUS_MARKER in c.body:
            seen.setdefault(c.author.lower(), c.author)
    return list(seen.values())


def receipt_reports(comments: Sequence[Comment]) -> list[ReceiptReport]:
    """Every comment whose whole body is a receipt, signed or not; ``counts`` only when unedited and
    by an App (docs/architecture.md "Receipt reader"; whether its proof holds is the run's verdict)."""
    out = []
    for c in comments:
        marker = receipt_claim(c.body)
        if marker is not None:
            unedited = is_unedited(c)
            out.append(
                ReceiptReport(
                    c.id,
                    c.author,
                    c.author_type,
                    not unedited,
                    unedited and c.author_is_app,
                    marker.consumed,
                    marker.head,
                )
            )
    return out


def run_end_reports(comments: Sequence[Comment]) -> list[RunEndReport]:
    """Every terminal status comment, with the rule its run's failed agent end broke
    (docs/rules.md "Agent end"), oldest first."""
    return [
        RunEndReport(status_run_id(c.body) or "", c.id, c.author, terminal_end_rule(c.body), c.author_is_app)
        for c in comments
        if is_terminal(c.body)
    ]


def bind(
    comments: Sequence[Comment],
    baseline: datetime,
    self_logins: AbstractSet[str],
    batch: Sequence[WorkflowRun],
    observed: Sequence[WorkflowRun],
) -> Binding:
    """``bind_triggers`` over the eligible comments, the batch's authorizations and the observed runs,
    issue comments only: a review-thread comment's run names a review comment, another id series
    (:func:`bind_threads` binds those)."""
    eligible = eligible_comments(comments, baseline, self_logins)
    auths = [a for a in authorizations(batch) if not a.in_thread]
    return bind_triggers(eligible, auths, [a for a in observed_authorizations(observed) if not a.in_thread])


def bind_threads(
    threads: Sequence[Comment],
    baseline: datetime,
    self_logins: AbstractSet[str],
    batch: Sequence[WorkflowRun],
    observed: Sequence[WorkflowRun],
) -> Binding:
    """The review-thread comments bound to the batch's ``review_comment:<id>`` runs, as the watcher
    binds them (docs/architecture.md "Amendments and context"): thread runs only, and a review
    comment a run names is eligible whatever its timestamp (docs/architecture.md "Delta")."""
    auths = [a for a in authorizations(batch) if a.in_thread]
    named = frozenset(a.comment_id for a in auths if a.comment_id > 0)
    eligible = eligible_comments([c for c in threads if c.in_thread], baseline, self_logins, frozenset(), named)
    return bind_triggers(eligible, auths, [a for a in observed_authorizations(observed) if a.in_thread])


def bound_runs(*bindings: Binding | None) -> tuple[dict[int, list[int]], set[int]]:
    """Run id → the comment ids bound to it, and the unbound run ids, over every binding given
    (one per id series: issue comments, review-thread comments)."""
    by_run: dict[int, list[int]] = {}
    unbound: set[int] = set()
    for binding in bindings:
        if binding is None:
            continue
        for cid, ids in binding.by_comment.items():
            for rid in ids:
                by_run.setdefault(rid, []).append(cid)
        unbound |= set(binding.unbound)
    return by_run, unbound


def _report(
    c: Comment, kind: str, why: str, rule_id: str = "", run_ids: tuple[int, ...] = (), instruction: str = ""
) -> CommentReport:
    return CommentReport(
        c.id,
        c.author,
        c.author_type,
        format_time(c.created_at),
        format_time(c.updated_at),
        not is_unedited(c),
        kind,
        rule_id,
        run_ids,
        instruction,
        why,
    )


def classify(
    comments: Sequence[Comment],
    baseline: datetime | None,
    self_logins: AbstractSet[str],
    binding: Binding | None,
    named: Mapping[int, WorkflowRun],
    verdicts: Mapping[int, Verdict],
) -> list[CommentReport]:
    """One :class:`CommentReport` per comment, in listing order.

    ``baseline`` is the run in flight's creation (``None``: no run in flight, nothing is judged
    beyond own output).  ``named`` maps a comment id to the follow-up run whose title names it;
    ``verdicts`` holds each follow-up's provenance verdict by run id.
    """
    out = []
    for c in comments:
        own = is_own_output(c.author, c.author_is_app, c.body, self_logins)
        if own is not None:
            out.append(_report(c, "own-output", "the runner's own output never steers", rule_id=own))
        elif baseline is None:
            out.append(_report(c, "not-judged", "no run is in flight, so no delta is built"))
        elif c.created_at is None or c.created_at <= baseline:
            out.append(
                _report(c, "before-baseline", "created before the run in flight: part of its task, not of a steer")
            )
        else:
            out.append(_after_baseline(c, binding, named, verdicts))
    return out


def _after_baseline(
    c: Comment, binding: Binding | None, named: Mapping[int, WorkflowRun], verdicts: Mapping[int, Verdict]
) -> CommentReport:
    run_ids = tuple(binding.by_comment.get(c.id, ())) if binding is not None else ()
    if run_ids:
        listed = ", ".join(str(i) for i in run_ids)
        return _report(
            c,
            "amendment",
            f"bound to authorized follow-up run(s) {listed}: the agent acts on it",
            run_ids=run_ids,
            instruction=command_instruction(c.body),
        )
    return _report(c, "context", why_context(c, named, verdicts))


def why_context(c: Comment, named: Mapping[int, WorkflowRun], verdicts: Mapping[int, Verdict]) -> str:
    """Why a comment after the baseline is context, not an amendment."""
    if not opens_with_stage_command(c.body):
        return "not a stage command: data the agent may read and must not obey"
    run = named.get(c.id)
    if run is None:
        return (
            "no follow-up run names this comment, and interval pairing found no single run for it "
            "(a burst, a refused command, or a run created more than 10 minutes later)"
        )
    verdict = verdicts.get(run.id)
    if verdict is not None and verdict.outcome != "accept":
        state = "is still pending" if verdict.outcome == "pending" else "was rejected"
        return f"its run {run.id} {state} [{verdict.rule_id}]: {verdict.detail}"
    if run.run_attempt != 1:
        return f"its run {run.id} is attempt {run.run_attempt}; only a first attempt confers authority"
    if (run.actor or "").lower() != (c.author or "").lower():
        return f"its run {run.id} was started by {run.actor or 'nobody known'}, not by the comment's author"
    at = binding_time(c)
    if at is not None and run.created_at is not None and at > run.created_at:
        return (
            f"edited at {format_time(at)}, after its run {run.id} was created at "
            f"{format_time(run.created_at)}: the Route job never saw this text, so its run is unbound"
        )
    return f"not bound to its run {run.id} [unbound]"


def runs_naming_comments(runs: Sequence[WorkflowRun], run_name: str) -> dict[int, WorkflowRun]:
    """Comment id → the newest listed run whose title names it (`` comment:<id>``) for ``run_name``."""
    named: dict[int, WorkflowRun] = {}
    for run in runs:
        parsed = parse_title(run.display_title)
        if parsed is not None and parsed[1] and parsed[0] == run_name:
            named[parsed[1]] = run
    return named
