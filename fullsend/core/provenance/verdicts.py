"""Provenance verdicts on listed follow-up runs (docs/architecture.md "Provenance").

Each listed run is judged in two phases, in a fixed order:

* phase A, :func:`judge_record` — the run record alone (no API call): ``self``, ``shim``,
  ``event``, ``fresh``, ``item``, ``chain``, then (for ``issue_comment`` runs) "record as
  observed", then ``once``;
* phase B, :func:`judge_jobs` — the run's job listing: the one job carrying my Route job's exact
  name concluded ``success``, and the one job carrying my stage job's exact name was not
  ``skipped``.  The run's own ``conclusion`` is never consulted.

Every outcome is a :class:`Verdict` — accept, reject (final) or pending ("judge again next poll")
— with a kebab-case rule id that has a section in docs/rules.md.  Provenance fails CLOSED: unknown
or malformed forge data is a named reject or pending, never an accept and never an exception.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from fullsend.core.model import Job, ReferencedWorkflow, WorkflowRun
from fullsend.core.provenance.binding import bound_to_item
from fullsend.core.wire import AMENDMENT_EVENTS

#: Every rule id this module emits (docs/rules.md#provenance); the last two are project ids for
#: cases the provenance checks do not name (``no-run-id``: a record without a positive id cannot be judged
#: once; ``jobs-pending``: a transient error reading the jobs, judged again next poll).
RULE_IDS: tuple[str, ...] = (
    "self",
    "shim",
    "event",
    "fresh",
    "item",
    "chain-pending",
    "chain-differs",
    "once",
    "route-pending",
    "route-not-success",
    "route-ambiguous",
    "route-missing",
    "stage-pending",
    "stage-skipped",
    "stage-ambiguous",
    "stage-missing",
    "jobs-unreadable",
    "no-run-id",
    "jobs-pending",
)

#: Work-item update events the shim may carry (check 2, ``event``; WIRE event names).
ALLOWED_EVENTS: frozenset[str] = frozenset(
    {"issue_comment", "issues", "pull_request_target", "pull_request_review", "pull_request_review_comment"}
)

Outcome = Literal["accept", "reject", "pending"]


@dataclass(frozen=True)
class MyRun:
    """Facts about my own run, fixed at Start (built by ``fullsend.core.watch.start``).

    ``path``: my shim path as the API reports it.  ``referenced_workflows``: my dispatch chain
    (non-empty).  ``fresh_after``: the freshness cutoff (UTC; ``None`` makes nothing fresh).
    ``run_name``: ``owner/repo#N``, or ``""`` when title binding is off.  ``route_job_name`` /
    ``stage_job_name``: the exact job names matched in candidates.  ``trigger_comment_id``: the
    ``comment:<id>`` of my own run's title (0 when it names none): the comment my run is already
    working on, never news to it; ``trigger_thread_id`` likewise its ``review_comment:<id>``.
    """

    run_id: int
    path: str
    referenced_workflows: tuple[ReferencedWorkflow, ...]
    fresh_after: datetime | None
    run_name: str
    item_number: int
    route_job_name: str
    stage_job_name: str
    trigger_comment_id: int = 0
    trigger_thread_id: int = 0


@dataclass(frozen=True)
class Verdict:
    """One provenance outcome.

    ``outcome``: ``accept`` (from :func:`judge_record`: phase A passed, read the jobs; from
    :func:`judge_jobs`: the run joins the batch), ``reject`` (final) or ``pending`` (judge again
    next poll; the poll reports retry).  ``rule_id``: ``""`` on accept, else one of
    :data:`RULE_IDS`.  ``check``: the coarse check name (``self``, ``shim``, ``event``, ``fresh``,
    ``item``, ``chain``, ``once``, ``route``, ``stage``, ``jobs``).  ``observe``: record the run
    into the observed map.  ``judged``: add the run id to the judged set.
    """

    run_id: int
    outcome: Outcome
    rule_id: str
    check: str
    detail: str
    observe: bool = False
    judged: bool = False

    def log_line(self) -> str:
        """One log line in the project's wording, naming the check, the detail and the rule id."""
        if self.outcome == "accept":
            return f"Follow-up run {self.run_id}: {self.detail}"
        what = "rejected" if self.outcome == "reject" else "not decided yet"
        line = f"Follow-up run {self.run_id} {what} ({self.check}: {self.detail}) [{self.rule_id}]"
        return line if self.outcome == "reject" else line + "; judging it again next poll"


def _shown(value: str) -> str:
    """A forge string made safe for one log line: quoted, control characters escaped, bounded."""
    text = value if isinstance(value, str) else ""
    return json.dumps(text[:200] + ("…" if len(text) > 200 else ""))


def _reject(run: WorkflowRun, rule_id: str, check: str, detail: str, **flags: bool) -> Verdict:
    return Verdict(run.id, "reject", rule_id, check, detail, **flags)


def _pending(run: WorkflowRun, rule_id: str, check: str, detail: str, **flags: bool) -> Verdict:
    return Verdict(run.id, "pending", rule_id, check, detail, **flags)


def is_follow_up(run: WorkflowRun, me: MyRun) -> bool:
    """Freshness (`fresh`, the second half of check 4).

    ``created_at`` strictly after ``me.fresh_after`` → yes; the same instant → yes iff the run id is
    larger than mine (ids are monotonic); earlier, or either instant unknown → no.
    """
    created, cutoff = run.created_at, me.fresh_after
    if created is None or cutoff is None:
        return False
    if created == cutoff:
        return run.id > me.run_id
    return created > cutoff


def _chain_keys(chain: Iterable[ReferencedWorkflow]) -> list[str]:
    return sorted(f"{rw.path}\x00{rw.ref}" for rw in chain)


def same_chain(mine: Sequence[ReferencedWorkflow], theirs: Sequence[ReferencedWorkflow]) -> bool:
    """Dispatch-chain equality (`chain`, check 3).

    Multiset equality of ``(path, ref)`` pairs; ``sha`` is ignored.  An empty ``mine`` equals
    nothing, not even another empty chain.
    """
    if not mine or len(mine) != len(theirs):
        return False
    return _chain_keys(mine) == _chain_keys(theirs)


def _record_rejection(run: WorkflowRun, me: MyRun) -> Verdict | None:
    """Phase A's record checks, ``self`` to ``chain`` in order; ``None`` when the record passes them all."""
    if run.id <= 0:
        return _reject(run, "no-run-id", "self", "the run record carries no usable id")
    if run.id == me.run_id:
        return _reject(run, "self", "self", "this is my own run")
    if run.path != me.path:
        return _reject(run, "shim", "shim", f"path {_shown(run.path)} is not the shim {_shown(me.path)}")
    if run.event not in ALLOWED_EVENTS:
        return _reject(run, "event", "event", f"event {_shown(run.event)} does not update a work item")
    if not is_follow_up(run, me):
        return _reject(run, "fresh", "fresh", "it was not created after my own run")
    if not bound_to_item(run, me.item_number, me.run_name):
        return _reject(run, "item", "item", "it is not bound to my work item")
    if not same_chain(me.referenced_workflows, run.referenced_workflows):
        if not run.referenced_workflows and run.status != "completed":
            return _pending(run, "chain-pending", "chain", "GitHub has not listed its referenced_workflows yet")
        return _reject(run, "chain-differs", "chain", "its referenced_workflows differ from mine")
    return None


def judge_record(run: WorkflowRun, me: MyRun, judged: AbstractSet[int]) -> Verdict:
    """Phase A: judge a listed run from its record alone.

    Returns a rejection (``self`` … ``chain-differs``, never marking the run judged), a
    ``chain-pending``, a ``once`` rejection for an id in ``judged``, or ``accept`` meaning "read
    its jobs and call :func:`judge_jobs`".  ``observe`` is set on an ``issue_comment`` run that
    passed the record checks (also when it is then rejected ``once``).  Never raises.
    """
    rejection = _record_rejection(run, me)
    if rejection is not None:
        return rejection
    observe = run.event in AMENDMENT_EVENTS
    if run.id in judged:
        return _reject(run, "once", "once", "it was judged already", observe=observe)
    return Verdict(run.id, "accept", "", "", "passed the run-record checks", observe=observe)


def _named(jobs: Sequence[Job], name: str) -> list[Job]:
    return [job for job in jobs if name and job.name == name]


def _route_verdict(run: WorkflowRun, jobs: Sequence[Job], me: MyRun) -> Verdict | None:
    """Route verdict, check 4 (docs/architecture.md "Provenance"); ``None`` when the Route job
    concluded success."""
    name, done = me.route_job_name, run.status == "completed"
    matches = _named(jobs, name)
    if len(matches) >= 2:
        return _reject(run, "route-ambiguous", "route", f"more than one job named {_shown(name)}", judged=True)
    if not matches:
        if done:
            return _reject(
                run, "route-missing", "route", "no Route job: the shim did not dispatch this event", judged=True
            )
        return _pending(run, "route-pending", "route", "its Route job has not concluded yet")
    conclusion = matches[0].conclusion
    if not conclusion:
        return _pending(run, "route-pending", "route", "its Route job has not concluded yet")
    if conclusion != "success":
        detail = f"its Route job concluded {_shown(conclusion)}, not success"
        return _reject(run, "route-not-success", "route", detail, judged=True)
    return None


def _stage_verdict(run: WorkflowRun, jobs: Sequence[Job], me: MyRun) -> Verdict | None:
    """Stage verdict, check 5; ``None`` when my stage job was selected."""
    name, done = me.stage_job_name, run.status == "completed"
    matches = _named(jobs, name)
    if len(matches) >= 2:
        return _reject(run, "stage-ambiguous", "stage", f"more than one job named {_shown(name)}", judged=True)
    if not matches:
        detail = f"no job named {_shown(name)} in the run"
        if done:
            return _reject(run, "stage-missing", "stage", detail, judged=True)
        return _pending(run, "stage-pending", "stage", detail)
    if matches[0].conclusion == "skipped":
        return _reject(run, "stage-skipped", "stage", "the Route job skipped my stage", judged=True)
    return None


def judge_jobs(run: WorkflowRun, jobs: Sequence[Job], me: MyRun) -> Verdict:
    """Phase B: judge a run that passed phase A by its job listing.

    Route first, then stage, each matched by EXACT job name (decoys like ``Route`` or
    ``other / Route`` are never read).  Final rejections carry ``judged=True``; pending ones and
    the accept do not (an accepted run is judged on delivery or an empty delta).
    """
    verdict = _route_verdict(run, jobs, me) or _stage_verdict(run, jobs, me)
    if verdict is not None:
        return verdict
    return Verdict(run.id, "accept", "", "", "its Route job concluded success and selected my stage")


def jobs_unreadable(run_id: int, permanent: bool, detail: str) -> Verdict:
    """Verdict for a failed read of a candidate's jobs.

    Permanent (403, 404, …) → final ``jobs-unreadable`` rejection, judged (never read again);
    transient or unknown → ``jobs-pending`` (the poll reports retry; the run stays judgeable).
    ``detail`` must already be safe to log (no token).
    """
    if permanent:
        return Verdict(run_id, "reject", "jobs-unreadable", "jobs", detail, judged=True)
    return Verdict(run_id, "pending", "jobs-pending", "jobs", detail)


def order_listing(runs: Iterable[WorkflowRun]) -> list[WorkflowRun]:
    """A poll's listing, each run id once, sorted oldest first (docs/architecture.md "Listing").

    ``runs`` is in read order: page 1 first, each page as GitHub served it.  The one place the
    run listing is de-duplicated.  GitHub lists newest first, so a run created between two page
    reads shifts every older run down one place and the last run of page N comes back first on
    page N+1: the same id twice, two snapshots of one run.  The copy kept is the fresher one:
    the newer ``updated_at`` (GitHub moves it on every status change and re-run), and on a tie
    or an unknown ``updated_at`` the later read, which saw the run no earlier than the first.
    The sort is stable by (``created_at``, id); runs with an unknown ``created_at`` come first
    (they are rejected ``fresh`` anyway).  Returns a new list; ``runs`` is not changed.
    """
    by_id: dict[int, WorkflowRun] = {}
    for run in runs:
        kept = by_id.get(run.id)
        if kept is None or not _strictly_newer(kept, run):
            by_id[run.id] = run
    return sorted(by_id.values(), key=lambda r: ((0, None) if r.created_at is None else (1, r.created_at), r.id))


def _strictly_newer(a: WorkflowRun, b: WorkflowRun) -> bool:
    """True when both ``updated_at`` are known and ``a``'s is later than ``b``'s."""
    return a.updated_at is not None and b.updated_at is not None and a.updated_at > b.updated_at
