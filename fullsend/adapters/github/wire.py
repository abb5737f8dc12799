"""Typed records of GitHub's answers, checked at the adapter seam (pydantic, strict).

Every answer the adapter reads is validated here before anything decides on it: a field the
action reads that is missing, ``null`` where GitHub never sends ``null``, of the wrong JSON type,
an id outside GitHub's range (1 … 2**53 − 1) or a time that is not RFC 3339 makes the whole read a
``MalformedResponse`` naming the endpoint and the field.  The caller then applies its own
fail-open or fail-closed rule; no shape reaches ``fullsend.core`` half-read.

Some fields are unknown rather than malformed when absent, because GitHub documents them so or the
project decided it: a comment's or review's author (``user`` may be ``null``; an author without
``login`` or ``type`` is an unknown author, never the job bot), a run's ``run_attempt``,
``referenced_workflows`` and ``display_title``, a label's ``name`` and the App's ``slug``.  No
model requires a field that the OpenAPI description of api.github.com or of a supported GitHub
Enterprise Server release leaves optional (docs/adopting.md "GitHub Enterprise Server").  Fields
the action never reads are ignored.  Field names are GitHub's (the OpenAPI descriptions in
tests/data/openapi).
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from fullsend.core.scalars import parse_time
from fullsend.errors import MalformedResponse

GITHUB_ID_MAX = 2**53 - 1  # ids GitHub hands out fit a JavaScript number; a larger one is malformed


def _rfc3339(value: str) -> str:
    if parse_time(value) is None:
        raise ValueError("not an RFC 3339 time")
    return value


Id = Annotated[int, Field(ge=1, le=GITHUB_ID_MAX)]
Number = Annotated[int, Field(ge=1, le=GITHUB_ID_MAX)]
Count = Annotated[int, Field(ge=0, le=GITHUB_ID_MAX)]
Time = Annotated[str, AfterValidator(_rfc3339)]
#: An ``issue_url``: its last segment is the item's number (``…/issues/<n>``).
IssueUrl = Annotated[str, Field(pattern=r"/issues/[1-9][0-9]{0,15}$")]


class Wire(BaseModel):
    """Strict (no coercion: ``"5"`` is not 5, ``true`` is not 1), frozen, unknown fields ignored."""

    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")


class User(Wire):
    """A ``simple-user``; ``login``/``type`` absent ⇒ unknown (never a match for anyone)."""

    login: str | None = None
    type: str | None = None


class Repository(Wire):
    url: str | None = None


class PullRequestBase(Wire):
    repo: Repository | None = None


class PullRequestMinimal(Wire):
    """A ``pull_requests[]`` entry of a run: the PR ``number`` and the repository it is based in."""

    number: Number
    base: PullRequestBase | None = None


class ReferencedWorkflow(Wire):
    path: str
    ref: str | None = None
    sha: str | None = None


class WorkflowRun(Wire):
    id: Id
    path: str
    event: str
    status: str | None
    conclusion: str | None
    created_at: Time
    updated_at: Time
    display_title: str | None = None  # absent on older GHES: title binding is off (docs/architecture.md "Binding")
    head_sha: str
    html_url: str
    pull_requests: list[PullRequestMinimal] | None
    run_attempt: Count | None = None
    name: str | None = None
    actor: User | None = None
    triggering_actor: User | None = None
    referenced_workflows: list[ReferencedWorkflow] | None = None


class WorkflowRunsPage(Wire):
    total_count: Count
    workflow_runs: list[WorkflowRun]


class Job(Wire):
    id: Id
    name: str
    status: str
    conclusion: str | None
    run_attempt: Count | None = None


class JobsPage(Wire):
    total_count: Count
    jobs: list[Job]


class IssueComment(Wire):
    id: Id
    user: User | None
    created_at: Time
    updated_at: Time
    html_url: str
    body: str | None = None


class RepositoryComment(IssueComment):
    """A comment of ``GET …/issues/comments`` (the repository's listing): it names its item."""

    issue_url: IssueUrl


class ReviewComment(IssueComment):
    """A comment of a pull request's review thread (``GET …/pulls/{n}/comments``): its file
    ``path``, ``line`` (``null`` on an outdated diff), ``original_line`` and ``in_reply_to_id``
    (absent on a thread's first comment)."""

    path: str
    line: int | None = None
    original_line: int | None = None
    in_reply_to_id: int | None = None


class Review(Wire):
    id: Id
    user: User | None
    state: str
    commit_id: str | None
    body: str | None = None
    submitted_at: Time | None = None


class PostedReview(Wire):
    """The answer to ``POST …/pulls/{n}/reviews``."""

    id: Id
    state: str
    html_url: str


class Label(Wire):
    """An issue label; ``name`` absent ⇒ unknown (GitHub's label schema requires none of its fields)."""

    name: str | None = None


class Issue(Wire):
    number: Number
    title: str
    html_url: str
    labels: list[str | Label]
    created_at: Time
    body: str | None = None
    pull_request: dict[str, Any] | None = None


class HeadRepository(Wire):
    full_name: str | None = None


class Head(Wire):
    sha: str
    ref: str | None = None
    repo: HeadRepository | None = None  # null when the fork was deleted


class PullRequest(Wire):
    number: Number
    head: Head
    html_url: str


class DiffEntry(Wire):
    filename: str
    status: str
    additions: Count
    deletions: Count
    patch: str | None = None
    previous_filename: str | None = None


class Comparison(Wire):
    status: str
    ahead_by: Count
    behind_by: Count
    files: list[DiffEntry] | None = None


class AuthenticatedUser(Wire):
    login: Annotated[str, Field(min_length=1)]


class App(Wire):
    """``GET /app``; ``slug`` absent ⇒ unknown (GitHub's ``integration`` schema does not require it)."""

    slug: Annotated[str, Field(min_length=1)] | None = None


M = TypeVar("M", bound=BaseModel)


class CollaboratorPermission(Wire):
    """``GET …/collaborators/{login}/permission``: ``role_name`` is admin, maintain, write, triage,
    read, none or a custom role's name."""

    role_name: str


def _field_names() -> frozenset[str]:
    return frozenset(name for cls in Wire.__subclasses__() for name in cls.model_fields)


def field_path(loc: tuple[Any, ...]) -> str:
    """A pydantic error location as a dotted path: ``("jobs", 3, "name")`` → ``jobs[3].name``
    (the tags pydantic adds for the branches of a union are not fields and are left out)."""
    names, out = _field_names(), ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in names:
            out += ("." if out else "") + str(part)
    return out


def parse(model: type[M], data: Any, endpoint: str, status: int | None = None) -> M:
    """``data`` as ``model``.  Raises ``MalformedResponse(endpoint, field)`` for the first defect."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _malformed(exc, endpoint, status) from None


def parse_list(model: type[M], data: Any, endpoint: str) -> list[M]:
    """A JSON array whose every item is ``model`` (an object where the array belongs is malformed).
    Raises ``MalformedResponse`` naming the item (``[3].user.type``)."""
    try:
        return TypeAdapter(list[model]).validate_python(data, strict=True)  # type: ignore[valid-type]  # model is a runtime type
    except ValidationError as exc:
        raise _malformed(exc, endpoint, None) from None


def _malformed(exc: ValidationError, endpoint: str, status: int | None) -> MalformedResponse:
    first = exc.errors()[0]
    field = field_path(tuple(first.get("loc", ())))
    return MalformedResponse(endpoint, field, str(first.get("msg", "invalid")), status)
