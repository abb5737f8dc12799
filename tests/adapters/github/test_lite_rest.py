"""Issue 33: the head-reviewed fast skip checks its REST answers exactly as the pydantic records
do (docs/architecture.md "Fast skip").  The oracle is ``fullsend.adapters.github.wire``; the
answers are the simulator's, read over HTTP on 127.0.0.1, then mutated field by field."""

from __future__ import annotations

import copy
import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from fullsend.adapters.github import lite_rest, records, wire
from fullsend.adapters.github.lite import LiteAnswer, Undecided
from fullsend.core.model import Repo
from fullsend.errors import MalformedResponse
from fullsend.simulator.fixtures import standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator


def _answers() -> dict[str, Any]:
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        sim.add_review(fix.pr, "fullsend-ai-review[bot]", "COMMENTED", body="ok")
        out = {}
        for name, path in (
            ("run", f"/repos/org/repo/actions/runs/{fix.my_run_id}"),
            ("pull", f"/repos/org/repo/pulls/{fix.pr}"),
            ("reviews", f"/repos/org/repo/pulls/{fix.pr}/reviews"),
        ):
            request = urllib.request.Request(sim.api_url + path, headers={"Authorization": f"Bearer {fix.role_token}"})
            with urllib.request.urlopen(request, timeout=10) as resp:
                out[name] = json.loads(resp.read())
    return out


ANSWERS = _answers()
ANSWERS["run"]["pull_requests"] = [{"number": 7, "base": {"repo": {"url": "http://127.0.0.1/repos/org/repo"}}}]
VALUES: list[Any] = [None, "x", "", "2026-09-25T10:00:00Z", 5, 0, -1, 2**53, True, 1.0, [], {}, [{}]]
SHAPES = {"run": lite_rest.RUN, "pull": lite_rest.PULL}


def _paths(shape: lite_rest.Shape, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    for name, (kind, _, _) in shape.items():
        yield (*prefix, name)
        inner = kind[0] if isinstance(kind, list) else kind
        if isinstance(inner, dict):
            yield from _paths(inner, (*prefix, name, 0) if isinstance(kind, list) else (*prefix, name))


def _mutations(data: Any, shape: lite_rest.Shape) -> Iterator[tuple[str, Any]]:
    for path in _paths(shape):
        for value in [*VALUES, "delete"]:
            body = copy.deepcopy(data)
            node = body
            try:
                for key in path[:-1]:
                    node = node[key]
                if value == "delete":
                    node.pop(path[-1], None)
                else:
                    node[path[-1]] = value
            except (KeyError, IndexError, TypeError):
                continue  # an absent parent: nothing to mutate here
            yield f"{'.'.join(map(str, path))}={value!r}", body


def _lite_accepts(kind: str, data: Any) -> bool:
    try:
        {"run": lite_rest.run_created, "pull": lite_rest.pull_head, "reviews": lite_rest.reviews}[kind](data, kind)
    except Undecided:
        return False
    return True


def _wire_accepts(kind: str, data: Any) -> bool:
    try:
        if kind == "reviews":
            wire.parse_list(wire.Review, data, kind)
        else:
            wire.parse({"run": wire.WorkflowRun, "pull": wire.PullRequest}[kind], data, kind)
    except MalformedResponse:
        return False
    return True


CASES = [(kind, name, body) for kind in ("run", "pull") for name, body in _mutations(ANSWERS[kind], SHAPES[kind])] + [
    ("reviews", name, [body]) for name, body in _mutations(ANSWERS["reviews"][0], lite_rest.REVIEW)
]


@pytest.mark.parametrize(("kind", "name", "body"), CASES, ids=[f"{k}:{n}" for k, n, _ in CASES])
def test_the_lite_check_accepts_exactly_what_the_wire_model_accepts(kind: str, name: str, body: Any) -> None:
    assert _lite_accepts(kind, body) == _wire_accepts(kind, body)


def test_accepted_answers_read_as_the_records_read_them() -> None:
    run = lite_rest.run_created(ANSWERS["run"], "run")
    full = records.run_record(wire.parse(wire.WorkflowRun, ANSWERS["run"], "run"), Repo("org", "repo"))
    assert (run.id, run.created_at, run.updated_at, run.head_sha) == (
        full.id,
        full.created_at,
        full.updated_at,
        full.head_sha,
    )
    assert lite_rest.pull_head(ANSWERS["pull"], "pull") == ANSWERS["pull"]["head"]["sha"] != ""
    mine = lite_rest.reviews(ANSWERS["reviews"], "reviews")
    theirs = [records.review_record(r) for r in wire.parse_list(wire.Review, ANSWERS["reviews"], "reviews")]
    keys = ("id", "author", "author_type", "state", "submitted_at", "commit_id")
    assert [tuple(getattr(r, k) for k in keys) for r in mine] == [tuple(getattr(r, k) for k in keys) for r in theirs]
    assert mine[0].author == "fullsend-ai-review[bot]" and mine[0].author_type == "Bot"


def test_a_full_page_of_reviews_and_a_non_200_are_undecided() -> None:
    with pytest.raises(Undecided, match="full page"):
        lite_rest.reviews(ANSWERS["reviews"] * lite_rest.PER_PAGE, "reviews")
    with pytest.raises(Undecided, match="HTTP 301"):
        lite_rest.rest_data(LiteAnswer(301, {}, "{}"), "run")
    with pytest.raises(Undecided, match="not JSON"):
        lite_rest.rest_data(LiteAnswer(200, {}, "<html>"), "run")
