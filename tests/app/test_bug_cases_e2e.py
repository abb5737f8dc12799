"""Past bugs that need the whole run, through the entrypoint and the simulator: a superseded run
keeps its authority and one poll folds into one steer; an edited comment loses its authority; no
permission API is called; the runner's own status comments fire runs with no Route job and are
rejected for good."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from fullsend.core.receipt.signed import receipt_claim
from fullsend.core.scalars import format_time
from fullsend.core.wire import OPENING_LINE
from fullsend.simulator.fixtures import add_comment_follow_up, add_follow_up_run, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import run_entrypoint, runner_env


@pytest.fixture
def sim():
    with GitHubSimulator() as simulator:
        yield simulator


def _fix(sim):
    return standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))


def _at_watch_start(sim, fix, action):
    """Script ``action`` when the watcher reads my own run's jobs (before the first poll)."""
    sim.on_request(sim.match("GET", rf"/actions/runs/{fix.my_run_id}/jobs$"), action)


def _at_first_poll(sim, action):
    """Script ``action`` right after the watcher's first listing (mid-turn, after Start read the head)."""
    sim.on_request(sim.match("GET", r"/actions/workflows/fullsend\.yml/runs"), action)


def _receipt(sim, fix):
    mine = [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login]
    return receipt_claim(mine[0]["body"]) if mine else None


def test_a_cancelled_run_keeps_its_authority_and_one_poll_is_one_steer(sim, tmp_path):
    fix = _fix(sim)
    runs = {}

    def burst(s):
        _, runs["a"] = add_comment_follow_up(
            s,
            "/fs-review please also look at the migration",
            status="completed",
            conclusion="cancelled",
            stage_status="completed",
            stage_conclusion="cancelled",
        )
        s.move_head(
            fix.pr,
            "b" * 40,
            files=[
                {
                    "filename": "db/migrate.sql",
                    "status": "modified",
                    "additions": 3,
                    "deletions": 1,
                    "patch": "@@ -1 +1 @@\n-a\n+b",
                }
            ],
        )
        runs["b"] = add_follow_up_run(
            s, event="pull_request_target", pull_requests=(fix.pr,), title="Push", status="queued", actor="user-A"
        )

    _at_first_poll(sim, burst)
    run = run_entrypoint(runner_env(tmp_path, sim, fix), tmp_path)
    assert run.exit_code == 0, run.stdout
    steers = [m for m in run.agent_messages if m.startswith(OPENING_LINE)]
    assert len(steers) == 1
    assert "Instruction from @reviewer: please also look at the migration" in steers[0]
    assert "db/migrate.sql" in steers[0]
    marker = _receipt(sim, fix)
    assert marker is not None and marker.consumed == tuple(sorted((runs["a"]["id"], runs["b"]["id"])))
    assert marker.head == "b" * 40
    assert run.outputs["steers"] == "1"


def test_a_failed_route_job_leaves_the_comment_as_context(sim, tmp_path):
    fix = _fix(sim)
    runs = {}

    def burst(s):
        _, runs["a"] = add_comment_follow_up(
            s,
            "/fs-review please also look at the migration",
            route="failure",
            stage_status="completed",
            stage_conclusion="skipped",
        )
        runs["b"] = add_follow_up_run(
            s, event="pull_request_target", pull_requests=(fix.pr,), title="Push", status="queued", actor="user-A"
        )
        s.move_head(fix.pr, "b" * 40)

    _at_first_poll(sim, burst)
    run = run_entrypoint(runner_env(tmp_path, sim, fix), tmp_path)
    assert run.exit_code == 0, run.stdout
    (steer,) = [m for m in run.agent_messages if m.startswith(OPENING_LINE)]
    assert "Instruction from @" not in steer
    assert "please also look at the migration" in steer.split("[work-item-context]", 1)[1]
    assert _receipt(sim, fix).consumed == (runs["b"]["id"],)


@pytest.mark.parametrize("edited", [True, False])
def test_an_edited_comment_is_context_and_its_run_is_not_consumed(sim, tmp_path, edited):
    fix = _fix(sim)
    runs = {}

    def follow_up(s):
        comment, runs["a"] = add_comment_follow_up(s, "/fs-fix also delete the CI config")
        if edited:
            s.edit_comment(
                comment["id"],
                "/fs-fix also delete the CI config and the tests",
                updated_at=datetime.now(UTC) + timedelta(seconds=5),
            )

    _at_watch_start(sim, fix, follow_up)
    run = run_entrypoint(runner_env(tmp_path, sim, fix), tmp_path)
    assert run.exit_code == 0, run.stdout
    steers = [m for m in run.agent_messages if m.startswith(OPENING_LINE)]
    if edited:
        assert all("Instruction from @" not in m for m in steers)
        assert _receipt(sim, fix) is None
        assert run.outputs["consumed_run_ids"] == ""
    else:
        assert "Instruction from @reviewer: also delete the CI config" in steers[0]
        assert _receipt(sim, fix).consumed == (runs["a"]["id"],)


def test_no_permission_api_and_no_author_association(sim, tmp_path):
    fix = _fix(sim)
    _at_watch_start(sim, fix, lambda s: add_comment_follow_up(s, "/fs-review look again", login="user-D"))
    run = run_entrypoint(runner_env(tmp_path, sim, fix), tmp_path)
    assert run.exit_code == 0, run.stdout
    assert run.outputs["steers"] == "1"
    assert not [r for r in sim.requests if "/collaborators/" in r.path or "/permission" in r.path]


def test_status_comment_runs_are_rejected_for_good_and_never_hold_the_settle(sim, tmp_path):
    fix = _fix(sim)
    ids = {}

    def own_status_runs(s):
        s.add_comment(fix.pr, "<!-- fullsend:status stage=fix --> Fix pushed", "fs-coder-app[bot]")
        run = add_follow_up_run(
            s, actor="fs-coder-app[bot]", route=None, stage_status=None, status="completed", conclusion="skipped"
        )
        s.add_job(run["id"], "dispatch", "completed", "skipped")
        ids["run"] = run["id"]

    _at_watch_start(sim, fix, own_status_runs)
    env = runner_env(tmp_path, sim, fix, inputs={"self_logins": "fs-coder-app[bot]"})
    run = run_entrypoint(env, tmp_path)
    assert run.exit_code == 0, run.stdout
    assert f"Follow-up run {ids['run']} rejected" in run.stdout and "[route-missing]" in run.stdout
    assert [m for m in run.agent_messages if m.startswith(OPENING_LINE)] == []
    # Judged once: its jobs are read exactly once however many polls there were.
    assert sim.request_count("GET", rf"/actions/runs/{ids['run']}/jobs$") == 1
    assert "[turn-end-nothing-new]" in run.stdout
