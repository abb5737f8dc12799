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

A record is a frozen dataclass; its annotations say the check: ``Annotated`` with :class:`Range`,
:data:`RFC3339`, :class:`Pattern`, :data:`LENIENT` or :class:`Alias` (the JSON name, where it is
not a Python name).  Standard library only: the fast skip decides on these records before any
third-party library is loaded but urllib3.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar, Union

from fullsend.core.scalars import parse_time
from fullsend.errors import MalformedResponse

GITHUB_ID_MAX = 2**53 - 1  # ids GitHub hands out fit a JavaScript number; a larger one is malformed


@dataclass(frozen=True)
class Range:
    """A whole number from ``low`` to ``high``, both included."""

    low: int
    high: int


@dataclass(frozen=True)
class Pattern:
    """A string the regular expression matches whole."""

    regex: str


@dataclass(frozen=True)
class Alias:
    """The field's name in the JSON (``__typename``)."""

    name: str


RFC3339 = "rfc3339"  # marker: a string that is an RFC 3339 time
LENIENT = "lenient"  # marker: no decision needs the field; absent, it takes its default and is named
NON_EMPTY = Pattern(r"(?s).+")

Id = Annotated[int, Range(1, GITHUB_ID_MAX)]
Number = Annotated[int, Range(1, GITHUB_ID_MAX)]
Count = Annotated[int, Range(0, GITHUB_ID_MAX)]
Time = Annotated[str, RFC3339]
#: An ``issue_url``: its last segment is the item's number (``…/issues/<n>``).
IssueUrl = Annotated[str, Pattern(r".*/issues/[1-9][0-9]{0,15}")]
Link = Annotated[str, LENIENT]  # an html_url: shown, never decided on


class Wire:
    """The base of every record: a frozen dataclass checked by :func:`parse`."""


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


M = TypeVar("M", bound=Wire)
Noted = Callable[[str], None]


class _Defect(Exception):
    def __init__(self, path: str, problem: str) -> None:
        super().__init__(problem)
        self.path, self.problem = path, problem


def parse(model: type[M], data: Any, endpoint: str, status: int | None = None, noted: Noted | None = None) -> M:
    """``data`` as ``model``.  Raises ``MalformedResponse(endpoint, field)`` for the first defect;
    calls ``noted`` with the path of each absent :data:`LENIENT` field (``[3].html_url``)."""
    try:
        return typing.cast(M, _record(model, data, "", noted))
    except _Defect as defect:
        raise MalformedResponse(endpoint, defect.path, defect.problem, status) from None


def parse_list(model: type[M], data: Any, endpoint: str, noted: Noted | None = None) -> list[M]:
    """A JSON array whose every item is ``model`` (an object where the array belongs is malformed).
    Raises ``MalformedResponse`` naming the item (``[3].user.type``)."""
    try:
        return typing.cast(list[M], _value(list[model], data, "", noted))  # type: ignore[valid-type]  # model is a runtime type
    except _Defect as defect:
        raise MalformedResponse(endpoint, defect.path, defect.problem, None) from None


@dataclass(frozen=True)
class FieldSpec:
    """One field of a record: its Python ``name``, JSON ``key``, ``kind`` (the annotation without
    its markers), ``marks``, whether it is ``required`` (no default) and its ``default``."""

    name: str
    key: str
    kind: Any
    marks: tuple[Any, ...]
    required: bool
    default: Any

    @property
    def lenient(self) -> bool:
        return LENIENT in self.marks or any(LENIENT in _marks(a)[1] for a in typing.get_args(self.kind))


_SPECS: dict[type, tuple[FieldSpec, ...]] = {}


def fields_of(model: type) -> tuple[FieldSpec, ...]:
    """The fields of a record, in order (cached)."""
    specs = _SPECS.get(model)
    if specs is None:
        hints = typing.get_type_hints(model, include_extras=True)
        found = []
        for f in dataclasses.fields(model):
            kind, marks = _marks(hints[f.name])
            key = next((m.name for m in marks if isinstance(m, Alias)), f.name)
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            found.append(FieldSpec(f.name, key, kind, marks, required, None if required else f.default))
        specs = _SPECS[model] = tuple(found)
    return specs


def _marks(annotation: Any) -> tuple[Any, tuple[Any, ...]]:
    if typing.get_origin(annotation) is Annotated:
        base, *marks = typing.get_args(annotation)
        inner, more = _marks(base)
        return inner, (*more, *marks)
    return annotation, ()


def _record(model: type, data: Any, path: str, noted: Noted | None) -> Any:
    if not isinstance(data, dict):
        raise _Defect(path, "not an object")
    values = {}
    for spec in fields_of(model):
        where = f"{path}.{spec.key}" if path else spec.key
        if spec.key not in data:
            if spec.required:
                raise _Defect(where, "the field is missing")
            if spec.lenient and noted is not None:
                noted(where)
            values[spec.name] = spec.default
            continue
        values[spec.name] = _value(spec.kind, data[spec.key], where, noted, spec.marks)
    return model(**values)


def _value(kind: Any, value: Any, path: str, noted: Noted | None, marks: tuple[Any, ...] = ()) -> Any:
    kind, more = _marks(kind)
    marks = (*marks, *more)
    origin = typing.get_origin(kind)
    if origin in (Union, types.UnionType):
        return _union(typing.get_args(kind), value, path, noted, marks)
    if kind is Any:
        return value
    if isinstance(kind, type) and issubclass(kind, Wire):
        return _record(kind, value, path, noted)
    if origin is list:
        if not isinstance(value, list):
            raise _Defect(path, "not an array")
        (item,) = typing.get_args(kind)
        return [_value(item, v, f"{path}[{i}]", noted) for i, v in enumerate(value)]
    if origin is dict or kind is dict:
        if not isinstance(value, dict):
            raise _Defect(path, "not an object")
        return value
    return _scalar(kind, value, path, marks)


def _union(members: tuple[Any, ...], value: Any, path: str, noted: Noted | None, marks: tuple[Any, ...]) -> Any:
    if value is None:
        if type(None) in members:
            return None
        raise _Defect(path, "null where a value belongs")
    first: _Defect | None = None
    for member in (m for m in members if m is not type(None)):
        try:
            return _value(member, value, path, noted, marks)
        except _Defect as defect:
            first = first or defect
    assert first is not None  # a union has at least one member besides None
    raise first


def _scalar(kind: Any, value: Any, path: str, marks: tuple[Any, ...]) -> Any:
    if value is None:
        raise _Defect(path, "null where a value belongs")
    if kind is bool:
        if type(value) is not bool:
            raise _Defect(path, "not a boolean")
        return value
    if kind is int:
        if type(value) is not int:
            raise _Defect(path, "not a whole number")
        for mark in marks:
            if isinstance(mark, Range) and not mark.low <= value <= mark.high:
                raise _Defect(path, f"outside {mark.low}..{mark.high}")
        return value
    if kind is str:
        if type(value) is not str:
            raise _Defect(path, "not a string")
        for mark in marks:
            if isinstance(mark, Pattern) and not re.fullmatch(mark.regex, value):
                raise _Defect(path, "not of the expected form")
            if mark == RFC3339 and parse_time(value) is None:
                raise _Defect(path, "not an RFC 3339 time")
        return value
    raise TypeError(f"no check for {kind!r} at {path}")  # a record's annotation this checker does not know


def field_path(names: tuple[Any, ...]) -> str:
    """A location as a dotted path: ``("jobs", 3, "name")`` → ``jobs[3].name``."""
    out = ""
    for part in names:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out
