"""Run listing, Link pagination, ``created`` filters, GHES prefix, comment paging."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from fullsend.simulator.server import GitHubSimulator

SHIM = ".github/workflows/fullsend.yml"
T0 = datetime(2026, 9, 3, 10, 0, 0, tzinfo=UTC)
LIST = "/repos/org/repo/actions/workflows/fullsend.yml/runs"
CREATED = "created=%3E%3D2026-09-03T10%3A00%3A00Z"  # the watcher's exact encoding


def _links(header: str | None) -> dict[str, str]:
    if not header:
        return {}
    return {rel: url for url, rel in re.findall(r'<([^>]+)>; rel="(\w+)"', header)}


def _page_of(url: str) -> int:
    return int(parse_qs(urlsplit(url).query)["page"][0])


def _add_runs(sim: GitHubSimulator, n: int, path: str = SHIM, start: datetime = T0, **fields: Any) -> list[int]:
    return [sim.add_workflow_run(path=path, created_at=start + timedelta(seconds=i), **fields)["id"] for i in range(n)]


def test_W4_450_runs_page_by_link_newest_first_without_duplicates(sim: GitHubSimulator, gh: Any) -> None:
    ids = _add_runs(sim, 450)
    _add_runs(sim, 30, path=".github/workflows/ci.yml")  # another workflow: not listed
    _add_runs(sim, 20, start=T0 - timedelta(hours=1))  # older than the cutoff: not listed
    url, pages, seen = f"{sim.api_url}{LIST}?{CREATED}&per_page=100&page=1", [], []
    while url:
        response = gh.get(url)
        body, links = response.json(), _links(response.headers.get("Link"))
        assert body["total_count"] == 450
        pages.append(len(body["workflow_runs"]))
        seen += [r["id"] for r in body["workflow_runs"]]
        assert _page_of(links["first" if len(pages) > 1 else "last"]) == (1 if len(pages) > 1 else 5)
        for link in links.values():
            assert link.startswith(f"{sim.api_url}/repos/org/repo/actions/workflows/fullsend.yml/runs?")
            assert "created=%3E%3D2026-09-03T10%3A00%3A00Z" in link and "per_page=100" in link
        if len(pages) > 1:
            assert _page_of(links["prev"]) == len(pages) - 1
        url = links.get("next")
    assert pages == [100, 100, 100, 100, 50]
    assert len(seen) == len(set(seen)) == 450
    assert seen == sorted(ids, reverse=True)  # newest first (created_at ascends with id here)
    assert {tuple(r.query["created"]) for r in sim.requests} == {(">=2026-09-03T10:00:00Z",)}


def test_W4_single_page_has_no_link_and_default_per_page_is_30(sim: GitHubSimulator, gh: Any) -> None:
    _add_runs(sim, 3)
    response = gh.get(f"{LIST}?{CREATED}&per_page=100&page=1")
    assert len(response.json()["workflow_runs"]) == 3 and "Link" not in response.headers
    _add_runs(sim, 40, start=T0 + timedelta(minutes=5))
    response = gh.get(LIST)
    assert len(response.json()["workflow_runs"]) == 30
    assert _page_of(_links(response.headers["Link"])["last"]) == 2


@pytest.mark.parametrize(
    "created,expected",
    [
        (">=2026-09-03T10:00:00Z", [3, 2, 1]),  # cutoff itself included (created=>=)
        (">2026-09-03T10:00:00Z", [3, 2]),
        ("<2026-09-03T10:00:00Z", [0]),
        ("<=2026-09-03T10:00:00Z", [1, 0]),
        ("2026-09-03T10:00:00Z..2026-09-03T10:05:00Z", [2, 1]),
        ("2026-09-03T10:05:00Z..*", [3, 2]),
        ("*..2026-09-03T09:59:59Z", [0]),
        (">=2026-09-03T12:00:00+02:00", [3, 2, 1]),  # offsets compare as instants
        (">=2026-09-03", [3, 2, 1, 0]),  # a bare date is the whole UTC day
        ("<2026-09-03", []),
        ("2026-09-03", [3, 2, 1, 0]),
    ],
)
def test_W4_created_filter_semantics(sim: GitHubSimulator, gh: Any, created: str, expected: list[int]) -> None:
    times = ["2026-09-03T09:00:00Z", "2026-09-03T10:00:00Z", "2026-09-03T10:05:00Z", "2026-09-03T11:00:00Z"]
    ids = [sim.add_workflow_run(path=SHIM, created_at=t)["id"] for t in times]
    got = [r["id"] for r in gh.get(LIST, params={"created": created}).json()["workflow_runs"]]
    assert got == [ids[i] for i in expected]


def test_W4_created_filter_rejects_garbage_and_keeps_unparseable_records(sim: GitHubSimulator, gh: Any) -> None:
    odd = sim.add_workflow_run(path=SHIM, created_at="not a time")["id"]  # F6-style hostile record
    assert gh.get(LIST, params={"created": ">=yesterday"}).status_code == 422
    listed = gh.get(f"{LIST}?{CREATED}").json()["workflow_runs"]
    assert [r["id"] for r in listed] == [odd] and listed[0]["created_at"] == "not a time"


def test_W4_created_filter_caps_at_1000_results(sim: GitHubSimulator, gh: Any) -> None:
    _add_runs(sim, 1005)
    body = gh.get(f"{LIST}?{CREATED}&per_page=100&page=10").json()
    assert body["total_count"] == 1000 and len(body["workflow_runs"]) == 100
    assert gh.get(f"{LIST}?{CREATED}&per_page=100&page=11").json()["workflow_runs"] == []


def test_listing_other_filters_and_workflow_resolution(sim: GitHubSimulator, gh: Any) -> None:
    a = sim.add_workflow_run(
        path=SHIM, event="issue_comment", actor="reviewer", status="completed", conclusion="success"
    )
    b = sim.add_workflow_run(path=SHIM, event="push", pull_requests=[7])
    assert [r["id"] for r in gh.get(LIST, params={"event": "issue_comment"}).json()["workflow_runs"]] == [a["id"]]
    assert [r["id"] for r in gh.get(LIST, params={"actor": "reviewer"}).json()["workflow_runs"]] == [a["id"]]
    assert [r["id"] for r in gh.get(LIST, params={"status": "success"}).json()["workflow_runs"]] == [a["id"]]
    assert [r["id"] for r in gh.get(LIST, params={"status": "queued"}).json()["workflow_runs"]] == [b["id"]]
    by_id = gh.get(f"/repos/org/repo/actions/workflows/{a['workflow_id']}/runs").json()
    assert by_id["total_count"] == 2
    assert gh.get("/repos/org/repo/actions/workflows/missing.yml/runs").status_code == 404
    sim.add_workflow(".github/workflows/quiet.yml")
    assert gh.get("/repos/org/repo/actions/workflows/quiet.yml/runs").json() == {"total_count": 0, "workflow_runs": []}
    excluded = gh.get(LIST, params={"exclude_pull_requests": "true"}).json()["workflow_runs"]
    assert all(r["pull_requests"] == [] for r in excluded)
    assert gh.get("/repos/org/repo/actions/runs").json()["total_count"] == 2


def test_wrong_owner_or_repo_is_404(sim: GitHubSimulator, gh: Any) -> None:
    run = sim.add_workflow_run(path=SHIM)
    assert gh.get(f"/repos/org/other/actions/runs/{run['id']}").status_code == 404
    assert gh.get(f"/repos/evil/repo/actions/runs/{run['id']}").status_code == 404
    assert gh.get(f"/repos/ORG/Repo/actions/runs/{run['id']}").status_code == 200  # GitHub is case-insensitive


def test_jobs_paginate_with_total_count(sim: GitHubSimulator, gh: Any) -> None:
    run = sim.add_workflow_run(path=SHIM)
    names = [f"dispatch / Job {i}" for i in range(120)]
    for name in names:
        sim.add_job(run["id"], name)
    first = gh.get(f"/repos/org/repo/actions/runs/{run['id']}/jobs", params={"per_page": 100, "page": 1})
    second = gh.get(_links(first.headers["Link"])["next"])
    assert first.json()["total_count"] == 120
    assert [j["name"] for j in first.json()["jobs"] + second.json()["jobs"]] == names
    assert gh.get("/repos/org/repo/actions/runs/1/jobs").status_code == 404


def test_comments_page_oldest_first_and_since_filters_on_updated_at(sim: GitHubSimulator, gh: Any) -> None:
    sim.add_issue(7)
    ids = [sim.add_comment(7, f"c{i}", "reviewer", created_at=T0 + timedelta(minutes=i))["id"] for i in range(150)]
    sim.edit_comment(ids[0], "edited", updated_at=T0 + timedelta(days=1))
    path = "/repos/org/repo/issues/7/comments"
    first = gh.get(path, params={"per_page": 100, "page": 1})
    second = gh.get(_links(first.headers["Link"])["next"])
    assert [c["id"] for c in first.json() + second.json()] == ids
    since = gh.get(path, params={"since": "2026-09-03T12:00:00Z", "per_page": 100}).json()
    assert [c["id"] for c in since] == [ids[0], *ids[120:]]  # updated_at >= since; order stays by creation
    assert gh.get(path, params={"since": "soon"}).status_code == 422


def test_ghes_prefix_writes_every_url_under_its_own_base(new_sim: Any, client: Any) -> None:
    with new_sim(prefix="/api/v3") as sim:
        port = sim.api_url.split(":")[2].split("/")[0]
        assert sim.api_url == f"http://127.0.0.1:{port}/api/v3"
        assert sim.graphql_url == f"http://127.0.0.1:{port}/api/graphql"
        gh = client(sim)
        run = sim.add_workflow_run(path=SHIM, pull_requests=[7], created_at=T0)
        _add_runs(sim, 150, start=T0 + timedelta(seconds=1))
        got = gh.get(f"/repos/org/repo/actions/runs/{run['id']}").json()
        for key in ("url", "jobs_url", "logs_url", "workflow_url", "cancel_url", "rerun_url"):
            assert got[key].startswith(sim.api_url + "/repos/org/repo/"), key
        assert got["pull_requests"][0]["url"].startswith(sim.api_url)
        assert got["html_url"] == f"http://127.0.0.1:{port}/org/repo/actions/runs/{run['id']}"
        response = gh.get(f"{LIST}?{CREATED}&per_page=100")
        assert _links(response.headers["Link"])["next"].startswith(sim.api_url + LIST + "?")
        assert gh.get(_links(response.headers["Link"])["next"]).json()["workflow_runs"][-1]["id"] == run["id"]
        assert gh.get(f"http://127.0.0.1:{port}/repos/org/repo/actions/runs/{run['id']}").status_code == 404
        viewer = gh.session.post(sim.graphql_url, json={"query": "query { viewer { login } }"}, timeout=10)
        assert viewer.json() == {"data": {"viewer": {"login": "fullsend-ai-review"}}}
        assert (
            gh.session.post(
                sim.api_url + "/graphql", json={"query": "query { viewer { login } }"}, timeout=10
            ).status_code
            == 404
        )
        assert sim.requests[0].path == f"/repos/org/repo/actions/runs/{run['id']}"
        assert sim.requests[0].raw_path == f"/api/v3/repos/org/repo/actions/runs/{run['id']}"


def test_repository_links_use_github_repositories_form_and_are_served(new_sim: Any, client: Any) -> None:
    with new_sim(prefix="/api/v3", repository_links=True) as sim:
        gh = client(sim)
        _add_runs(sim, 120)
        response = gh.get(f"{LIST}?{CREATED}&per_page=100")
        nxt = _links(response.headers["Link"])["next"]
        assert nxt.startswith(f"{sim.api_url}/repositories/{sim.urls.repo_id}/actions/workflows/fullsend.yml/runs?")
        assert len(gh.get(nxt).json()["workflow_runs"]) == 20
        assert gh.get("/repositories/1/actions/runs").status_code == 404
