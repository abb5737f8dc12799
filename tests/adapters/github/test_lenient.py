"""Lenient as GitHub is (docs/architecture.md "GitHub access"): for every typed GitHub answer, a
field no decision needs may be absent — the record reads the same for everything a decision
does need, and the field is named once — and a watcher still steers when GitHub leaves every
such field out."""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator
from typing import Annotated, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from fullsend.adapters.github import graphql, wire
from fullsend.core.watch.settle import Outcome
from fullsend.errors import MalformedResponse
from tests.app.watch.watch_rig import CANDIDATE_AT, Rig, SimClock, make_rig

#: Every record the adapter checks an answer with, REST and GraphQL.
RECORDS: list[type[wire.Wire]] = sorted(
    {
        cls
        for module in (wire, graphql)
        for cls in vars(module).values()
        if isinstance(cls, type) and issubclass(cls, wire.Wire) and cls is not wire.Wire
    },
    key=lambda cls: (cls.__module__, cls.__name__),
)
#: Strings tried, in order, for a string field: the first its own constraints accept is its sample.
STRINGS = ("5", "2026-09-03T10:00:00Z", "https://api.github.com/repos/org/repo/issues/7")


def _flat(annotation: Any, metadata: tuple[Any, ...] = ()) -> tuple[Any, tuple[Any, ...]]:
    """``(type, metadata)`` of an annotation, nested ``Annotated`` flattened."""
    if typing.get_origin(annotation) is Annotated:
        base, *more = typing.get_args(annotation)
        return _flat(base, (*metadata, *more))
    return annotation, metadata


def _members(annotation: Any) -> list[Any]:
    """The members of a union other than ``None`` (the annotation itself when it is no union)."""
    kind, _ = _flat(annotation)
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        return [m for m in typing.get_args(kind) if m is not type(None)]
    return [annotation]


def sample(annotation: Any, metadata: tuple[Any, ...] = ()) -> Any:
    """A valid JSON value of ``annotation``: every field present, every list of one item."""
    kind, metadata = _flat(annotation, metadata)
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        return sample(_members(kind)[0], metadata)
    if isinstance(kind, type) and issubclass(kind, wire.Wire):
        return {f.alias or name: sample(f.annotation, tuple(f.metadata)) for name, f in kind.model_fields.items()}
    if typing.get_origin(kind) is list:
        return [sample(typing.get_args(kind)[0])]
    if typing.get_origin(kind) is dict or kind in (dict, Any):
        return {}
    if kind in (bool, int):
        return {bool: True, int: 5}[kind]
    check = TypeAdapter(Annotated[(str, *metadata)] if metadata else str)
    for candidate in STRINGS:
        try:
            return check.validate_python(candidate)
        except ValidationError:
            continue
    raise AssertionError(f"no sample string for {metadata}")


def _records_in(annotation: Any, value: Any, where: str) -> list[tuple[type[wire.Wire], Any, str]]:
    """The records (model, JSON value, path) a field's value holds: itself or its list's items."""
    out = []
    for member in _members(annotation):
        kind, _ = _flat(member)
        if isinstance(kind, type) and issubclass(kind, wire.Wire) and isinstance(value, dict):
            out.append((kind, value, where))
        elif typing.get_origin(kind) is list and isinstance(value, list):
            out.extend(
                (model, item, f"{where}[{i}]")
                for i, item in enumerate(value)
                for model, _, _ in _records_in(typing.get_args(kind)[0], item, "")
            )
    return out


def lenient_paths(model: type[wire.Wire], data: Any, path: str = "") -> list[str]:
    """The path of every lenient field in ``data`` (a sample of ``model``), nested ones included."""
    found = []
    for name, f in model.model_fields.items():
        key = f.alias or name
        where = f"{path}.{key}" if path else key
        if wire.LENIENT in f.metadata:
            found.append(where)
        for inner, value, at in _records_in(f.annotation, data.get(key), where):
            found.extend(lenient_paths(inner, value, at))
    return found


def dropped(data: Any, path: str) -> Any:
    """``data`` without the field at ``path`` (``comments.nodes[0].url``)."""
    head, _, rest = path.partition(".")
    name, _, index = head.partition("[")
    copy = dict(data)
    if not rest and not index:
        del copy[name]
    elif index:
        items = list(copy[name])
        i = int(index.rstrip("]"))
        items[i] = dropped(items[i], rest) if rest else items[i]
        copy[name] = items
    else:
        copy[name] = dropped(copy[name], rest)
    return copy


def decided(record: Any) -> dict[str, Any]:
    """What a decision may read of ``record``: every field but the lenient ones, nested too."""
    out = {}
    for name, f in type(record).model_fields.items():
        if wire.LENIENT in f.metadata:
            continue
        value = getattr(record, name)
        if isinstance(value, wire.Wire):
            value = decided(value)
        elif isinstance(value, list):
            value = [decided(v) if isinstance(v, wire.Wire) else v for v in value]
        out[name] = value
    return out


def test_every_record_has_a_sample_and_some_have_lenient_fields() -> None:
    assert len(RECORDS) >= 30
    with_lenient = [m.__name__ for m in RECORDS if lenient_paths(m, sample(m))]
    assert {"WorkflowRun", "IssueComment", "PullRequest", "CommentNode", "WorkflowRunsPage"} <= set(with_lenient)


@given(data=st.data())
def test_any_lenient_fields_may_be_absent_and_each_is_named(data: st.DataObject) -> None:
    model = data.draw(st.sampled_from(RECORDS), label="record")
    full = sample(model)
    paths = lenient_paths(model, full)
    drop = data.draw(st.sets(st.sampled_from(paths)) if paths else st.just(set()), label="left out")
    answer = full
    for path in sorted(drop, key=len, reverse=True):
        answer = dropped(answer, path)
    noted: list[str] = []
    record = wire.parse(model, answer, "GET x", noted=noted.append)
    assert sorted(noted) == sorted(drop)
    assert decided(record) == decided(wire.parse(model, full, "GET x"))


def test_a_needed_field_left_out_is_still_malformed() -> None:
    full = sample(wire.WorkflowRun)
    for key in ("id", "path", "event", "status", "conclusion", "created_at", "head_sha", "pull_requests"):
        with pytest.raises(MalformedResponse, match=f"field {key}: Field required"):
            wire.parse(wire.WorkflowRun, dropped(full, key), "GET run")


@pytest.fixture
def rig() -> Iterator[Rig]:
    from fullsend.simulator.server import GitHubSimulator

    clock = SimClock()
    with GitHubSimulator(clock=clock.now) as sim:
        yield make_rig(sim, clock)


def _strip(keys: tuple[str, ...]):
    def transform(body: Any) -> Any:
        if isinstance(body, list):
            return [transform(item) for item in body]
        if isinstance(body, dict):
            return {k: transform(v) for k, v in body.items() if k not in keys}
        return body

    return transform


def test_a_watcher_steers_when_github_leaves_out_every_field_no_decision_needs(rig: Rig) -> None:
    from fullsend.adapters.github.forge import GitHubForge
    from fullsend.core.model import Repo
    from fullsend.simulator.fixtures import JOB_TOKEN, ROLE_TOKEN

    rig.forge = GitHubForge(
        Repo("org", "repo"), rig.sim.api_url, rig.sim.graphql_url, JOB_TOKEN, ROLE_TOKEN, rig.clock, log=rig.log
    )
    rig.accept(101)
    rig.sim.move_head(7, "bbb222")
    rig.sim.add_comment(7, "re-check the migration", "reviewer", created_at=CANDIDATE_AT)
    rig.sim.mutate("GET", r"/runs$", _strip(("html_url", "updated_at", "total_count")), times=None)
    rig.sim.mutate("GET", r"/jobs$", _strip(("html_url", "total_count")), times=None)
    rig.sim.mutate("GET", r"/(pulls|issues)/7(/comments)?$", _strip(("html_url",)), times=None)
    rig.sim.mutate("GET", r"/compare/", _strip(("additions", "deletions")), times=None)
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.STEERED
    [msg] = rig.steerer.messages
    assert msg.follow_up_run_id == 101 and "re-check the migration" in msg.text
    warned = rig.lines("no decision needs it", level="warning")
    named = sorted(line.split(" has no ")[1].split(";")[0] for line in warned)
    assert len(named) == len(set(named)) and {"workflow_runs[].html_url", "total_count"} <= set(named), warned
