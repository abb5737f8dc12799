"""Frozen records of what the forge reports, built tolerantly from REST JSON.

Every constructor here accepts the raw JSON dict GitHub returns and never raises on bad forge
input (docs/architecture.md "GitHub access"): a missing field or a wrong type becomes the field's
"unknown" value (empty string, ``None`` time, 0 id, empty tuple), and every later use of an
unknown value fails safe (not fresh, not covered, not eligible, not a receipt).

Times are ``datetime`` in UTC or ``None`` for unknown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fullsend.core.scalars import INT64_MAX as INT64_MAX  # re-exported
from fullsend.core.scalars import created_query as created_query  # re-exported
from fullsend.core.scalars import decimal_id as decimal_id  # re-exported
from fullsend.core.scalars import format_time as format_time  # re-exported
from fullsend.core.scalars import parse_time as parse_time  # re-exported
from fullsend.core.watch.steer import DeliveredSteer as DeliveredSteer  # re-exported
from fullsend.core.watch.steer import SteerMessage as SteerMessage  # re-exported
from fullsend.core.watch.steer import SteerResult as SteerResult  # re-exported


def _str(d: Mapping[str, Any], key: str) -> str:
    v = d.get(key) if isinstance(d, Mapping) else None
    return v if isinstance(v, str) else ""


def _int(d: Mapping[str, Any], key: str) -> int:
    v = d.get(key) if isinstance(d, Mapping) else None
    if isinstance(v, bool) or not isinstance(v, int):
        return 0
    return v if -INT64_MAX - 1 <= v <= INT64_MAX else 0


def _opt_str(d: Mapping[str, Any], key: str) -> str | None:
    v = d.get(key) if isinstance(d, Mapping) else None
    return v if isinstance(v, str) and v != "" else None


def _user(d: Mapping[str, Any], key: str = "user") -> tuple[str, str]:
    u = d.get(key) if isinstance(d, Mapping) else None
    if not isinstance(u, Mapping):
        return "", ""
    return _str(u, "login"), _str(u, "type")


def _list(d: Mapping[str, Any], key: str) -> list[Any]:
    v = d.get(key) if isinstance(d, Mapping) else None
    return v if isinstance(v, list) else []


@dataclass(frozen=True)
class ReferencedWorkflow:
    """One entry of a run's ``referenced_workflows`` (sha is never compared)."""

    path: str
    ref: str
    sha: str = ""

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ReferencedWorkflow:
        if not isinstance(d, Mapping):
            d = {}
        return cls(path=_str(d, "path"), ref=_str(d, "ref"), sha=_str(d, "sha"))


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

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> WorkflowRun:
        """Build from REST JSON; never raises (unknown fields get their unknown value)."""
        if not isinstance(d, Mapping):
            d = {}
        prs = tuple(
            n for n in (_int(p, "number") for p in _list(d, "pull_requests") if isinstance(p, Mapping)) if n > 0
        )
        chain = tuple(
            ReferencedWorkflow.from_json(r) for r in _list(d, "referenced_workflows") if isinstance(r, Mapping)
        )
        actor, _ = _user(d, "actor")
        trig, _ = _user(d, "triggering_actor")
        return cls(
            id=_int(d, "id"),
            path=_str(d, "path"),
            event=_str(d, "event"),
            status=_str(d, "status"),
            conclusion=_opt_str(d, "conclusion"),
            created_at=parse_time(d.get("created_at")),
            run_attempt=_int(d, "run_attempt"),
            display_title=_str(d, "display_title"),
            actor=actor,
            triggering_actor=trig,
            pull_requests=prs,
            referenced_workflows=chain,
            name=_str(d, "name"),
            html_url=_str(d, "html_url"),
            head_sha=_str(d, "head_sha"),
            updated_at=parse_time(d.get("updated_at")),
        )


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

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Job:
        if not isinstance(d, Mapping):
            d = {}
        return cls(
            id=_int(d, "id"),
            name=_str(d, "name"),
            status=_str(d, "status"),
            conclusion=_opt_str(d, "conclusion"),
            run_attempt=_int(d, "run_attempt"),
        )


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

    @property
    def author_is_app(self) -> bool:
        return self.author_type == "Bot"

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Comment:
        if not isinstance(d, Mapping):
            d = {}
        login, typ = _user(d)
        return cls(
            id=_int(d, "id"),
            body=_str(d, "body"),
            author=login,
            author_type=typ,
            created_at=parse_time(d.get("created_at")),
            updated_at=parse_time(d.get("updated_at")),
            created_at_raw=_str(d, "created_at"),
            updated_at_raw=_str(d, "updated_at"),
            html_url=_str(d, "html_url"),
        )


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

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Review:
        if not isinstance(d, Mapping):
            d = {}
        login, typ = _user(d)
        return cls(
            id=_int(d, "id"),
            author=login,
            author_type=typ,
            state=_str(d, "state"),
            body=_str(d, "body"),
            submitted_at=parse_time(d.get("submitted_at")),
            commit_id=_str(d, "commit_id"),
        )


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

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Issue:
        if not isinstance(d, Mapping):
            d = {}
        labels = tuple(sorted({_str(lab, "name") for lab in _list(d, "labels") if isinstance(lab, Mapping)} - {""}))
        return cls(
            number=_int(d, "number"),
            title=_str(d, "title"),
            body=_str(d, "body"),
            labels=labels,
            is_pull_request=isinstance(d.get("pull_request"), Mapping) if isinstance(d, Mapping) else False,
            html_url=_str(d, "html_url"),
            created_at=parse_time(d.get("created_at")),
        )


@dataclass(frozen=True)
class PullRequest:
    """The parts of ``GET …/pulls/{n}`` the run uses."""

    number: int
    head_sha: str = ""
    html_url: str = ""

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> PullRequest:
        if not isinstance(d, Mapping):
            d = {}
        head = d.get("head") if isinstance(d, Mapping) else None
        sha = _str(head, "sha") if isinstance(head, Mapping) else ""
        return cls(number=_int(d, "number"), head_sha=sha, html_url=_str(d, "html_url"))


@dataclass(frozen=True)
class CompareFile:
    """One ``files[]`` entry of a comparison; ``patch`` is ``None`` for binary or oversized files."""

    filename: str
    status: str = ""
    previous_filename: str = ""
    additions: int = 0
    deletions: int = 0
    patch: str | None = None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> CompareFile:
        if not isinstance(d, Mapping):
            d = {}
        patch = d.get("patch") if isinstance(d, Mapping) else None
        return cls(
            filename=_str(d, "filename"),
            status=_str(d, "status"),
            previous_filename=_str(d, "previous_filename"),
            additions=_int(d, "additions"),
            deletions=_int(d, "deletions"),
            patch=patch if isinstance(patch, str) else None,
        )


@dataclass(frozen=True)
class Comparison:
    """``GET …/compare/{base}...{head}`` (docs/architecture.md "Head moves")."""

    status: str
    ahead_by: int = 0
    behind_by: int = 0
    files: tuple[CompareFile, ...] = ()

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Comparison:
        if not isinstance(d, Mapping):
            d = {}
        return cls(
            status=_str(d, "status"),
            ahead_by=_int(d, "ahead_by"),
            behind_by=_int(d, "behind_by"),
            files=tuple(CompareFile.from_json(f) for f in _list(d, "files") if isinstance(f, Mapping)),
        )


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
