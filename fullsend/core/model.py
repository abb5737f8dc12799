"""Frozen records of what the forge reports.

The GitHub adapter builds them from checked answers (``fullsend.adapters.github.records``).  A
field GitHub did not give holds its "unknown" value (empty string, ``None`` time, 0 id, empty
tuple), and every use of an unknown value fails safe (not fresh, not covered, not eligible, not a
receipt; docs/architecture.md "GitHub access").

Times are ``datetime`` in UTC or ``None`` for unknown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class ReferencedWorkflow:
    """One entry of a run's ``referenced_workflows`` (sha is never compared)."""

    path: str
    ref: str
    sha: str = ""


@dataclass(frozen=True)
class WorkflowRun:
    """A workflow run record (``GET …/actions/runs/{id}`` or a ``workflow_runs[]`` item).

    ``conclusion`` is read but never used as a verdict (docs/architecture.md "Provenance").
    ``run_attempt`` is 0 when unknown (fails closed for amendment authority).  ``updated_at``
    (``None`` when unknown) only picks the fresher of two copies of one run in a listing.
    """

    id: int
    path: str = ""
    event: str = ""
    status: str = ""
    conclusion: str | None = None
    created_at: datetime | None = None
    run_attempt: int = 0
    display_title: str = ""
    actor: str = ""
    triggering_actor: str = ""
    pull_requests: tuple[int, ...] = ()
    referenced_workflows: tuple[ReferencedWorkflow, ...] = ()
    name: str = ""
    html_url: str = ""
    head_sha: str = ""
    updated_at: datetime | None = None


@dataclass(frozen=True)
class RunListing:
    """One listing of the shim's runs: ``runs`` oldest first, each id once; ``capped`` is True
    when the listing's page bound was reached (older runs may be missing; docs/architecture.md
    "Listing")."""

    runs: tuple[WorkflowRun, ...] = ()
    capped: bool = False


@dataclass(frozen=True)
class Job:
    """A job of a workflow run; ``conclusion`` is ``None`` while queued or running."""

    id: int
    name: str
    status: str = ""
    conclusion: str | None = None
    run_attempt: int = 0


def latest_attempt_jobs(jobs: Sequence[Job]) -> list[Job]:
    """Each job name's record from the latest attempt that ran it.

    A run's jobs listed across attempts (``filter=all``) hold one record per attempt for every
    job a re-run repeated; a job that succeeded before "re-run failed jobs" appears only in its
    own attempt.  Keeps, per name, the records of the highest ``run_attempt`` (0 = unknown, the
    lowest), so two jobs of one name in one attempt stay two (ambiguity is not resolved here).
    Listing order is kept.
    """
    latest: dict[str, int] = {}
    for job in jobs:
        latest[job.name] = max(latest.get(job.name, job.run_attempt), job.run_attempt)
    return [job for job in jobs if job.run_attempt == latest[job.name]]


@dataclass(frozen=True)
class Comment:
    """An issue or pull-request comment (``GET …/issues/{n}/comments``).

    ``created_at_raw`` / ``updated_at_raw`` keep the API strings for the byte-for-byte edited
    check of receipts (docs/architecture.md "Receipt reader").  ``edited`` is what GraphQL's
    ``lastEditedAt`` says (``True`` once a person or token edited the body, ``False`` while it is
    ``null``); ``None`` when the comment was read over REST, which does not say.
    ``author_is_app`` is exactly ``user.type == "Bot"``.

    A comment in a pull request's review thread (``GET …/pulls/{n}/comments``) has
    ``in_thread`` set, its file ``path`` and ``line`` (the comment's ``line``, else its
    ``original_line`` on an outdated diff; 0 when neither, a comment on the whole file) and
    ``in_reply_to_id`` (0 for the thread's first comment).  Its id is of another series than an
    issue comment's.
    """

    id: int
    body: str = ""
    author: str = ""
    author_type: str = ""
    created_at: datetime | None = None
    updated_at: datetime | None = None
    created_at_raw: str = ""
    updated_at_raw: str = ""
    html_url: str = ""
    edited: bool | None = None
    in_thread: bool = False
    path: str = ""
    line: int = 0
    in_reply_to_id: int = 0

    @property
    def author_is_app(self) -> bool:
        return self.author_type == "Bot"


@dataclass(frozen=True)
class Review:
    """A pull-request review (``GET …/pulls/{n}/reviews``); always context, never an amendment."""

    id: int
    author: str = ""
    author_type: str = ""
    state: str = ""
    body: str = ""
    submitted_at: datetime | None = None
    commit_id: str = ""

    @property
    def author_is_app(self) -> bool:
        return self.author_type == "Bot"


@dataclass(frozen=True)
class Issue:
    """The issue record GitHub keeps for every issue and pull request (``GET …/issues/{n}``).

    ``created_at`` is ``None`` when unknown or malformed.  ``unnamed_labels`` counts the labels
    GitHub listed without a ``name`` (its schema requires none): they are left out of ``labels``,
    so a change among them is never reported.
    """

    number: int
    title: str = ""
    body: str = ""
    labels: tuple[str, ...] = ()
    unnamed_labels: int = 0
    is_pull_request: bool = False
    html_url: str = ""
    created_at: datetime | None = None


@dataclass(frozen=True)
class PullRequest:
    """The parts of ``GET …/pulls/{n}`` the run uses."""

    number: int
    head_sha: str = ""
    html_url: str = ""
    head_ref: str = ""
    head_repository: str = ""


@dataclass(frozen=True)
class CompareFile:
    """One ``files[]`` entry of a comparison; ``patch`` is ``None`` for binary or oversized files."""

    filename: str
    status: str = ""
    previous_filename: str = ""
    additions: int = 0
    deletions: int = 0
    patch: str | None = None


@dataclass(frozen=True)
class Comparison:
    """``GET …/compare/{base}...{head}`` (docs/architecture.md "Head moves")."""

    status: str
    ahead_by: int = 0
    behind_by: int = 0
    files: tuple[CompareFile, ...] = ()


@dataclass(frozen=True)
class Repo:
    """``owner/name`` of the repository the run works in."""

    owner: str
    name: str

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    @classmethod
    def parse(cls, value: str) -> Repo | None:
        """Split on the first ``/`` into two non-empty parts; ``None`` if the form is wrong."""
        owner, sep, name = (value or "").partition("/")
        if not sep or not owner or not name or "/" in name:
            return None
        return cls(owner, name)


@dataclass(frozen=True)
class WorkItem:
    """The issue or pull request a run works on; ``head_sha`` is empty for issues."""

    repo: Repo
    number: int
    is_pull_request: bool = False
    head_sha: str = ""
    labels: tuple[str, ...] = ()
    title: str = ""
    body: str = ""
    html_url: str = ""

    @property
    def run_name(self) -> str:
        """The work-item half of the shim's run-name contract, ``owner/repo#N`` (WIRE)."""
        return f"{self.repo.full_name}#{self.number}" if self.number > 0 else ""


@dataclass(frozen=True)
class ItemVersion:
    """The work item's version as the listing gate reads it (docs/architecture.md "Listing gate").

    ``key`` differs whenever either of its records changed; ``updated_at`` is the newest
    ``updated_at`` of its records (``None`` when a record gave none): the instant of the last
    change, which the run that change produced was created at or after.
    """

    key: str
    updated_at: datetime | None = None
