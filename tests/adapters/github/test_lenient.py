"""Lenient as GitHub is (docs/architecture.md "GitHub access"): for every typed GitHub answer, a
field no decision needs may be absent — the record reads the same for everything a decision
does need, and the field is named once — and a watcher still steers when GitHub leaves every
such field out."""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
TIME = "2026-09-03T10:00:00Z"


def sample(kind: Any, marks: tuple[Any, ...] = ()) -> Any:
    """A valid JSON value of ``kind``: every field present, every list of one item."""
    kind, more = wire.marks_of(kind)
    marks = (*marks, *more)
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        return sample(next(m for m in typing.get_args(kind) if m is not type(None)), marks)
    if isinstance(kind, type) and issubclass(kind, wire.Wire):
        return {f.key: sample(f.kind, f.marks) for f in wire.fields_of(kind)}
    if origin is list:
        return [sample(typing.get_args(kind)[0])]
    if origin is dict or kind is dict or kind is Any:
        return {}
    if kind is bool:
        return True
    if kind is int:
        return 5
    if wire.RFC3339 in marks:
        return TIME
    pattern = next((m for m in marks if isinstance(m, wire.Pattern)), None)
    if pattern is not None and "issues" in pattern.regex:
        return "https://api.github.com/repos/org/repo/issues/7"
    return "5"  # a string that also satisfies every digit pattern


def lenient_paths(model: type[wire.Wire], data: Any, path: str = "") -> list[str]:
    """The path of every lenient field in ``data`` (a sample of ``model``), nested ones included."""
    found = []
    for f in wire.fields_of(model):
        where = f"{path}.{f.key}" if path else f.key
        if f.lenient:
            found.append(where)
        for inner, value, at in _nested(f.kind, data.get(f.key), where):
            found.extend(lenient_paths(inner, value, at))
    return found


def _nested(kind: Any, value: Any, where: str) -> list[tuple[type[wire.Wire], Any, str]]:
    kind, _ = wire.marks_of(kind)
    args = [a for a in typing.get_args(kind) if a is not type(None)] or [kind]
    out = []
    for arg in args:
        arg, _ = wire.marks_of(arg)
        if isinstance(arg, type) and issubclass(arg, wire.Wire) and isinstance(value, dict):
            out.append((arg, value, where))
        elif typing.get_origin(arg) is list and isinstance(value, list):
            item, _ = wire.marks_of(typing.get_args(arg)[0])
            if isinstance(item, type) and issubclass(item, wire.Wire):
                out.extend((item, v, f"{where}[{i}]") for i, v in enumerate(value))
    return out


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


def decided(record: Any, model: type[wire.Wire]) -> dict[str, Any]:
    """What a decision may read of ``record``: every field but the lenient ones, nested too."""
    out = {}
    for f in wire.fields_of(model):
        if f.lenient:
            continue
        value = getattr(record, f.name)
        if isinstance(value, wire.Wire):
            value = decided(value, type(value))
        elif isinstance(value, list):
            value = [decided(v, type(v)) if isinstance(v, wire.Wire) else v for v in value]
        out[f.name] = value
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
    assert decided(record, model) == decided(wire.parse(model, full, "GET x"), model)


def test_a_needed_field_left_out_is_still_malformed() -> None:
    full = sample(wire.WorkflowRun)
    for key in ("id", "path", "event", "status", "conclusion", "created_at", "head_sha", "pull_requests"):
        with pytest.raises(MalformedResponse, match=f"field {key}: the field is missing"):
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
