"""Typed records of GitHub's answers, checked at the adapter seam (standard library, strict).

Every answer the adapter reads — REST and GraphQL, on the working path and on the fast skip
alike: one checker per shape — is checked here before anything decides on it: a field the
decision needs that is missing, ``null`` where GitHub never sends ``null``, of the wrong JSON type
(no coercion: ``"5"`` is not 5, ``true`` is not 1), an id outside GitHub's range (1 … 2**53 − 1) or
a time that is not RFC 3339 makes the whole read a ``MalformedResponse`` naming the endpoint and
the field.  The caller then applies its own fail-open or fail-closed rule; no shape reaches
``fullsend.core`` half-read.

Lenient as GitHub is (docs/architecture.md "GitHub access"): a field no decision needs
(``Lenient``: a link, a count shown but never judged) may be absent; the record then holds its
default and ``parse`` names the field to ``noted``, so the forge logs one warning for it.  Some
fields are unknown rather than malformed when absent, because GitHub documents them so or the
project decided it: a comment's or review's author (``user`` may be ``null``; an author without
``login`` or ``type`` is an unknown author, never the job bot), a run's ``run_attempt``,
``referenced_workflows`` and ``display_title``, a label's ``name`` and the App's ``slug``.  No
record requires a field that the OpenAPI description of api.github.com or of a supported GitHub
Enterprise Server release leaves optional (docs/adopting.md "GitHub Enterprise Server").  Fields
the action never reads are ignored.  Field names are GitHub's (the OpenAPI descriptions in
tests/data/openapi).

A record is a frozen dataclass whose annotations say the check (``fullsend.adapters.github.check``,
the one checker); ``parse`` and ``parse_list`` are re-exported here for the adapter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fullsend.adapters.github.check import (
    GITHUB_ID_MAX,
    LENIENT,
    NON_EMPTY,
    RFC3339,
    Alias,
    Count,
    FieldSpec,
    Id,
    IssueUrl,
    Link,
    Noted,
    Number,
    Pattern,
    Range,
    Time,
    Wire,
    field_path,
    fields_of,
    marks_of,
    parse,
    parse_list,
)

__all__ = [
    "GITHUB_ID_MAX",
    "LENIENT",
    "NON_EMPTY",
    "RFC3339",
    "Alias",
    "Count",
    "FieldSpec",
    "Id",
    "IssueUrl",
    "Link",
    "Noted",
    "Number",
    "Pattern",
    "Range",
    "Time",
    "Wire",
    "field_path",
    "fields_of",
    "marks_of",
    "parse",
    "parse_list",
]


@dataclass(frozen=True, kw_only=True)
class User(Wire):
    """A ``simple-user``; ``login``/``type`` absent ⇒ unknown (never a match for anyone)."""

    login: str | None = None
    type: str | None = None


@dataclass(frozen=True, kw_only=True)
class Repository(Wire):
    url: str | None = None


@dataclass(frozen=True, kw_only=True)
class PullRequestBase(Wire):
    repo: Repository | None = None


@dataclass(frozen=True, kw_only=True)
class PullRequestMinimal(Wire):
    """A ``pull_requests[]`` entry of a run: the PR ``number`` and the repository it is based in."""

    number: Number
    base: PullRequestBase | None = None


@dataclass(frozen=True, kw_only=True)
class ReferencedWorkflow(Wire):
    path: str
    ref: str | None = None
    sha: str | None = None


@dataclass(frozen=True, kw_only=True)
class WorkflowRun(Wire):
    id: Id
    path: str
    event: str
    status: str | None
    conclusion: str | None
    created_at: Time
    updated_at: Annotated[Time, LENIENT] = ""  # only orders two reads of one run
    display_title: str | None = None  # absent on older GHES: title binding is off (docs/architecture.md "Binding")
    head_sha: str
    html_url: Link = ""
    pull_requests: list[PullRequestMinimal] | None
    run_attempt: Count | None = None
    name: str | None = None
    actor: User | None = None
    triggering_actor: User | None = None
    referenced_workflows: list[ReferencedWorkflow] | None = None


@dataclass(frozen=True, kw_only=True)
class WorkflowRunsPage(Wire):
    total_count: Annotated[Count, LENIENT] = 0  # never trusted: paging goes on while pages are full
    workflow_runs: list[WorkflowRun]


@dataclass(frozen=True, kw_only=True)
class Job(Wire):
    id: Id
    name: str
    status: str
    conclusion: str | None
    run_attempt: Count | None = None


@dataclass(frozen=True, kw_only=True)
class JobsPage(Wire):
    total_count: Annotated[Count, LENIENT] = 0
    jobs: list[Job]


@dataclass(frozen=True, kw_only=True)
class IssueComment(Wire):
    id: Id
    user: User | None
    created_at: Time
    updated_at: Time
    html_url: Link = ""
    body: str | None = None


@dataclass(frozen=True, kw_only=True)
class RepositoryComment(IssueComment):
    """A comment of ``GET …/issues/comments`` (the repository's listing): it names its item."""

    issue_url: IssueUrl


@dataclass(frozen=True, kw_only=True)
class ReviewComment(IssueComment):
    """A comment of a pull request's review thread (``GET …/pulls/{n}/comments``): its file
    ``path``, ``line`` (``null`` on an outdated diff), ``original_line`` and ``in_reply_to_id``
    (absent on a thread's first comment)."""

    path: str
    line: int | None = None
    original_line: int | None = None
    in_reply_to_id: int | None = None


@dataclass(frozen=True, kw_only=True)
class Review(Wire):
    id: Id
    user: User | None
    state: str
    commit_id: str | None
    body: str | None = None
    submitted_at: Time | None = None


@dataclass(frozen=True, kw_only=True)
class PostedReview(Wire):
    """The answer to ``POST …/pulls/{n}/reviews``."""

    id: Id
    state: str
    html_url: Link = ""


@dataclass(frozen=True, kw_only=True)
class Label(Wire):
    """An issue label; ``name`` absent ⇒ unknown (GitHub's label schema requires none of its fields)."""

    name: str | None = None


@dataclass(frozen=True, kw_only=True)
class Issue(Wire):
    number: Number
    title: str
    html_url: Link = ""
    labels: list[str | Label]
    created_at: Time
    body: str | None = None
    pull_request: dict[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class Head(Wire):
    sha: str


@dataclass(frozen=True, kw_only=True)
class PullRequest(Wire):
    number: Number
    head: Head
    html_url: Link = ""


@dataclass(frozen=True, kw_only=True)
class DiffEntry(Wire):
    filename: str
    status: str
    additions: Annotated[Count, LENIENT] = 0  # shown in a head move's context, never judged
    deletions: Annotated[Count, LENIENT] = 0
    patch: str | None = None
    previous_filename: str | None = None


@dataclass(frozen=True, kw_only=True)
class Comparison(Wire):
    status: str
    ahead_by: Count
    behind_by: Count
    files: list[DiffEntry] | None = None


@dataclass(frozen=True, kw_only=True)
class AuthenticatedUser(Wire):
    login: Annotated[str, NON_EMPTY]


@dataclass(frozen=True, kw_only=True)
class App(Wire):
    """``GET /app``; ``slug`` absent ⇒ unknown (GitHub's ``integration`` schema does not require it)."""

    slug: Annotated[str, NON_EMPTY] | None = None


@dataclass(frozen=True, kw_only=True)
class CollaboratorPermission(Wire):
    """``GET …/collaborators/{login}/permission``: ``role_name`` is admin, maintain, write, triage,
    read, none or a custom role's name."""

    role_name: str
