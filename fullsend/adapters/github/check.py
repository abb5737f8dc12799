"""The checker of GitHub's answers: frozen dataclass records whose annotations say the check.

One checker for every typed answer, REST and GraphQL, on the working path and on the fast skip
(docs/architecture.md "GitHub access").  A record subclasses :class:`Wire`; each field's
annotation gives its JSON type, checked without coercion (``"5"`` is not 5, ``true`` is not 1),
and ``Annotated`` markers add to it: :class:`Range` (whole numbers), :data:`RFC3339` (times),
:class:`Pattern` (a string matched whole), :class:`Alias` (the JSON name, where it is not a Python
name) and :data:`LENIENT` (no decision needs the field: absent, it takes its default and
:func:`parse` names it to ``noted``).  A field without a default is required; ``None`` is allowed
only where the annotation says so.  Unknown fields are ignored.  Standard library only: pydantic
cost the fast skip about 0.28 s of CPU to import and build, more than its whole goal.
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
        return LENIENT in self.marks or any(LENIENT in marks_of(a)[1] for a in typing.get_args(self.kind))


_SPECS: dict[type, tuple[FieldSpec, ...]] = {}


def fields_of(model: type) -> tuple[FieldSpec, ...]:
    """The fields of a record, in order (cached)."""
    specs = _SPECS.get(model)
    if specs is None:
        hints = typing.get_type_hints(model, include_extras=True)
        found = []
        for f in dataclasses.fields(model):
            kind, marks = marks_of(hints[f.name])
            key = next((m.name for m in marks if isinstance(m, Alias)), f.name)
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            found.append(FieldSpec(f.name, key, kind, marks, required, None if required else f.default))
        specs = _SPECS[model] = tuple(found)
    return specs


def marks_of(annotation: Any) -> tuple[Any, tuple[Any, ...]]:
    """``(type, markers)`` of an annotation, nested ``Annotated`` flattened."""
    if typing.get_origin(annotation) is Annotated:
        base, *marks = typing.get_args(annotation)
        inner, more = marks_of(base)
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
    kind, more = marks_of(kind)
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
