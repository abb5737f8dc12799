"""One poll-and-steer cycle (docs/architecture.md "Poll-and-steer cycle") through the simulator and the real adapter."""

from __future__ import annotations

from datetime import timedelta

import pytest

from fullsend.app.watch.watcher import Carry
from fullsend.core.watch.settle import Outcome
from fullsend.core.watch.steer import DeliveredSteer
from fullsend.errors import SteerAfterSettle, SteerSessionLost, SteerUnsupported
from fullsend.simulator.fixtures import add_follow_up_run
from tests.app.watch.watch_rig import CANDIDATE_AT, LISTING, Rig, at, finish, run_watch

REVIEW_BODY = "re-check the migration"


def pr_items(rig: Rig, head: str = "bbb222") -> None:
    """ "prItems": head moved to ``head``, one comment by reviewer at 10:05:00Z."""
    rig.sim.move_head(7, head)
    rig.sim.add_comment(7, REVIEW_BODY, "reviewer", created_at=CANDIDATE_AT)


def test_S1_one_acceptable_run_steers_once_with_the_context(rig: Rig) -> None:
    rig.accept(101)
    pr_items(rig)
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.STEERED
    [msg] = rig.steerer.messages
    assert (msg.follow_up_run_id, msg.event, msg.actor, msg.head_sha) == (101, "pull_request_target", "", "bbb222")
    assert msg.created_at == at(CANDIDATE_AT)
    assert REVIEW_BODY in msg.text and msg.text.index(REVIEW_BODY) > msg.text.index("[work-item-context]")
    assert list(w.result().delivered) == [DeliveredSteer(101, (101,))]
    assert w.result().head == "bbb222" and w.result().steers == 1
    assert w.poll_and_steer() is Outcome.EMPTY  # same listing: 101 was judged
    assert len(rig.steerer.messages) == 1


def test_S2_two_runs_fold_into_one_message_and_spend_one_steer(rig: Rig) -> None:
    rig.accept(101)
    rig.accept(102)
    pr_items(rig)
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.STEERED
    [msg] = rig.steerer.messages
    assert msg.follow_up_run_id == 102
    assert list(w.result().delivered) == [DeliveredSteer(102, (101, 102))]
    assert w.result().steers == 1


def test_S3_skipped_stage_is_judged_not_consumed_and_never_re_read(rig: Rig) -> None:
    add_follow_up_run(
        rig.sim,
        run_id=101,
        pull_requests=(7,),
        created_at=CANDIDATE_AT,
        stage_status="completed",
        stage_conclusion="skipped",
    )
    pr_items(rig)
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.EMPTY
    assert w.poll_and_steer() is Outcome.EMPTY
    assert rig.steerer.messages == [] and list(w.result().delivered) == []
    assert list(w.result().seen_run_ids) == [101]
    assert rig.job_reads(101) == 1
    assert rig.lines("[stage-skipped]")


def test_S4_an_empty_delta_judges_the_run_without_steering(rig: Rig) -> None:
    rig.accept(101)
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.EMPTY
    assert w.poll_and_steer() is Outcome.EMPTY
    assert rig.steerer.messages == [] and list(w.result().delivered) == [] and w.result().steers == 0
    assert list(w.result().seen_run_ids) == [101]
    assert rig.job_reads(101) == 1
    assert rig.lines("carried no visible change")
    assert list(w.result().left) == [(101, "empty-delta")]  # and the summary leaves it to its queued run


@pytest.mark.parametrize(
    "error, vector",
    [(SteerUnsupported("no"), "S5"), (SteerAfterSettle("late"), "S7"), (SteerSessionLost("gone"), "S8")],
    ids=["S5", "S7", "S8"],
)
def test_S5_S7_S8_terminal_delivery_errors_close_the_session_and_consume_nothing(rig: Rig, error, vector) -> None:
    rig.accept(101)
    pr_items(rig)
    w = rig.watcher()
    rig.steerer.fail_next.append(error)
    assert w.poll_and_steer() is Outcome.CLOSED
    assert list(w.result().delivered) == [] and w.result().steers == 0
    assert 101 not in w.result().seen_run_ids
    assert w.result().session_lost is (vector == "S8")
    assert rig.lines("[session-closed]", level="warning")


def test_S6_a_generic_delivery_error_retries_and_the_batch_is_re_sent(rig: Rig) -> None:
    rig.accept(101)
    pr_items(rig)
    w = rig.watcher()
    rig.steerer.fail_next.append(RuntimeError("mailbox write failed"))
    assert w.poll_and_steer() is Outcome.RETRY
    assert list(w.result().delivered) == [] and w.result().steers == 0 and 101 not in w.result().seen_run_ids
    assert rig.lines("Delivering the steer failed", level="warning")
    assert w.poll_and_steer() is Outcome.STEERED
    assert [m.follow_up_run_id for m in rig.steerer.messages] == [101]
    assert list(w.result().delivered) == [DeliveredSteer(101, (101,))]


def test_S9_a_listing_500_warns_and_retries(rig: Rig) -> None:
    rig.accept(101)
    pr_items(rig)
    w = rig.watcher()
    rig.sim.fail("GET", LISTING, 500, times=None)
    assert w.poll_and_steer() is Outcome.RETRY
    assert rig.steerer.messages == []
    assert rig.lines("Listing follow-up runs failed", level="warning")
    assert rig.lines("[listing-retry]")


def test_S10_a_listing_403_is_a_verdict_and_a_turn_end_settles_at_once(rig: Rig) -> None:
    rig.accept(101)
    pr_items(rig)
    rig.sim.fail("GET", LISTING, 403, times=None, body={"message": "Resource not accessible by integration"})
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.EMPTY
    finish(run_watch(w, turn_ends=1))
    assert w.result().settle_reason == "turn-end-nothing-new"
    assert rig.steerer.messages == [] and list(w.result().delivered) == [] and rig.steerer.settles == ["sandbox-1"]
    assert rig.lines("[listing-unreadable]")


def test_S11_the_cap_refuses_the_third_poll_without_listing(rig: Rig) -> None:
    w = rig.watcher(max_steers=2)
    for run_id, head in ((101, "bbb222"), (102, "ccc333")):
        rig.accept(run_id)
        rig.sim.move_head(7, head)
        assert w.poll_and_steer() is Outcome.STEERED
    rig.accept(103)
    rig.sim.move_head(7, "ddd444")
    before = rig.listings()
    assert w.poll_and_steer() is Outcome.EMPTY
    assert rig.listings() == before  # step 1: no API call once the cap is spent
    assert [d.run_ids for d in w.result().delivered] == [(101,), (102,)]
    assert w.result().head == "ccc333"


def test_S12_prior_steers_carry_the_cap_across_iterations(rig: Rig) -> None:
    carry = Carry()
    rig.accept(101)
    rig.sim.move_head(7, "bbb222")
    first = rig.watcher(carry)
    assert first.poll_and_steer() is Outcome.STEERED and first.result().steers == 1

    rig.accept(102)
    rig.sim.move_head(7, "ccc333")
    second = rig.watcher(carry)
    finish(run_watch(second, turn_ends=1))
    assert second.result().steers == 2 and second.result().settle_reason == "cap-reached"

    rig.accept(103)
    rig.sim.move_head(7, "ddd444")
    third = rig.watcher(carry)
    before = rig.listings()
    assert third.poll_and_steer() is Outcome.EMPTY
    finish(run_watch(third))
    assert third.result().settle_reason == "cap-reached" and list(third.result().delivered) == []
    assert rig.listings() == before
    assert [m.follow_up_run_id for m in rig.steerer.messages] == [101, 102]


def test_S13_prior_steers_are_floored_at_zero(rig: Rig) -> None:
    w = rig.watcher(Carry(steers=-5), max_steers=1)
    assert w.result().steers == 0


def _clipped_command(rig: Rig) -> None:
    """S14's first poll: run 101 (title binding) and a command whose instruction exceeds 4 KiB."""
    add_follow_up_run(rig.sim, run_id=101, title="org/repo#7", created_at=CANDIDATE_AT)
    rig.sim.add_comment(7, "/fs-review " + "x" * 16385, "reviewer", created_at="2026-09-03T10:04:50Z")


def test_S14_a_batch_whose_every_amendment_was_clipped_spends_no_steer(rig: Rig) -> None:
    _clipped_command(rig)
    w = rig.watcher(max_steers=1)
    assert w.poll_and_steer() is Outcome.STEERED
    assert rig.steerer.messages[0].follow_up_run_id == 101
    assert list(w.result().delivered) == [DeliveredSteer(101, ())]
    assert w.result().steers == 0

    baseline = w.result().baseline
    assert baseline is not None
    rig.sim.add_comment(7, "/fs-review re-check the migration", "reviewer", created_at=baseline + timedelta(seconds=1))
    add_follow_up_run(rig.sim, run_id=103, title="org/repo#7", created_at=baseline + timedelta(seconds=2))
    rig.sim.move_head(7, "ccc333")
    assert w.poll_and_steer() is Outcome.STEERED
    assert w.result().delivered[-1] == DeliveredSteer(103, (103,))
    assert w.result().steers == 1
    assert "Instruction from @reviewer: re-check the migration" in rig.steerer.messages[-1].text


def test_S15_a_failed_delivery_of_an_excluded_batch_leaves_it_unjudged(rig: Rig) -> None:
    _clipped_command(rig)
    w = rig.watcher(max_steers=1)
    rig.steerer.fail_next.append(RuntimeError("write failed"))
    assert w.poll_and_steer() is Outcome.RETRY
    assert 101 not in w.result().seen_run_ids
    assert w.poll_and_steer() is Outcome.STEERED
    assert rig.steerer.messages[-1].follow_up_run_id == 101
    assert list(w.result().delivered) == [DeliveredSteer(101, ())]
    assert 101 in w.result().seen_run_ids


def test_S16_a_push_confers_no_actor_whoever_pressed_re_run(rig: Rig) -> None:
    rig.accept(101, triggering_actor="fork-collaborator")
    rig.sim.move_head(7, "bbb222")
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.STEERED
    [msg] = rig.steerer.messages
    assert (msg.actor, msg.event) == ("", "pull_request_target")


def test_S17_the_actor_of_a_comment_run_is_actor_not_triggering_actor(rig: Rig) -> None:
    rig.accept(101, event="issue_comment", actor="reviewer", triggering_actor="someone-who-pressed-rerun")
    rig.sim.move_head(7, "bbb222")
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.STEERED
    assert rig.steerer.messages[0].actor == "reviewer"


def test_S18_an_empty_delta_beside_a_pending_run_retries(rig: Rig) -> None:
    rig.accept(101)
    rig.accept(102, route="in_progress")
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.RETRY
    assert 101 in w.result().seen_run_ids and 102 not in w.result().seen_run_ids
    assert rig.steerer.messages == []


def test_S19_the_first_log_line_of_a_poll_over_a_push_run_is_its_rejection(rig: Rig) -> None:
    add_follow_up_run(rig.sim, run_id=101, event="push", pull_requests=(7,), created_at=CANDIDATE_AT)
    w = rig.watcher()
    rig.logs.clear()
    assert w.poll_and_steer() is Outcome.EMPTY
    first = rig.logs[0][1]
    assert "rejected" in first and "[event]" in first
