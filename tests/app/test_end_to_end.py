"""Issue 2 acceptance: one whole steered run through the entrypoint, then the queued run skips.

The action runs as a subprocess with the env a runner gives a container action, against the
GitHub simulator on 127.0.0.1, with the scripted stream-json agent as ``agent_cli``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from fullsend.core.receipt.signed import receipt_claim
from fullsend.core.scalars import format_time
from fullsend.core.wire import OPENING_LINE
from fullsend.simulator.fixtures import add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import run_entrypoint, runner_env

COMMAND = "/fs-review please re-check the migration"


def _scenario(sim: GitHubSimulator):
    created = datetime.now(UTC) - timedelta(seconds=60)
    return standard_pr_scenario(sim, created_at=format_time(created))


def _when_first_listed(sim: GitHubSimulator, action) -> None:
    """Run ``action`` right after the watcher's first listing of the shim's runs (mid-turn)."""
    sim.on_request(sim.match("GET", r"/actions/workflows/fullsend\.yml/runs"), action)


@pytest.fixture
def sim():
    with GitHubSimulator() as simulator:
        yield simulator


def test_one_steered_run_then_the_queued_run_skips(sim, tmp_path):
    fix = _scenario(sim)
    added = {}

    def follow_up(s):
        added["comment"], added["run"] = add_comment_follow_up(s, COMMAND)

    _when_first_listed(sim, follow_up)
    first = tmp_path / "first"
    first.mkdir()
    run = run_entrypoint(runner_env(first, sim, fix), first)
    assert run.exit_code == 0, run.stdout + run.stderr
    follow_up_id = added["run"]["id"]

    steers = [m for m in run.agent_messages if m.split("\n", 1)[0] == OPENING_LINE]
    assert len(steers) == 1
    assert "Instruction from @reviewer: please re-check the migration" in steers[0]
    assert run.outputs["outcome"] == "succeeded"
    assert run.outputs["steers"] == "1"
    assert run.outputs["consumed_run_ids"] == str(follow_up_id)
    assert run.outputs["head_sha"] == "aaa111"

    receipts = [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login]
    assert len(receipts) == 1
    marker = receipt_claim(receipts[0]["body"])
    assert marker is not None and marker.consumed == (follow_up_id,) and marker.head == "aaa111"
    assert run.outputs["receipt_url"] == receipts[0]["html_url"]
    status = [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.role_login]
    # The start comment is no longer last (the /fs-review came after it): a new terminal comment.
    assert len(status) == 2 and "status:terminal" not in status[0]["body"]
    assert "<!-- fullsend:status:terminal -->" in status[1]["body"]
    assert f"<!-- fullsend:steer consumed={follow_up_id} head=aaa111 -->" in status[1]["body"]

    sim.reset_requests()
    queued = tmp_path / "queued"
    queued.mkdir()
    skip = run_entrypoint(runner_env(queued, sim, fix, run_id=follow_up_id), queued)
    assert skip.exit_code == 0, skip.stdout + skip.stderr
    assert skip.outputs["outcome"] == "skipped"
    assert skip.outputs["skip_reason"] == "receipt"
    assert skip.agent_messages == []
    # The receipt view and the role's viewer (the fast skip's answers, reused by the full path that
    # verifies a signed receipt), and the proof read beside them: the issuer's keys, this run's record.
    assert sorted((r.method, r.path) for r in sim.requests) == [
        ("GET", "/_services/token/.well-known/jwks"),
        ("GET", f"/repos/org/repo/actions/runs/{follow_up_id}"),
        ("POST", "/graphql"),
        ("POST", "/graphql"),
    ]


@pytest.mark.parametrize("variant", ["route-failure", "other-pr"])
def test_unauthorized_or_foreign_follow_up_never_reaches_the_agent(sim, tmp_path, variant):
    fix = _scenario(sim)
    added = {}

    def follow_up(s):
        if variant == "route-failure":
            added["comment"], added["run"] = add_comment_follow_up(s, COMMAND, route="failure")
        else:
            s.add_pull_request(8, "ccc333", title="Another PR")
            added["comment"], added["run"] = add_comment_follow_up(s, COMMAND, pr=8)

    _when_first_listed(sim, follow_up)
    run = run_entrypoint(runner_env(tmp_path, sim, fix), tmp_path)
    assert run.exit_code == 0, run.stdout + run.stderr
    assert [m for m in run.agent_messages if m.startswith(OPENING_LINE)] == []
    assert run.outputs["steers"] == "0"
    assert run.outputs["consumed_run_ids"] == ""
    assert not [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login]
    if variant == "other-pr":
        assert not [c for c in sim.comments(8) if c["user"]["login"] == fix.job_login]


def test_the_steer_reaches_the_agent_in_the_v1_envelope(sim, tmp_path):
    """The envelope: opening line, blank line, our paragraphs, one ``Source:`` line, the body."""
    fix = _scenario(sim)
    added = {}
    _when_first_listed(sim, lambda s: added.update(run=add_comment_follow_up(s, COMMAND)[1]))
    run = run_entrypoint(runner_env(tmp_path, sim, fix), tmp_path)
    assert run.exit_code == 0, run.stdout + run.stderr
    (steer,) = [m for m in run.agent_messages if m.startswith(OPENING_LINE)]
    lines = steer.split("\n")
    assert lines[0] == OPENING_LINE and lines[1] == ""
    sources = [line for line in lines if line.startswith("Source: ")]
    assert sources == [
        f"Source: follow-up run {added['run']['id']}, issue_comment by reviewer, at {added['run']['created_at']}"
    ]
    assert steer.count(OPENING_LINE) == 1
    assert "Amendments" in lines
