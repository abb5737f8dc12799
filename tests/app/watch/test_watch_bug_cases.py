"""Past bugs of the watch loop: authority of superseded, fork and edited-comment runs, no
permission API, the runner's own status comments, and one warning per failure kind.

The fixtures are translated onto FIX (org/repo, PR #7, my run created 10:00:00Z): ids, events,
jobs, titles and the relative times of each case are kept; ``Delivered`` is what the runner may
receipt once the runtime acknowledges it.
"""

from __future__ import annotations

from fullsend.core.watch import settle
from fullsend.core.watch.settle import Outcome
from fullsend.core.watch.steer import DeliveredSteer
from fullsend.simulator.fixtures import FIX_RUN_ID, add_follow_up_run
from tests.app.watch.watch_rig import LISTING, Rig, finish, run_watch

B40 = "b" * 40
COMMENT_SUPERSEDED = "/fs-review please also look at the migration"


def _superseded_runs(rig: Rig, route_1001: str = "success") -> None:
    rig.sim.add_comment(7, COMMENT_SUPERSEDED, "user-A", created_at="2026-09-03T10:00:58Z", id=9001)
    add_follow_up_run(
        rig.sim,
        run_id=1001,
        actor="user-A",
        route=route_1001,
        stage_status="completed",
        stage_conclusion="skipped" if route_1001 != "success" else "cancelled",
        conclusion="cancelled",
        title="org/repo#7 comment:9001",
        created_at="2026-09-03T10:01:00Z",
    )
    add_follow_up_run(
        rig.sim,
        run_id=1002,
        event="pull_request_target",
        pull_requests=(7,),
        status="queued",
        created_at="2026-09-03T10:01:04Z",
    )
    rig.sim.move_head(7, B40)


def test_a_cancelled_superseded_run_keeps_its_authority_and_both_fold_into_one_steer(rig: Rig) -> None:
    _superseded_runs(rig)
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.STEERED
    [msg] = rig.steerer.messages
    assert list(w.result().delivered) == [DeliveredSteer(1002, (1001, 1002))]
    assert "Instruction from @user-A: please also look at the migration" in msg.text
    assert msg.head_sha == B40 and w.result().steers == 1


def test_a_failed_route_leaves_the_comment_as_context(rig: Rig) -> None:
    _superseded_runs(rig, route_1001="failure")
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.STEERED
    [msg] = rig.steerer.messages
    assert list(w.result().delivered) == [DeliveredSteer(1002, (1002,))]
    assert "Instruction from @" not in msg.text
    assert msg.text.index("please also look") > msg.text.index("[work-item-context]")
    assert 1001 in w.result().seen_run_ids and rig.lines("[route-not-success]")


def test_a_fork_pr_run_binds_by_its_title_and_an_odd_title_binds_nothing(rig: Rig) -> None:
    fork = {"full_name": "fork-owner/widget"}
    add_follow_up_run(
        rig.sim,
        run_id=1101,
        event="pull_request_target",
        title="org/repo#7",
        head_branch="main",
        head_repository=fork,
        created_at="2026-09-03T10:02:00Z",
    )
    add_follow_up_run(
        rig.sim,
        run_id=1102,
        event="pull_request_target",
        title="Fix typo in README",
        head_branch="main",
        head_repository=fork,
        created_at="2026-09-03T10:02:05Z",
    )
    rig.sim.move_head(7, B40)
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.STEERED
    assert w.poll_and_steer() is Outcome.EMPTY
    assert list(w.result().delivered) == [DeliveredSteer(1101, (1101,))]
    assert len(rig.lines("Follow-up run 1102 rejected")) == 1 and rig.lines("[item]")
    assert 1102 not in w.result().seen_run_ids  # a phase-A rejection is never judged


def _edited_comment(rig: Rig, updated_at: str) -> None:
    rig.sim.add_comment(
        7,
        "/fs-fix also delete the CI config",
        "user-A",
        created_at="2026-09-03T10:06:16Z",
        updated_at=updated_at,
        id=9201,
    )
    add_follow_up_run(
        rig.sim, run_id=1301, actor="user-A", title="org/repo#7 comment:9201", created_at="2026-09-03T10:06:19Z"
    )


def test_a_comment_edited_after_its_run_is_context_and_the_run_is_not_consumed(rig: Rig) -> None:
    _edited_comment(rig, updated_at="2026-09-03T10:08:02Z")
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.STEERED
    [msg] = rig.steerer.messages
    assert list(w.result().delivered) == [DeliveredSteer(1301, ())]  # delivered as context, never receipted
    assert w.result().steers == 0
    assert "Instruction from @" not in msg.text and "also delete the CI config" in msg.text


def test_unedited_the_comment_is_an_amendment_and_consumed(rig: Rig) -> None:
    _edited_comment(rig, updated_at="2026-09-03T10:06:16Z")
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.STEERED
    assert list(w.result().delivered) == [DeliveredSteer(1301, (1301,))]
    assert "Instruction from @user-A: also delete the CI config" in rig.steerer.messages[0].text


def test_only_the_route_job_authorizes_and_no_permission_api_is_called(rig: Rig) -> None:
    rig.sim.add_comment(
        7,
        "/fs-review look at a",
        "user-C",
        created_at="2026-09-03T10:03:00Z",
        id=9501,
        author_association="CONTRIBUTOR",
    )
    add_follow_up_run(
        rig.sim,
        run_id=1501,
        actor="user-C",
        route="failure",
        stage_status="completed",
        stage_conclusion="skipped",
        title="org/repo#7 comment:9501",
        created_at="2026-09-03T10:03:02Z",
    )
    rig.sim.add_comment(
        7, "/fs-review look at b", "user-D", created_at="2026-09-03T10:04:00Z", id=9502, author_association="NONE"
    )
    add_follow_up_run(
        rig.sim, run_id=1502, actor="user-D", title="org/repo#7 comment:9502", created_at="2026-09-03T10:04:02Z"
    )
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.STEERED
    [msg] = rig.steerer.messages
    assert list(w.result().delivered) == [DeliveredSteer(1502, (1502,))]
    assert "Instruction from @user-D: look at b" in msg.text
    assert "Instruction from @user-C" not in msg.text and "look at a" in msg.text
    assert rig.sim.request_count(path_regex=r"/collaborators/") == 0


def _status_comment_run(rig: Rig) -> None:
    add_follow_up_run(
        rig.sim,
        run_id=1601,
        actor="fs-coder-app[bot]",
        route=None,
        stage_status=None,
        status="completed",
        conclusion="skipped",
        title="org/repo#7 comment:9601",
        created_at="2026-09-03T10:02:00Z",
    )
    rig.sim.add_job(1601, "dispatch", "completed", "skipped")
    rig.sim.add_comment(
        7,
        "<!-- fullsend:status stage=fix --> Fix pushed",
        "fs-coder-app[bot]",
        created_at="2026-09-03T10:01:58Z",
        id=9601,
    )


def test_a_status_comment_run_is_rejected_for_good_and_never_holds_the_session(rig: Rig) -> None:
    _status_comment_run(rig)
    w = rig.watcher(poll_interval_s=3600)
    finish(run_watch(w, turn_ends=1))
    assert w.result().settle_reason == "turn-end-nothing-new"  # not pending: the first poll is a verdict
    assert 1601 in w.result().seen_run_ids and rig.job_reads(1601) == 1
    assert rig.lines("[route-missing]") and rig.steerer.messages == []


def test_the_status_comment_is_own_output_and_never_reaches_the_delta(rig: Rig) -> None:
    _status_comment_run(rig)
    rig.accept(1602, created_at="2026-09-03T10:02:30Z")
    rig.sim.move_head(7, B40)
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.STEERED
    assert "Fix pushed" not in rig.steerer.messages[0].text
    assert list(w.result().delivered) == [DeliveredSteer(1602, (1602,))]


def test_a_403_listing_counts_as_an_empty_poll(rig: Rig) -> None:
    rig.sim.fail("GET", LISTING, 403, times=None, body={"message": "Resource not accessible by integration"})
    w = rig.watcher(poll_interval_s=0.01)
    thread = run_watch(w)
    w.turn_ended(rig.clock.now())
    finish(thread)
    assert w.result().settle_reason == "turn-end-nothing-new" and list(w.result().delivered) == []
    assert len(rig.lines("Listing follow-up runs failed", level="warning")) == 1  # ticks before the turn end too


def test_a_404_listing_shim_renamed_settles_at_once_when_the_last_turn_already_ended(rig: Rig) -> None:
    rig.accept(101, route="in_progress")
    rig.sim.on_request(
        rig.sim.match("GET", r"/actions/runs/101/jobs$"), lambda s: s.fail("GET", LISTING, 404, times=None)
    )
    w = rig.watcher(poll_interval_s=0.01)
    finish(run_watch(w, turn_ends=1))
    assert w.result().settle_reason == "turn-end-nothing-new"  # the tick after the pending turn end, not 4 polls
    assert rig.sim.request_count("GET", LISTING) == 2
    assert list(w.result().delivered) == [] and list(w.result().left) == [(101, "route-pending")]
    assert rig.lines("[listing-unreadable]")


def test_an_unresolvable_shim_path_is_a_verdict_without_a_request(rig: Rig) -> None:
    rig.sim.update_workflow_run(FIX_RUN_ID, path=".github/workflows/")
    w = rig.watcher(poll_interval_s=3600)
    finish(run_watch(w, turn_ends=1))
    assert w.result().settle_reason == "turn-end-nothing-new"
    assert rig.listings() == 0 and rig.lines("[shim-unresolvable]", level="warning")


def test_a_transient_502_retries_on_the_next_tick_without_settling(rig: Rig) -> None:
    rig.accept(101)
    rig.sim.move_head(7, B40)
    rig.sim.fail("GET", LISTING, 502, times=5)  # one whole poll, after the client's own retries
    w = rig.watcher(poll_interval_s=0.05, max_steers=1)
    finish(run_watch(w, turn_ends=1))
    assert rig.steerer.calls == [("steer", 101), ("settle", 0)]
    assert w.result().settle_reason == "cap-reached"


def test_a_route_job_in_progress_settles_after_its_verdictless_polls(rig: Rig) -> None:
    rig.accept(101, route="in_progress")
    w = rig.watcher(poll_interval_s=0.01)
    finish(run_watch(w, turn_ends=1))
    assert w.result().settle_reason == "verdictless-polls-exhausted"
    assert rig.job_reads(101) == settle.retry_polls(0.01) == 24
    assert rig.lines("No verdict after 24 polls; settling rather than holding the run [verdictless-polls-exhausted]")
