"""The pure rules of Start: what must hold before the watcher may poll (docs/architecture.md "Start").

The app layer reads my own run and its jobs through the job token and hands the records here.
Any rule that fails raises :class:`StartRefused`; the runner then disables steering for the
iteration with one log line and the run goes on single-turn.  Messages are the project's wording,
carry forge values only quoted, and never carry a token.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime

from fullsend.core.model import Job, WorkflowRun
from fullsend.core.provenance.binding import parse_title, review_comment_id
from fullsend.core.provenance.verdicts import MyRun

#: Route job names as GitHub renders them for the dispatch workflow (WIRE).
ROUTE_JOB_NAME = "Route"
ROUTE_JOB_SUFFIX = " / Route"


class StartRefused(Exception):
    """Start cannot go on; steering is disabled for this iteration.

    ``str(exc)`` is the project's wording, safe to log, and never contains a token.
    """


def _names(jobs: Iterable[Job]) -> str:
    return ", ".join(json.dumps(job.name) for job in jobs)


def normalize_self_logins(logins: Iterable[str] | None) -> frozenset[str]:
    """Trim, lowercase and drop blank self logins (docs/architecture.md "Own output").

    Raises:
        StartRefused: when nothing is left ("no self logins …"): the run could not tell its own
            output from an update.
    """
    found = frozenset(login.strip().lower() for login in (logins or ()) if isinstance(login, str) and login.strip())
    if not found:
        raise StartRefused("no self logins were resolved, so the run cannot tell its own output from an update")
    return found


def is_route_job_name(name: str) -> bool:
    """True for ``Route`` or a name ending in `` / Route`` (WIRE)."""
    return isinstance(name, str) and (name == ROUTE_JOB_NAME or name.endswith(ROUTE_JOB_SUFFIX))


def resolve_route_job(jobs: Sequence[Job]) -> str:
    """The exact name of the one Route job in my own run.

    Raises:
        StartRefused: when zero or several jobs are route-like (names listed in the message).
    """
    route = [job for job in jobs if is_route_job_name(job.name)]
    if len(route) != 1:
        raise StartRefused(f"my own run must have exactly one Route job, but it has {len(route)} ({_names(route)})")
    return route[0].name


def _fold(text: str) -> str:
    return text.lower().replace("-", " ").replace("_", " ")


def _pick_by_hints(candidates: Sequence[Job], hints: Sequence[str]) -> Job | None:
    """The first non-blank hint that is a substring of exactly one folded candidate name."""
    for hint in hints:
        if not isinstance(hint, str) or not hint.strip():
            continue
        folded = _fold(hint.strip())
        hits = [job for job in candidates if folded in _fold(job.name)]
        if len(hits) == 1:
            return hits[0]
    return None


def resolve_stage_job(jobs: Sequence[Job], hints: Sequence[str]) -> str:
    """The exact name of my stage job.

    Candidates are my run's ``in_progress`` jobs that are not route-like; one candidate wins
    outright; with several, ``hints`` (runner: ``[$GITHUB_JOB, harness slug]``) decide in order.
    A name carried by two jobs of my run is refused too: candidates could not tell them apart.

    Raises:
        StartRefused: no in-progress stage job; "cannot tell which" of several; a duplicated name.
    """
    candidates = [job for job in jobs if job.status == "in_progress" and not is_route_job_name(job.name)]
    if not candidates:
        raise StartRefused("my own run has no in-progress stage job")
    chosen = candidates[0] if len(candidates) == 1 else _pick_by_hints(candidates, hints)
    if chosen is None or not chosen.name:
        raise StartRefused(f"cannot tell which of {len(candidates)} in-progress jobs is mine ({_names(candidates)})")
    if sum(1 for job in jobs if job.name == chosen.name) > 1:
        raise StartRefused(f"my own run has more than one job named {json.dumps(chosen.name)}")
    return chosen.name


#: The note for a run record without ``display_title`` (older GitHub Enterprise Server releases
#: leave the field out); the watcher logs it as a warning, naming the field.
MISSING_DISPLAY_TITLE = (
    "GitHub's record of my own run has no display_title field (older GitHub Enterprise "
    "Server releases leave it out), so title binding is off; only pull-request runs can bind"
)


#: The note for an issue record listing a label without ``name`` (GitHub's label schema requires
#: none of its fields); the watcher logs it once, as a warning naming the field.
MISSING_LABEL_NAME = (
    "GitHub's record of the work item lists a label with no name field, so a change "
    "among such labels is never reported; every other change still is"
)


def check_own_run(run: WorkflowRun, run_name: str) -> tuple[str, list[str]]:
    """Check my own run record and decide whether titles may bind.

    Returns the effective run name — ``run_name``, or ``""`` when my own ``display_title`` does not
    carry it as its contract-shaped work-item half (the shim declares no run-name, so a follow-up's
    title is attacker-editable and only ``pull_requests[]`` may bind) — and log notes.

    Raises:
        StartRefused: the record has no ``path`` or no ``referenced_workflows``.
    """
    if not run.path:
        raise StartRefused(f"my own run {run.id} reports no workflow path")
    if not run.referenced_workflows:
        raise StartRefused(f"my own run {run.id} references no reusable workflow")
    if not run_name:
        return "", ["Title binding is off: this work item has no run name; only pull-request runs can bind"]
    if not run.display_title:  # github.com always names a run: an empty title is a missing field
        return "", [MISSING_DISPLAY_TITLE]
    parsed = parse_title(run.display_title)
    if parsed is None or parsed[0] != run_name:
        note = (
            f"Title binding is off: my own run's title {json.dumps(run.display_title[:200])} does not carry "
            f"the run name {json.dumps(run_name)}, so the shim declares no run-name; only pull-request "
            "runs can bind"
        )
        return "", [note]
    return run_name, []


def fresh_after(run: WorkflowRun, started_at: datetime | None) -> datetime | None:
    """The freshness cutoff: my run's ``created_at``, else the runner's ``started_at``."""
    return run.created_at if run.created_at is not None else started_at


def start_head_sha(env_head_sha: str, forge_head_sha: str) -> str:
    """The PR head the delta measures from: the environment's value wins over the forge's."""
    return env_head_sha.strip() if env_head_sha and env_head_sha.strip() else forge_head_sha


def my_run_facts(
    run: WorkflowRun,
    jobs: Sequence[Job],
    *,
    run_name: str,
    item_number: int,
    started_at: datetime | None,
    stage_hints: Sequence[str],
) -> tuple[MyRun, list[str]]:
    """All of Start's pure rules on my own run and jobs, in a fixed order.

    Returns the :class:`~fullsend.core.provenance.verdicts.MyRun` the provenance checks use, and log notes.

    Raises:
        StartRefused: from :func:`check_own_run`, :func:`resolve_route_job` or
            :func:`resolve_stage_job`.
    """
    effective_name, notes = check_own_run(run, run_name)
    route = resolve_route_job(jobs)
    stage = resolve_stage_job(jobs, stage_hints)
    me = MyRun(
        run_id=run.id,
        path=run.path,
        referenced_workflows=run.referenced_workflows,
        fresh_after=fresh_after(run, started_at),
        run_name=effective_name,
        item_number=item_number,
        route_job_name=route,
        stage_job_name=stage,
        trigger_comment_id=(parse_title(run.display_title) or ("", 0))[1],
        trigger_thread_id=review_comment_id(run.display_title),
    )
    return me, notes
