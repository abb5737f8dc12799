"""Start through the adapter (docs/architecture.md "Start"): what the app reads and refuses."""

from __future__ import annotations

import pytest

from fullsend.app.watch.watcher import Carry
from fullsend.core.watch.start import StartRefused
from fullsend.simulator.fixtures import FIX_RUN_ID, JOB_TOKEN, ROLE_TOKEN
from tests.app.watch.watch_rig import Rig, at


def test_start_fixes_the_facts_of_FIX(rig: Rig) -> None:
    w = rig.watcher()
    assert w.result().me is not None
    assert (w.result().me.route_job_name, w.result().me.stage_job_name) == ("dispatch / Route", "dispatch / Review")
    assert w.result().me.fresh_after == at("2026-09-03T10:00:00Z") and w.result().baseline == w.result().me.fresh_after
    assert w.result().head == "aaa111" and w.state.baseline is not None and w.state.baseline.is_pull_request


def test_own_run_403_refuses_with_the_status_and_never_the_token(rig: Rig) -> None:
    rig.sim.fail("GET", rf"/actions/runs/{FIX_RUN_ID}$", 403, times=None)
    with pytest.raises(StartRefused) as refused:
        rig.watcher()
    text = str(refused.value)
    assert "403" in text and JOB_TOKEN not in text and ROLE_TOKEN not in text


def test_own_run_without_a_chain_is_refused_before_its_jobs_are_read(rig: Rig) -> None:
    rig.sim.update_workflow_run(FIX_RUN_ID, referenced_workflows=[])
    with pytest.raises(StartRefused, match="references no reusable workflow"):
        rig.watcher()
    assert rig.job_reads(FIX_RUN_ID) == 0


def test_a_non_404_error_resolving_the_item_refuses(rig: Rig) -> None:
    rig.sim.fail("GET", r"/pulls/7$", 403, times=None)
    with pytest.raises(StartRefused, match="is a pull request"):
        rig.watcher()


def test_an_issue_is_resolved_by_the_pulls_404_and_snapshots_title_body_labels(rig: Rig) -> None:
    rig.sim.add_issue(8, title="Crash on save", body="Steps…", labels=["bug"])
    w = rig.watcher(item_number=8, run_name="", env_head_sha="")
    assert w.state.baseline is not None and not w.state.baseline.is_pull_request
    assert (w.state.baseline.title, w.state.baseline.body, w.state.baseline.labels, w.result().head) == (
        "Crash on save",
        "Steps…",
        ("bug",),
        "",
    )
    assert rig.lines("Title binding is off")


def test_P16_an_own_run_without_the_run_name_switches_title_binding_off(rig: Rig) -> None:
    rig.sim.update_workflow_run(FIX_RUN_ID, display_title="Add the orders migration")
    w = rig.watcher()
    assert w.result().me is not None and w.result().me.run_name == ""


def test_no_self_logins_refuse(rig: Rig) -> None:
    with pytest.raises(StartRefused, match="no self logins"):
        rig.watcher(self_logins=frozenset({"", "  "}))


def test_a_later_iteration_keeps_the_carried_baseline_without_reading_the_item(rig: Rig) -> None:
    carry = Carry()
    first = rig.watcher(carry)
    rig.sim.reset_requests()
    second = rig.watcher(carry)
    assert second.state == first.state
    assert rig.sim.request_count("GET", r"/pulls/7$") == 0 and rig.sim.request_count("GET", r"/issues/7$") == 0
