"""The shim's ``on:`` per stage (``fullsend.core.route.triggers``) is exactly where Route selects
each stage: derived again here from the decision itself over every event the shim may carry (and
a few it never should), every activity type, label, command, author kind, review state and head."""

from __future__ import annotations

import itertools

import pytest

from fullsend.core.provenance.verdicts import ALLOWED_EVENTS
from fullsend.core.route.decision import COMMANDS, STAGES, AskRole, Role, RouteDecision, decide
from fullsend.core.route.event import Actor, RouteEvent
from fullsend.core.route.policy import decide_with, read_policy
from fullsend.core.route.triggers import STAGE_TRIGGERS, shim_triggers
from fullsend.core.wire import THREAD_EVENT

REPO = "acme/widgets"
#: Each event's activity types as GitHub's webhook documentation lists them ("" for an event without).
GITHUB_TYPES: dict[str, tuple[str, ...]] = {
    "issues": (
        *("opened", "edited", "deleted", "pinned", "unpinned", "closed", "reopened", "assigned", "unassigned"),
        *("labeled", "unlabeled", "locked", "unlocked", "transferred", "milestoned", "demilestoned", "typed"),
    ),
    "issue_comment": ("created", "edited", "deleted"),
    "pull_request_target": (
        *("assigned", "unassigned", "labeled", "unlabeled", "opened", "edited", "closed", "reopened"),
        *("synchronize", "converted_to_draft", "ready_for_review", "locked", "unlocked", "review_requested"),
        *("review_request_removed", "auto_merge_enabled", "auto_merge_disabled", "enqueued", "dequeued"),
    ),
    "pull_request_review": ("submitted", "edited", "dismissed"),
    THREAD_EVENT: ("created", "edited", "deleted"),
    "pull_request": ("opened", "synchronize", "closed", "labeled"),
    "push": ("",),
    "workflow_dispatch": ("",),
}
#: Types Route would route but the shim leaves out on purpose: an edited or deleted comment, and an
#: edited review, are no new command (the run in flight already has the comment it works on).
NOT_LISTENED = {("issue_comment", "edited"), ("issue_comment", "deleted"), ("pull_request_review", "edited")}
LABELS = ("", "ready-for-triage", "ready-to-code", "ready-for-review", "needs-info", "fullsend-fix", "bug")
BODIES = (*COMMANDS, "/fullsend retro", "thanks, here are the logs")
STATES = ("changes_requested", "approved", "commented")


def _events():
    pairs = [(name, action) for name, types in GITHUB_TYPES.items() for action in types]
    for (name, action), label, app, is_pr, fork in itertools.product(
        pairs, LABELS, (False, True), (False, True), (False, True)
    ):
        if is_pr != (name != "issues") and name != "issue_comment":
            continue  # only a comment's event carries either item; issues never a pull request
        bodies = BODIES if name in ("issue_comment", THREAD_EVENT) else ("",)
        states = ("dismissed",) if action == "dismissed" else STATES if name == "pull_request_review" else ("",)
        actor = Actor("rob[bot]" if app else "wendy", "Bot" if app else "User")
        for body, state in itertools.product(bodies, states):
            yield RouteEvent(
                name=name,
                repository=REPO,
                action=action,
                sender=actor,
                is_pull_request=is_pr,
                labels=(label,) if label else (),
                issue_author="wendy",
                label=label,
                comment_body=body,
                comment_author=actor,
                comment_association="MEMBER",
                pr_author=actor,
                pr_head_repo="someone/widgets" if fork else REPO,
                review_state=state,
                review_author="acme-review[bot]",
            )


def _stage(decided: RouteDecision | AskRole, again) -> str:
    if isinstance(decided, AskRole):  # the highest role: every floor is met
        decided = again(Role(decided.login, "admin"))
    assert isinstance(decided, RouteDecision)
    return decided.stage


def _selected(decide_one) -> dict[str, set[tuple[str, str]]]:
    found: dict[str, set[tuple[str, str]]] = {s: set() for s in STAGES}
    for event in _events():
        stage = _stage(decide_one(event, None), lambda role, e=event: decide_one(e, role))
        if stage and (event.name, event.action) not in NOT_LISTENED:
            found[stage].add((event.name, event.action))
    return found


def _table() -> dict[str, set[tuple[str, str]]]:
    return {s: {(e, t) for e, types in STAGE_TRIGGERS[s].items() for t in types} for s in STAGES}


def test_the_table_is_every_event_and_type_on_which_route_selects_each_stage() -> None:
    assert _selected(lambda event, role: decide(event, role, "acme-review[bot]")) == _table()


def test_the_route_step_with_its_default_policy_agrees() -> None:
    policy = read_policy({"stages": ",".join(STAGES), "review_app": "acme-review[bot]"})
    assert _selected(lambda event, role: decide_with(event, policy, role)) == _table()


def test_every_event_in_the_table_is_one_the_run_in_flight_accepts() -> None:
    assert {e for triggers in STAGE_TRIGGERS.values() for e in triggers} <= ALLOWED_EVENTS
    assert set(GITHUB_TYPES) >= ALLOWED_EVENTS


def test_what_the_shim_leaves_out_on_purpose_is_something_route_would_route() -> None:
    """Else NOT_LISTENED would hide nothing, and the narrowing would be untested."""
    routed = set()
    for event in _events():
        decided = decide(event, Role(event.sender.login, "admin"), "acme-review[bot]")
        if isinstance(decided, RouteDecision) and decided.stage:
            routed.add((event.name, event.action))
    assert routed >= NOT_LISTENED


def test_review_and_fix_listen_to_no_issue_event_and_no_unrouted_type() -> None:
    assert shim_triggers(("review", "fix")) == {
        "issue_comment": ("created",),
        "pull_request_target": ("opened", "synchronize", "ready_for_review", "labeled"),
        "pull_request_review": ("submitted",),
        THREAD_EVENT: ("created",),
    }


def test_every_stage_listens_to_the_union_in_a_stable_order() -> None:
    assert shim_triggers(STAGES) == {
        "issues": ("opened", "edited", "labeled"),
        "issue_comment": ("created",),
        "pull_request_target": ("opened", "synchronize", "ready_for_review", "closed", "labeled"),
        "pull_request_review": ("submitted",),
        THREAD_EVENT: ("created",),
    }
    assert shim_triggers(("code",)) == {"issues": ("labeled",), "issue_comment": ("created",)}


def test_an_unknown_stage_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        shim_triggers(("deploy",))
