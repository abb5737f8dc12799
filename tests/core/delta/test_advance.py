"""Snapshot advancement after delivery (docs/architecture.md "Delta")."""

from __future__ import annotations

from dataclasses import replace

from fullsend.core.delta.changes import advance, build_delta
from fullsend.core.delta.records import ForgeSnapshot
from fullsend.core.model import CompareFile, Comparison
from fullsend.core.text.steertext import build_text
from tests.support.forge_records import FIX_SELF, at, auth, comment, issue, issue_state, pr_snap, pr_state, run

BATCH = [run(9, event="issues")]


def step(state, snap, wording, auths=(), batch=BATCH):
    """Build the delta and text, deliver, and return (delta, text, next state)."""
    d = build_delta(state, snap, list(auths), [], FIX_SELF, wording)
    t = build_text(batch, d, wording)
    return d, t, advance(state, d, t, at("10:30"))


def test_title_edit_reported_until_delivered_then_revert_reported(wording):
    state = issue_state(title="Old", body="old body", labels=())
    snap = ForgeSnapshot([], issue("New", "old body"))
    d1 = build_delta(state, snap, [], [], FIX_SELF, wording)
    d2 = build_delta(state, snap, [], [], FIX_SELF, wording)  # not delivered: still reported
    assert [i.body for i in d1.context] == [i.body for i in d2.context] == [wording.title_item("New")]
    _, _, state = step(state, snap, wording)
    assert state.since == at("10:30") and state.title == "New"
    assert build_delta(state, snap, [], [], FIX_SELF, wording).empty
    reverted = build_delta(state, ForgeSnapshot([], issue("Old", "old body")), [], [], FIX_SELF, wording)
    assert [i.body for i in reverted.context] == [wording.title_item("Old")]


def test_clipped_body_is_not_taken_as_told(wording):
    state = issue_state(title="T", body="old body", labels=())
    long_body = "new body line. " * 2048
    _, text, after = step(state, ForgeSnapshot([], issue("T", long_body)), wording)
    assert text.state_clipped and after.body == "old body" and after.since == at("10:30")
    again = build_delta(after, ForgeSnapshot([], issue("T", long_body)), [], [], FIX_SELF, wording)
    assert [i.body.startswith(wording.body_edited) for i in again.context] == [True]
    _, text, after = step(after, ForgeSnapshot([], issue("T", "short new body")), wording)
    assert not text.state_clipped and after.body == "short new body"


def test_five_items_comments_first_state_last(wording):
    state = issue_state(title="Old", body="Old body", labels=("bug",))
    snap = ForgeSnapshot(
        [comment(1, "a", "one", "10:05"), comment(2, "b", "two", "10:06")], issue("New", "New body", ["p1"])
    )
    d = build_delta(state, snap, [], [], FIX_SELF, wording)
    assert [i.kind for i in d.context] == ["comment", "comment", "state", "state", "state"]


def test_comment_only_overflow_does_not_hold_state(wording):
    state = issue_state(title="T", body="B", labels=())
    snap = ForgeSnapshot([comment(1, "a", "x" * 20_000, "10:05")], issue("T", "B"))
    _, text, _ = step(state, snap, wording)
    assert "[truncated]" in text.text and not text.state_clipped


def test_pr_head_delivered_moves_last_head(wording):
    _, text, after = step(pr_state(), pr_snap("bbb222"), wording, batch=[run(101, event="pull_request_target")])
    assert not text.head_clipped and after.last_head == "bbb222"
    assert not build_delta(after, pr_snap("bbb222"), [], [], FIX_SELF, wording).head_moved


def test_head_move_pushed_out_by_amendments_is_reported_again(wording):
    files = tuple(CompareFile(f"f{i}.go", "modified", additions=1) for i in range(5))
    snap = pr_snap("bbb222", comparison=Comparison("ahead", 1, files=files), compare_error="")
    comments = [comment(i, "reviewer", "/fs-fix " + chr(96 + i) * 3_900, f"10:0{i}") for i in range(1, 5)]
    auths = [auth("reviewer", 50 + i, f"10:0{i}:03") for i in range(1, 5)]
    batch = [run(50 + i, created=f"10:0{i}:03") for i in range(1, 5)]
    d, text, after = step(pr_state(), replace(snap, comments=comments), wording, auths, batch)
    assert len(d.amendments) == 4 and text.excluded == frozenset()
    assert text.head_clipped and after.last_head == "aaa111"
    d, text, after = step(after, snap, wording, batch=[run(60, event="pull_request_target")])
    assert d.head_moved and not text.head_clipped and after.last_head == "bbb222"


def test_issue_labels_only_advance_when_unclipped(wording):
    state = issue_state(title="T", body="B", labels=("bug",))
    _, text, after = step(state, ForgeSnapshot([], issue("T", "B", ["bug", "p2"])), wording)
    assert not text.state_clipped and after.labels == ("bug", "p2")


def test_advance_without_issue_keeps_snapshot(wording):
    state = pr_state(labels=("x",))
    d = build_delta(state, pr_snap("aaa111", [comment(1, "a", "hi", "10:05")]), [], [], FIX_SELF, wording)
    t = build_text([run(1)], d, wording)
    assert advance(state, d, t, at("10:40")) == replace(state, since=at("10:40"), delivered_comment_ids=frozenset({1}))


def test_advance_adds_what_the_delta_carried_to_the_delivered_ids(wording):
    """Issue 18: the next delta opens at the snapshot's second; what this one carried is excluded by id."""
    state = replace(pr_state(), delivered_comment_ids=frozenset({7}))
    d = build_delta(
        state,
        pr_snap("aaa111", [comment(1, "a", "hi", "10:05"), comment(2, "b", "yo", "10:06")]),
        [],
        [],
        FIX_SELF,
        wording,
    )
    after = advance(state, d, build_text([run(1)], d, wording), at("10:40"))
    assert after.delivered_comment_ids == {1, 2, 7}
