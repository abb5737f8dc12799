"""Build the :class:`~fullsend.app.commands.explain.model.Explanation` of one work item (``fullsend explain``).

Order of reads: the item, its pull request, comments, reviews, review-thread comments, the login the token reads as,
the repository's runs since the item was created (to find the item's shim runs), the jobs of the
newest of them (to find the run in flight), the shim's listing as the run in flight's watcher sees
it (docs/architecture.md "Listing") and the jobs of each follow-up that passes phase A
(docs/architecture.md "Provenance").  Every
read that fails is recorded and skipped; whatever could be read is still judged.

``as_of`` drops runs, comments and reviews created after it.  An edit cannot be undone: a comment
created before ``as_of`` and edited later keeps its current body and is reported as edited.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TypeVar

from fullsend.app.commands.explain.comments import (
    bind,
    bind_threads,
    bound_runs,
    classify,
    inferred_self_logins,
    receipt_reports,
    run_end_reports,
    runs_naming_comments,
)
from fullsend.app.commands.explain.judge import (
    IN_FLIGHT_PROBES,
    facts_for_given_run,
    find_in_flight,
    head_reviewed_skip,
    judge,
    receipt_skip,
    run_report,
)
from fullsend.app.commands.explain.model import Explanation, ItemReport, RunReport, SkipReport
from fullsend.app.commands.explain.read import ExplainReader
from fullsend.core.model import Comment, Repo, Review, WorkflowRun
from fullsend.core.provenance.binding import bound_to_item
from fullsend.core.provenance.verdicts import MyRun, Verdict, order_listing
from fullsend.core.receipt.skips import RULE_HEAD_REVIEWED, review_bot_logins
from fullsend.core.scalars import format_time
from fullsend.core.watch.start import StartRefused, is_route_job_name
from fullsend.core.wire import AMENDMENT_EVENTS

T = TypeVar("T")

LIMITS = (
    "The watcher's memory (which runs it judged, what it delivered, which steers the agent "
    "acknowledged) is not readable through the API; a receipt shows what a finished run absorbed.",
    "Only receipts written by the job token's login count; explain cannot resolve that login, so it "
    "names the App that wrote each receipt: compare it with the run's 'Posted the steer receipt as' line.",
    "A receipt skip also needs a role token distinct from the job token and no provider definition "
    "exposing GH_WORKFLOW_TOKEN; neither is visible through the API.",
    "Step summaries are not readable through the API; the run's log lines and its status comment are.",
)


@dataclass
class _Item:
    """What was read about the item (``None`` / empty where a read failed)."""

    repo: Repo
    number: int
    report: ItemReport
    is_pr: bool = False
    created_at: datetime | None = None
    comments: list[Comment] = field(default_factory=list)
    reviews: list[Review] = field(default_factory=list)
    threads: list[Comment] = field(default_factory=list)

    @property
    def run_name(self) -> str:
        return f"{self.repo.full_name}#{self.number}"


def _until(items: Sequence[T], as_of: datetime | None, at: str) -> list[T]:
    """``items`` whose ``at`` instant is not after ``as_of`` (unknown instants are kept)."""
    if as_of is None:
        return list(items)
    return [i for i in items if getattr(i, at) is None or getattr(i, at) <= as_of]


def read_item(reader: ExplainReader, repo: Repo, number: int, as_of: datetime | None) -> _Item:
    """The item record, its head when it is a pull request, its comments, reviews and review threads."""
    issue, created_at = reader.item(number)
    pr, known = reader.pull_request(number)
    is_pr = pr is not None or (pr is None and not known and issue is not None and issue.is_pull_request)
    kind = "pull-request" if is_pr else ("issue" if known or issue is not None else "unknown")
    report = ItemReport(
        repo.full_name,
        number,
        kind,
        issue.title if issue else "",
        pr.head_sha if pr else "",
        issue.html_url if issue else "",
    )
    item = _Item(repo, number, report, is_pr, created_at)
    item.comments = _until(reader.comments(number) or [], as_of, "created_at")
    if is_pr:
        item.reviews = _until(reader.reviews(number) or [], as_of, "submitted_at")
        item.threads = _until(reader.review_comments(number) or [], as_of, "created_at")
    return item


def explain(
    reader: ExplainReader, repo: Repo, number: int, run_id: int | None = None, as_of: datetime | None = None
) -> Explanation:
    """Everything ``fullsend explain`` prints for ``repo#number`` (see the module docstring).

    ``run_id`` picks the run to explain instead of the run in flight.  Never raises for a failed
    read: each one is in ``Explanation.calls`` and the rest is still judged.
    """
    item = read_item(reader, repo, number, as_of)
    login = reader.reader_login()
    runs, capped = reader.list_repository_runs(item.created_at, as_of)
    runs = _until(runs or [], as_of, "created_at")
    shim_runs = sorted(
        (r for r in runs if r.referenced_workflows and bound_to_item(r, number, item.run_name)),
        key=_created_key,
        reverse=True,
    )
    selves = review_bot_logins((), repo.owner) + tuple(inferred_self_logins(item.comments))
    result = Explanation(
        item.report,
        as_of=format_time(as_of),
        reader=login,
        self_logins=selves,
        receipts=tuple(receipt_reports(item.comments)),
        run_ends=tuple(run_end_reports(item.comments)),
        limits=_limits(as_of, capped),
    )
    run, me, notes = _pick_run(reader, item, shim_runs, run_id)
    if run is None or me is None:
        result = _without_run(reader, result, item, shim_runs, notes)
    else:
        result = _with_run(reader, result, item, run, me, notes, as_of)
    return _with_calls(result, reader)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _created_key(run: WorkflowRun) -> tuple[datetime, int]:
    return (run.created_at or _EPOCH, run.id)


def _limits(as_of: datetime | None, capped: bool) -> tuple[str, ...]:
    extra = []
    if as_of is not None:
        extra.append(f"Job states and the pull request head are read as they are now, not as of {format_time(as_of)}.")
    if capped:
        extra.append("The repository's run listing reached its page cap; older runs of the item may be missing.")
    return LIMITS + tuple(extra)


def _with_calls(result: Explanation, reader: ExplainReader) -> Explanation:
    return replace(result, calls=tuple(reader.calls))


def _pick_run(
    reader: ExplainReader, item: _Item, shim_runs: Sequence[WorkflowRun], run_id: int | None
) -> tuple[WorkflowRun | None, MyRun | None, list[str]]:
    """The ``--run`` run, else the run in flight; ``(run, facts, notes)`` or ``(…, None, reasons)``."""
    if run_id is None:
        run, me, notes = find_in_flight(shim_runs, reader, item.run_name, item.number)
        if run is None:
            why = "; ".join(notes) if notes else "the item has no shim run"
            return None, None, [f"No run of {item.run_name} is in flight ({why})."]
        return run, me, notes
    run = reader.run(run_id)
    jobs, _ = reader.jobs(run_id) if run is not None else (None, None)
    if run is None or jobs is None:
        return None, None, [f"Run {run_id} could not be read with its jobs (see the reads below)."]
    try:
        me, notes = facts_for_given_run(run, jobs, item.run_name, item.number)
    except StartRefused as exc:
        return run, None, [f"Run {run_id} cannot judge follow-ups: {exc}."]
    if not bound_to_item(run, item.number, item.run_name):
        notes.append(f"Run {run_id} is not bound to {item.run_name} [item]; explained as asked.")
    return run, me, notes


def _without_run(
    reader: ExplainReader, result: Explanation, item: _Item, shim_runs: Sequence[WorkflowRun], notes: list[str]
) -> Explanation:
    """No run to judge from: list the item's newest shim runs with the two skip rules."""
    reports = tuple(_item_run(reader, r, item) for r in shim_runs[:IN_FLIGHT_PROBES])
    comments = classify(item.comments, None, frozenset(result.self_logins), None, {}, {})
    return replace(result, in_flight_note=" ".join(notes), item_runs=reports, comments=tuple(comments))


def _stage_job_of(reader: ExplainReader, run: WorkflowRun) -> str:
    """The one job besides Route that the run selected (not ``skipped``), or "" when not one."""
    jobs, _ = reader.jobs(run.id)
    picked = [j.name for j in jobs or () if not is_route_job_name(j.name) and j.conclusion != "skipped"]
    return picked[0] if len(picked) == 1 else ""


def _item_run(reader: ExplainReader, run: WorkflowRun, item: _Item) -> RunReport:
    stage_job = _stage_job_of(reader, run)
    if stage_job:
        head = _head_reviewed(run, item, stage_job)
    else:
        head = SkipReport(
            RULE_HEAD_REVIEWED,
            False,
            "the run's stage is not known (no single selected stage job), so this skip cannot be judged",
        )
    return run_report(run, "item-run", receipt=_receipt(reader, run, item), head_reviewed=head)


def _receipt(reader: ExplainReader, run: WorkflowRun, item: _Item) -> SkipReport:
    """``receipt_skip`` for ``run`` with the reader's proof checks (docs/rules.md "Receipt proof")."""
    return receipt_skip(run, item.comments, reader.proofs, item.number, reader.allow_unsigned)


def _head_reviewed(run: WorkflowRun, item: _Item, stage_job: str) -> SkipReport:
    logins = review_bot_logins((), item.repo.owner)
    return head_reviewed_skip(
        run, stage_job, item.repo.full_name, item.number, item.is_pr, item.report.head_sha, item.reviews, logins
    )


def _with_run(
    reader: ExplainReader,
    result: Explanation,
    item: _Item,
    run: WorkflowRun,
    me: MyRun,
    notes: list[str],
    as_of: datetime | None,
) -> Explanation:
    """Judge the follow-ups of ``run`` and classify the comments against its baseline."""
    listing: list[WorkflowRun] = []
    if me.fresh_after is None:
        notes.append(f"Run {run.id} has no readable created_at, so nothing is fresh after it [fresh].")
    else:
        found = reader.shim_runs(me.path.rsplit("/", 1)[-1], me.fresh_after) or []
        listing = [r for r in order_listing(_until(found, as_of, "created_at")) if r.id != me.run_id]
    judged = {r.id: judge(r, me, reader) for r in listing}
    verdicts: dict[int, Verdict] = {i: v for i, (v, _) in judged.items()}
    batch = [r for r in listing if verdicts[r.id].outcome == "accept"]
    observed = [r for r in listing if judged[r.id][1]]
    selves = frozenset(result.self_logins)
    baseline = me.fresh_after
    binding = bind(item.comments, baseline, selves, batch, observed) if baseline is not None else None
    threads = bind_threads(item.threads, baseline, selves, batch, observed) if baseline is not None else None
    named = runs_naming_comments(listing, me.run_name or item.run_name)
    comments = classify(item.comments, baseline, selves, binding, named, verdicts)
    by_run, unbound = bound_runs(binding, threads)
    follow = tuple(
        _follow_up(r, verdicts[r.id], item, me, by_run.get(r.id, []), r.id in unbound, _receipt(reader, r, item))
        for r in listing
    )
    flight = run_report(
        run,
        "in-flight",
        receipt=_receipt(reader, run, item),
        head_reviewed=_head_reviewed(run, item, me.stage_job_name),
    )
    return replace(
        result,
        in_flight=flight,
        route_job=me.route_job_name,
        stage_job=me.stage_job_name,
        baseline=format_time(baseline),
        run_name=me.run_name,
        start_notes=tuple(notes),
        follow_ups=follow,
        comments=tuple(comments),
    )


def _follow_up(
    run: WorkflowRun,
    verdict: Verdict,
    item: _Item,
    me: MyRun,
    amendments: list[int],
    unbound: bool,
    receipt: SkipReport,
) -> RunReport:
    notes = []
    if verdict.outcome == "accept":
        if run.event not in AMENDMENT_EVENTS:
            notes.append(
                f"accepted: a {run.event} run confers no amendment authority; what changed reaches the agent as context"
            )
        elif run.run_attempt != 1:
            notes.append(f"accepted, but attempt {run.run_attempt} confers no amendment authority")
        if unbound:
            notes.append(
                "accepted but bound to no comment: it carried nothing under its authority, is never "
                "absorbed, and the queued run redoes its work"
            )
        if receipt.applies:
            notes.append("absorbed by the run in flight: a receipt lists it, so its queued run skips")
    return run_report(
        run,
        "follow-up",
        verdict,
        amendments=tuple(sorted(amendments)),
        unbound=unbound,
        receipt=receipt,
        head_reviewed=_head_reviewed(run, item, me.stage_job_name),
        notes=tuple(notes),
    )
