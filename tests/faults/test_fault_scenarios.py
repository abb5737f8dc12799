"""404s for things deleted while the run is in flight (issue 9), through the real action.

* a follow-up run deleted between the listing and its jobs read (docs/architecture.md "Provenance", J15:
  judged, never re-read, no steer);
* the triggering comment deleted after its run was listed (a named run whose comment is
  missing stays unpaired; nothing reaches the agent under its authority, so nothing is receipted);
* the start status comment deleted mid-run (docs/architecture.md "Status comments": editing it answers
  404; the terminal status is warned about, the run and its receipt are unaffected).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fullsend.simulator.fixtures import add_comment_follow_up
from fullsend.simulator.server import GitHubSimulator
from tests.support.fault_harness import check_invariant, fast_http, new_scenario, run_in_process, runner_env

COMMAND = "/fs-review please re-check the migration"
LISTING = r"/actions/workflows/fullsend\.yml/runs$"


def _run(sim: GitHubSimulator, fix, tmp: Path):  # type: ignore[no-untyped-def]
    return run_in_process(runner_env(tmp, sim, fix, fix.my_run_id), tmp)


def test_a_run_deleted_before_its_jobs_are_read_is_judged_and_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast_http(monkeypatch)
    with GitHubSimulator() as sim:
        fix = new_scenario(sim)
        _, run = add_comment_follow_up(sim, COMMAND)
        sim.on_request(sim.match("GET", LISTING), lambda s: s.delete_workflow_run(run["id"]))
        result = _run(sim, fix, tmp_path)
        assert sim.request_count("GET", rf"/actions/runs/{run['id']}/jobs$", status=404) == 1  # never re-read
        fate = check_invariant(result, sim, fix, [run["id"]], tmp_path)
    assert fate == {run["id"]: "left"}
    assert result.exit_code == 0 and result.outputs["steers"] == "0"
    assert [e.rule_id for e in result.timeline.of_kind("judge") if run["id"] in e.run_ids] == ["jobs-unreadable"]
    assert any("reading its jobs failed" in w for w in result.warnings())


def test_a_deleted_trigger_comment_leaves_its_run_to_the_queued_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast_http(monkeypatch)
    with GitHubSimulator() as sim:
        fix = new_scenario(sim)
        comment, run = add_comment_follow_up(sim, COMMAND)
        sim.on_request(sim.match("GET", rf"/actions/runs/{run['id']}/jobs$"), lambda s: s.delete_comment(comment["id"]))
        result = _run(sim, fix, tmp_path)
        fate = check_invariant(result, sim, fix, [run["id"]], tmp_path)
    assert fate == {run["id"]: "left"}
    assert result.exit_code == 0 and result.outputs["consumed_run_ids"] == ""
    assert not any("re-check the migration" in m for m in result.agent_messages)


def test_a_deleted_status_comment_is_warned_and_the_receipt_still_posted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast_http(monkeypatch)
    with GitHubSimulator() as sim:
        fix = new_scenario(sim)
        _, run = add_comment_follow_up(sim, COMMAND)

        def delete_start_comment(s: GitHubSimulator) -> None:
            for c in s.comments(fix.pr):
                if c["user"]["login"] == fix.role_login:
                    s.delete_comment(c["id"])

        sim.on_request(sim.match("GET", LISTING), delete_start_comment)
        # progress edits (the first change is written at once), then the terminal status, spaced
        # 1 s apart (the terminal edit too: docs/architecture.md "Status comments"): all find it gone
        env = {**runner_env(tmp_path, sim, fix, fix.my_run_id), "INPUT_STATUS_INTERVAL_SECONDS": "1"}
        result = run_in_process(env, tmp_path)
        patched = sim.request_count("PATCH", r"/issues/comments/\d+$", status=404)
        sent = sim.request_count("PATCH", r"/issues/comments/\d+$")
        fate = check_invariant(result, sim, fix, [run["id"]], tmp_path)
    assert fate == {run["id"]: "absorbed"}
    assert result.exit_code == 0 and result.outputs["receipt_url"]
    assert patched == sent and patched >= 2  # one progress edit at least, the terminal one; no link edit
    assert any("terminal status comment" in w for w in result.warnings()), result.console
    assert sum("Could not update the status comment" in w for w in result.warnings()) == 1, result.console
