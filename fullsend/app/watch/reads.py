"""Forge reads for the watcher: Start, the baseline at Start and the snapshot behind each delta.

* :func:`read_my_run` — Start (docs/architecture.md "Start"): my own run and its jobs (job token).
* :func:`read_start_baseline` — the end of Start: a pull request or an issue, its
  head and label baseline (PR) or title/body/labels snapshot (issue).
* :func:`read_snapshot` — the reads behind a delta and the head-move compare
  (docs/architecture.md "Delta").  Any read error aborts the delta:
  ``ForgeError`` propagates with a prefix naming the read (``listing comments:``, ``reading head
  SHA:``, ``listing reviews:``, ``listing review comments:``, ``reading labels:``, ``reading
  issue:``); the caller reports retry and marks nothing judged.

Work-item reads use the role token (the adapter's default credential for these calls).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime
from typing import Any

from fullsend.core.delta.changes import needs_compare
from fullsend.core.delta.headmove import COMPARE_ERROR, COMPARE_NOT_FOUND
from fullsend.core.delta.records import BaselineState, ForgeSnapshot
from fullsend.core.model import Comparison
from fullsend.core.provenance.verdicts import MyRun
from fullsend.core.watch.start import MISSING_LABEL_NAME, StartRefused, check_own_run, my_run_facts, start_head_sha
from fullsend.errors import ForgeError, NotFoundError, RateLimited
from fullsend.ports import Forge


def _read(prefix: str, call: Callable[..., Any], *args: Any) -> Any:
    """``call(*args)``; a ``ForgeError`` is re-raised with ``prefix`` and its status/verdict kept
    (a ``RateLimited`` stays one, with its end: the cycle pauses or settles on it)."""
    try:
        return call(*args)
    except NotFoundError as exc:
        raise NotFoundError(f"{prefix} {exc}") from None
    except RateLimited as exc:
        raise RateLimited(f"{prefix} {exc}", exc.until, exc.wait_s, exc.status) from None
    except ForgeError as exc:
        raise ForgeError(f"{prefix} {exc}", exc.status, transient=exc.transient) from None


def read_my_run(
    forge: Forge, run_id: int, run_name: str, item_number: int, started_at: datetime, stage_hints: Sequence[str]
) -> tuple[MyRun, list[str]]:
    """Read my own run and its jobs and fix the facts provenance needs.

    Returns :class:`MyRun` and log notes (title binding switched off, step 4).

    Raises:
        StartRefused: a read fails ("reading my own run <id>: …", "reading my own run's jobs: …")
            or a rule of ``fullsend.core.watch.start`` refuses (no path, no chain, Route/stage job).
    """
    try:
        run = forge.get_run(run_id)
    except ForgeError as exc:
        raise StartRefused(f"reading my own run {run_id}: {exc}") from None
    check_own_run(run, run_name)  # path and chain are refused before the jobs are read
    try:
        jobs = forge.list_run_jobs(run_id)
    except ForgeError as exc:
        raise StartRefused(f"reading my own run's jobs: {exc}") from None
    return my_run_facts(
        run, jobs, run_name=run_name, item_number=item_number, started_at=started_at, stage_hints=stage_hints
    )


def read_start_baseline(
    forge: Forge, number: int, item_label: str, since: datetime, env_head_sha: str, notes: list[str] | None = None
) -> BaselineState:
    """Resolve the work item and fix its baseline.

    ``GET …/pulls/{n}`` succeeds → a pull request: head = ``env_head_sha`` if set, else the
    forge's; labels from ``GET …/issues/{n}``.  404 → an issue: title, body and labels from
    ``GET …/issues/{n}``, no head.  ``since`` is the delta window start;
    ``item_label`` (``owner/repo#N``) only names the item in messages.  ``notes``, when given,
    receives ``MISSING_LABEL_NAME`` if the issue lists a label without a name.

    Raises:
        StartRefused: a non-404 error resolving PR-ness ("… is a pull request …"), or the issue
            read failing ("reading labels of …" / "reading issue …").  Messages carry no token.
    """
    try:
        pr = forge.get_pull_request(number)
    except NotFoundError:
        pr = None
    except ForgeError as exc:
        raise StartRefused(f"resolving whether {item_label} is a pull request: {exc}") from None
    try:
        issue = forge.get_issue(number)
    except ForgeError as exc:
        what = "reading labels of" if pr is not None else "reading issue"
        raise StartRefused(f"{what} {item_label}: {exc}") from None
    if issue.unnamed_labels and notes is not None:
        notes.append(MISSING_LABEL_NAME)
    if pr is not None:
        head = start_head_sha(env_head_sha, pr.head_sha)
        return BaselineState(since=since, is_pull_request=True, last_head=head, labels=tuple(issue.labels))
    return BaselineState(
        since=since, is_pull_request=False, last_head="", labels=tuple(issue.labels), title=issue.title, body=issue.body
    )


def read_snapshot(
    forge: Forge,
    state: BaselineState,
    number: int,
    named: AbstractSet[int] = frozenset(),
    named_threads: AbstractSet[int] = frozenset(),
) -> ForgeSnapshot:
    """All reads for one delta, in a fixed order.  Raises ``ForgeError`` (prefixed).

    Comments are listed with ``since`` = the baseline (a bandwidth filter; ``build_delta``
    re-applies the semantics); when a comment id in ``named`` (the ``comment:<id>`` of an
    accepted follow-up run's title) is not among them, the listing is read again without
    ``since``: that comment may be older than the baseline (docs/architecture.md "Delta").
    For a pull request: head, the comparison when the head moved from
    a known head (its failure becomes a reason, never raw error text), reviews, the review
    threads' comments (``GET …/pulls/{n}/comments``, re-read without ``since`` like the comments
    for an id in ``named_threads``, a ``review_comment:<id>``), labels.
    """
    comments = _read("listing comments:", forge.list_issue_comments, number, state.since)
    if named - {c.id for c in comments}:
        comments = _read("listing comments:", forge.list_issue_comments, number, None)
    if not state.is_pull_request:
        issue = _read("reading issue:", forge.get_issue, number)
        return ForgeSnapshot(comments=comments, issue=issue)
    head = _read("reading head SHA:", forge.get_pull_request, number).head_sha
    comparison, compare_error = _compare(forge, state, head)
    reviews = _read("listing reviews:", forge.list_reviews, number)
    threads = _read("listing review comments:", forge.list_review_comments, number, state.since)
    if named_threads - {c.id for c in threads}:
        threads = _read("listing review comments:", forge.list_review_comments, number, None)
    issue = _read("reading labels:", forge.get_issue, number)
    return ForgeSnapshot(
        comments=comments,
        issue=issue,
        head_sha=head,
        reviews=reviews,
        comparison=comparison,
        compare_error=compare_error,
        thread_comments=threads,
    )


def _compare(forge: Forge, state: BaselineState, head: str) -> tuple[Comparison | None, str]:
    """The comparison of a head move; an error becomes a reason code, never raw error text."""
    if not needs_compare(state, head):
        return None, ""
    try:
        return forge.compare(state.last_head, head), ""
    except NotFoundError:
        return None, COMPARE_NOT_FOUND
    except ForgeError:
        return None, COMPARE_ERROR
