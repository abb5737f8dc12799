"""The FIX scenario and follow-up runs as the watcher will read them."""

from __future__ import annotations

from typing import Any

import pytest

from fullsend.adapters.github import records, wire
from fullsend.core.model import Repo, WorkflowRun
from fullsend.core.scalars import parse_time
from fullsend.simulator.fixtures import (
    FIX_RUN_ID,
    REF,
    add_comment_follow_up,
    add_follow_up_run,
    fix_clock,
    standard_pr_scenario,
)
from fullsend.simulator.server import GitHubSimulator

R = "/repos/org/repo"


def read_run(data: Any) -> WorkflowRun:
    """The run as the GitHub adapter reads it (checked by ``wire``, converted by ``records``)."""
    return records.run_record(wire.parse(wire.WorkflowRun, data, "run"), Repo("org", "repo"))


def test_FIX_my_run_jobs_and_pr(sim: GitHubSimulator, client: Any) -> None:
    fix = standard_pr_scenario(sim)
    job = client(sim, fix.job_token)
    run = read_run(job.get(f"{R}/actions/runs/{FIX_RUN_ID}").json())
    assert (
        run.id,
        run.path,
        run.event,
        run.status,
        run.display_title,
        run.actor,
        run.triggering_actor,
        run.run_attempt,
        run.pull_requests,
    ) == (
        33740015232,
        ".github/workflows/fullsend.yml",
        "issue_comment",
        "completed",
        "org/repo#7",
        "reviewer",
        "reviewer",
        1,
        (),
    )
    assert run.created_at == parse_time("2026-09-03T10:00:00Z")
    assert [(r.path, r.ref, r.sha) for r in run.referenced_workflows] == [(REF["path"], REF["ref"], REF["sha"])]
    page = wire.parse(wire.JobsPage, job.get(f"{R}/actions/runs/{FIX_RUN_ID}/jobs").json(), "jobs")
    jobs = [records.job_record(j) for j in page.jobs]
    assert [(j.name, j.status, j.conclusion) for j in jobs] == [
        ("dispatch / Route", "completed", "success"),
        ("dispatch / Review", "in_progress", None),
    ]
    assert [j.id for j in jobs] == [fix.route_job_id, fix.stage_job_id]
    role = client(sim, fix.role_token)
    assert role.get(f"{R}/pulls/7").json()["head"]["sha"] == "aaa111"
    assert role.get(f"{R}/issues/7").json()["labels"] == []
    assert role.get(f"{R}/compare/aaa111...bbb222").status_code == 404  # FIX: compare 404 unless given
    assert (fix.run_name, fix.shim_file, fix.route_job_name, fix.stage_job_name) == (
        "org/repo#7",
        "fullsend.yml",
        "dispatch / Route",
        "dispatch / Review",
    )
    viewer = role.session.post(sim.graphql_url, json={"query": "query { viewer { login } }"}, timeout=10).json()
    assert viewer["data"]["viewer"]["login"] == "fullsend-ai-review"


def test_FIX_ACCEPT_JOBS_follow_up_with_comment_binding(sim: GitHubSimulator, gh: Any) -> None:
    standard_pr_scenario(sim)
    comment, run = add_comment_follow_up(
        sim, "/fs-review please re-check the migration", created_at="2026-09-03T10:05:00Z"
    )
    got = read_run(gh.get(f"{R}/actions/runs/{run['id']}").json())
    assert got.display_title == f"org/repo#7 comment:{comment['id']}"
    assert (got.event, got.actor, got.pull_requests, got.status) == ("issue_comment", "reviewer", (), "in_progress")
    assert got.id > FIX_RUN_ID  # ids are monotonic (the freshness tie-break)
    jobs = gh.get(f"{R}/actions/runs/{run['id']}/jobs").json()["jobs"]
    assert [(j["name"], j["status"], j["conclusion"]) for j in jobs] == [
        ("dispatch / Route", "completed", "success"),
        ("dispatch / Review", "queued", None),
    ]  # ACCEPT_JOBS


@pytest.mark.parametrize(
    "kwargs,title,status,jobs",
    [
        (
            {},
            "org/repo#7",
            "in_progress",
            [("dispatch / Route", "completed", "success"), ("dispatch / Review", "queued", None)],
        ),
        (
            {"route": "failure", "stage_status": "completed", "stage_conclusion": "skipped"},  # J2
            "org/repo#7",
            "completed",
            [("dispatch / Route", "completed", "failure"), ("dispatch / Review", "completed", "skipped")],
        ),
        (
            {"route": "in_progress", "stage_status": None},
            "org/repo#7",
            "in_progress",  # J6-like: Route running
            [("dispatch / Route", "in_progress", None)],
        ),
        ({"route": None, "stage_status": None, "status": "completed"}, "org/repo#7", "completed", []),  # J5-like
        (
            {"title": "org/repo#99", "pull_requests": (99,)},
            "org/repo#99",
            "in_progress",  # P7
            [("dispatch / Route", "completed", "success"), ("dispatch / Review", "queued", None)],
        ),
    ],
)
def test_follow_up_variants(sim: GitHubSimulator, kwargs: dict, title: str, status: str, jobs: list) -> None:
    standard_pr_scenario(sim)
    run = add_follow_up_run(sim, **kwargs)
    assert (run["display_title"], run["status"]) == (title, status)
    assert [(j["name"], j["status"], j["conclusion"]) for j in sim.jobs_of(run["id"])] == jobs
    assert [p["number"] for p in run["pull_requests"]] == list(kwargs.get("pull_requests", ()))


def test_P6_follow_up_with_a_foreign_chain_and_P10_empty_chain(sim: GitHubSimulator) -> None:
    standard_pr_scenario(sim)
    evil = {"path": "evil/repo/.github/workflows/reusable-dispatch.yml@main", "ref": "refs/heads/main", "sha": "abc"}
    p6 = add_follow_up_run(sim, run_id=6, pull_requests=(7,), referenced_workflows=[evil])
    p10 = add_follow_up_run(sim, run_id=9, pull_requests=(7,), referenced_workflows=[], status="in_progress")
    assert p6["referenced_workflows"] == [evil] and p6["pull_requests"][0]["head"]["sha"] == "aaa111"
    assert (p10["referenced_workflows"], p10["status"]) == ([], "in_progress")


def test_fix_clock_starts_at_the_given_instant() -> None:
    now = fix_clock("2026-09-03T10:01:00Z", speed=0.0)
    assert now() == parse_time("2026-09-03T10:01:00Z")
    with pytest.raises(ValueError):
        fix_clock("soon")
