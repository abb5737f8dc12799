"""From checked answers (``fullsend.adapters.github.wire``) to the frozen core records.

Only values that passed the seam's checks get here, so these conversions cannot fail.  Two rules
of GitHub as it behaves live here because they need the adapter's knowledge of the repository:

* a run's ``pull_requests[]`` entry binds only when its base repository is this repository
  (``base.repo.url`` ends in ``/repos/{owner}/{name}``, compared without case): GitHub lists a
  PR of another repository, a fork's for instance, under the same number;
* an author without ``login`` or ``type`` is unknown (``""``), never a match for anyone;
* a body or title holding a lone surrogate (a JSON ``\\ud800`` escape, which no UTF-8 writer
  takes) has each one replaced by U+FFFD (``runner_safe``), so one stranger's text cannot stop
  the watch when it is encoded later.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from fullsend.adapters.github import wire
from fullsend.core.model import (
    Comment,
    CompareFile,
    Comparison,
    Issue,
    Job,
    PullRequest,
    ReferencedWorkflow,
    Repo,
    Review,
    WorkflowRun,
)
from fullsend.core.report.tally import ItemComment
from fullsend.core.scalars import parse_time
from fullsend.core.text.sanitize import runner_safe


def _author(user: wire.User | None) -> tuple[str, str]:
    if user is None or not user.login or not user.type:
        return "", ""
    return user.login, user.type


def _login(user: wire.User | None) -> str:
    return (user.login or "") if user is not None else ""


def in_repository(pr: wire.PullRequestMinimal, repo: Repo) -> bool:
    """True when the entry's base repository is ``repo`` (its API URL names ``owner/name``)."""
    url = pr.base.repo.url if pr.base is not None and pr.base.repo is not None else None
    if not url:
        return False
    return url.rstrip("/").lower().endswith(f"/repos/{repo.owner}/{repo.name}".lower())


def run_record(run: wire.WorkflowRun, repo: Repo) -> WorkflowRun:
    """A checked run as the core's ``WorkflowRun`` (``run_attempt`` 0 when GitHub did not say)."""
    prs = tuple(pr.number for pr in (run.pull_requests or ()) if in_repository(pr, repo))
    chain = tuple(ReferencedWorkflow(r.path, r.ref or "", r.sha or "") for r in (run.referenced_workflows or ()))
    return WorkflowRun(
        id=run.id,
        path=run.path,
        event=run.event,
        status=run.status or "",
        conclusion=run.conclusion or None,
        created_at=parse_time(run.created_at),
        run_attempt=run.run_attempt or 0,
        display_title=run.display_title or "",
        actor=_login(run.actor),
        triggering_actor=_login(run.triggering_actor),
        pull_requests=prs,
        referenced_workflows=chain,
        name=run.name or "",
        html_url=run.html_url,
        head_sha=run.head_sha,
        updated_at=parse_time(run.updated_at),
    )


def job_record(job: wire.Job) -> Job:
    return Job(
        id=job.id, name=job.name, status=job.status, conclusion=job.conclusion or None, run_attempt=job.run_attempt or 0
    )


def comment_record(comment: wire.IssueComment) -> Comment:
    login, kind = _author(comment.user)
    return Comment(
        id=comment.id,
        body=runner_safe(comment.body or ""),
        author=login,
        author_type=kind,
        created_at=parse_time(comment.created_at),
        updated_at=parse_time(comment.updated_at),
        created_at_raw=comment.created_at,
        updated_at_raw=comment.updated_at,
        html_url=comment.html_url,
    )


def review_comment_record(comment: wire.ReviewComment) -> Comment:
    """A review-thread comment: the comment with its file, line and the comment it answers."""
    line = comment.line if comment.line is not None else comment.original_line
    return replace(
        comment_record(comment),
        in_thread=True,
        path=comment.path,
        line=line if line is not None and line > 0 else 0,
        in_reply_to_id=comment.in_reply_to_id or 0,
    )


def item_comment_record(comment: wire.RepositoryComment) -> ItemComment:
    """The comment with its item's number, the last segment of its checked ``issue_url``."""
    return ItemComment(int(comment.issue_url.rsplit("/", 1)[1]), comment_record(comment))


def review_record(review: wire.Review) -> Review:
    login, kind = _author(review.user)
    return Review(
        id=review.id,
        author=login,
        author_type=kind,
        state=review.state,
        body=runner_safe(review.body or ""),
        submitted_at=parse_time(review.submitted_at),
        commit_id=review.commit_id or "",
    )


def issue_record(issue: wire.Issue) -> Issue:
    names = {label if isinstance(label, str) else label.name or "" for label in issue.labels}
    unnamed = sum(1 for label in issue.labels if not isinstance(label, str) and label.name is None)
    return Issue(
        number=issue.number,
        title=runner_safe(issue.title),
        body=runner_safe(issue.body or ""),
        labels=tuple(sorted(names - {""})),
        unnamed_labels=unnamed,
        is_pull_request=issue.pull_request is not None,
        html_url=issue.html_url,
        created_at=parse_time(issue.created_at),
    )


def pull_record(pr: wire.PullRequest) -> PullRequest:
    repo = pr.head.repo.full_name if pr.head.repo is not None else None
    return PullRequest(
        number=pr.number,
        head_sha=pr.head.sha,
        html_url=pr.html_url,
        head_ref=pr.head.ref or "",
        head_repository=repo or "",
    )


def comparison_record(comparison: wire.Comparison) -> Comparison:
    files = tuple(
        CompareFile(
            filename=f.filename,
            status=f.status,
            previous_filename=f.previous_filename or "",
            additions=f.additions,
            deletions=f.deletions,
            patch=f.patch,
        )
        for f in (comparison.files or ())
    )
    return Comparison(
        status=comparison.status, ahead_by=comparison.ahead_by, behind_by=comparison.behind_by, files=files
    )


ITEM_VERSION_FIELDS = ("updated_at", "comments", "review_comments", "state", "draft", "title", "body")


def item_version(etag: str, data: object) -> str:
    """One work-item record's version (docs/architecture.md "Listing gate"): its ETag and the
    fields the shim's events change (:data:`ITEM_VERSION_FIELDS`, ``head.sha``, label names),
    as one string.  Any answer, even one not of the documented shape, gives a string; a field
    it lacks is ``None`` in it (a change of shape is a change)."""
    record = data if isinstance(data, dict) else {}
    head = record.get("head")
    labels = record.get("labels")
    names = [label.get("name") for label in labels if isinstance(label, dict)] if isinstance(labels, list) else None
    fields = [repr(record.get(key)) for key in ITEM_VERSION_FIELDS]
    sha = head.get("sha") if isinstance(head, dict) else None
    return "|".join([etag, *fields, repr(sha), repr(names)])


def item_updated_at(data: object) -> datetime | None:
    """A work-item record's ``updated_at`` (``None`` when absent or malformed)."""
    return parse_time(data.get("updated_at")) if isinstance(data, dict) else None
