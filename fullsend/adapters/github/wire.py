"""Typed records of GitHub's answers, checked at the adapter seam (pydantic, strict).

Every answer the adapter reads — REST and GraphQL, on the working path and on the fast skip
alike: one checker, pydantic (docs/architecture.md "GitHub access") — is validated here before
anything decides on it: a field the decision needs that is missing, ``null`` where GitHub never
sends ``null``, of the wrong JSON type (no coercion: ``"5"`` is not 5, ``true`` is not 1), an id
outside GitHub's range (1 … 2**53 − 1) or a time that is not RFC 3339 makes the whole read a
``MalformedResponse`` naming the endpoint and the field.  The caller then applies its own
fail-open or fail-closed rule; no shape reaches ``fullsend.core`` half-read.

Lenient as GitHub is: a field no decision needs (marked :data:`LENIENT`: a link, a count shown
but never judged) may be absent; the record then holds its default and :func:`parse` names the
field to ``noted``, so the forge logs one warning for it.  Some fields are unknown rather than
malformed when absent, because GitHub documents them so or the project decided it: a comment's or
review's author (``user`` may be ``null``; an author without ``login`` or ``type`` is an unknown
author, never the job bot), a run's ``run_attempt``, ``referenced_workflows`` and
``display_title``, a label's ``name`` and the App's ``slug``.  No model requires a field that the
OpenAPI description of api.github.com or of a supported GitHub Enterprise Server release leaves
optional (docs/adopting.md "GitHub Enterprise Server").  Fields the action never reads are
ignored.  Field names are GitHub's (the OpenAPI descriptions in tests/data/openapi).

Every model defers building its validator to its first use (``defer_build``): a fast skip builds
only the few models its reads need, not all of them at import.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
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


class Lenient:
    """The mark of a field no decision needs: absent, it takes its default and is named once."""

    def __repr__(self) -> str:
        return "LENIENT"


LENIENT = Lenient()
Link = Annotated[str, LENIENT]  # an html_url: shown, never decided on


class Wire(BaseModel):
    """Strict (no coercion: ``"5"`` is not 5, ``true`` is not 1), frozen, unknown fields ignored;
    the validator is built at the model's first use."""

    model_config = ConfigDict(strict=True, frozen=True, extra="ignore", defer_build=True)


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


class WorkflowRunsPage(Wire):
    total_count: Annotated[Count, LENIENT] = 0  # never trusted: paging goes on while pages are full
    workflow_runs: list[WorkflowRun]


class Job(Wire):
    id: Id
    name: str
    status: str
    conclusion: str | None
    run_attempt: Count | None = None


class JobsPage(Wire):
    total_count: Annotated[Count, LENIENT] = 0
    jobs: list[Job]


class IssueComment(Wire):
    id: Id
    user: User | None
    created_at: Time
    updated_at: Time
    html_url: Link = ""
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
    html_url: Link = ""


class Label(Wire):
    """An issue label; ``name`` absent ⇒ unknown (GitHub's label schema requires none of its fields)."""

    name: str | None = None


class Issue(Wire):
    number: Number
    title: str
    html_url: Link = ""
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
    html_url: Link = ""


class DiffEntry(Wire):
    filename: str
    status: str
    additions: Annotated[Count, LENIENT] = 0  # shown in a head move's context, never judged
    deletions: Annotated[Count, LENIENT] = 0
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


class CollaboratorPermission(Wire):
    """``GET …/collaborators/{login}/permission``: ``role_name`` is admin, maintain, write, triage,
    read, none or a custom role's name."""

    role_name: str


M = TypeVar("M", bound=Wire)
Noted = Callable[[str], None]


def parse(model: type[M], data: Any, endpoint: str, status: int | None = None, noted: Noted | None = None) -> M:
    """``data`` as ``model``.  Raises ``MalformedResponse(endpoint, field)`` for the first defect;
    calls ``noted`` with the path of each :data:`LENIENT` field left out (``comments.nodes[3].url``)."""
    try:
        record = model.model_validate(data)
    except ValidationError as exc:
        raise _malformed(exc, endpoint, status) from None
    if noted is not None:
        for path in absent_lenient(record):
            noted(path)
    return record


def parse_list(model: type[M], data: Any, endpoint: str, noted: Noted | None = None) -> list[M]:
    """A JSON array whose every item is ``model`` (an object where the array belongs is malformed).
    Raises ``MalformedResponse`` naming the item (``[3].user.type``); ``noted`` as for :func:`parse`."""
    try:
        records: list[M] = _list_of(model).validate_python(data, strict=True)
    except ValidationError as exc:
        raise _malformed(exc, endpoint, None) from None
    if noted is not None:
        for i, record in enumerate(records):
            for path in absent_lenient(record, f"[{i}]"):
                noted(path)
    return records


@functools.cache
def _list_of(model: type[Wire]) -> TypeAdapter[list[Any]]:
    return TypeAdapter(list[model])  # type: ignore[valid-type]  # model is a runtime type


def absent_lenient(record: Wire, path: str = "") -> Iterator[str]:
    """The path of every :data:`LENIENT` field ``record`` (nested records too) was given no value for."""
    given = record.model_fields_set
    for name, field in type(record).model_fields.items():
        key = field.alias or name
        where = f"{path}.{key}" if path else key
        if LENIENT in field.metadata and name not in given:
            yield where
        value = getattr(record, name)
        if isinstance(value, Wire):
            yield from absent_lenient(value, where)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, Wire):
                    yield from absent_lenient(item, f"{where}[{i}]")


def _field_names() -> frozenset[str]:
    names: set[str] = set()
    todo = list(Wire.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        names.update(f.alias or name for name, f in cls.model_fields.items())
    return frozenset(names)


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


def _malformed(exc: ValidationError, endpoint: str, status: int | None) -> MalformedResponse:
    first = exc.errors()[0]
    field = field_path(tuple(first.get("loc", ())))
    return MalformedResponse(endpoint, field, str(first.get("msg", "invalid")), status)
