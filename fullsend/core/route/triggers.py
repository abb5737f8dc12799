"""The events the shim listens to: for each stage, every event and activity type on which Route
can select it (docs/adopting.md "Start with fullsend init", the shim's ``on:``).  Pure.

A follow-up run steers the run in flight only when Route selected the same stage for it (its
stage job was not skipped: docs/rules.md#stage-skipped), so the events that steer a stage are
among those that start it, and this one table serves both.  ``tests/core/route/test_triggers.py``
derives it again from :func:`fullsend.core.route.decision.decide` over every event, activity
type, label, command and author kind, so the table cannot drift from Route.

Not here: a ``label_triggers`` pair can select any stage on ``labeled`` and an
``assignee_triggers`` pair needs ``assigned`` (docs/rules.md#route-label, #route-assigned); the
adopter who sets one adds the activity type (docs/adopting.md says so).
"""

from __future__ import annotations

from collections.abc import Iterable

from fullsend.core.wire import THREAD_EVENT

_COMMENTS = {"issue_comment": ("created",), THREAD_EVENT: ("created",)}

#: stage → {event name: activity types} (WIRE: GitHub's event and activity-type names).
STAGE_TRIGGERS: dict[str, dict[str, tuple[str, ...]]] = {
    "triage": {"issues": ("opened", "edited", "labeled"), **_COMMENTS},
    "code": {"issues": ("labeled",), "issue_comment": ("created",)},
    "review": {"pull_request_target": ("opened", "synchronize", "ready_for_review", "labeled"), **_COMMENTS},
    "fix": {"pull_request_review": ("submitted",), **_COMMENTS},
    "retro": {"pull_request_target": ("closed",), **_COMMENTS},
    "prioritize": dict(_COMMENTS),
}
#: The order of the shim's ``on:`` keys and of each key's types (GitHub ignores the order; a stable
#: one keeps ``fullsend init --upgrade``'s diffs small).
EVENT_ORDER = ("issues", "issue_comment", "pull_request_target", "pull_request_review", THREAD_EVENT)
TYPE_ORDER = ("opened", "edited", "created", "submitted", "synchronize", "ready_for_review", "closed", "labeled")


def shim_triggers(stages: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The shim's ``on:`` for ``stages`` (names in :data:`STAGE_TRIGGERS`): ``{event: types}``,
    the union over the stages, in :data:`EVENT_ORDER` and :data:`TYPE_ORDER`.  Raises
    ``KeyError`` for an unknown stage."""
    wanted: dict[str, set[str]] = {}
    for stage in stages:
        for event, types in STAGE_TRIGGERS[stage].items():
            wanted.setdefault(event, set()).update(types)
    return {event: tuple(t for t in TYPE_ORDER if t in wanted[event]) for event in EVENT_ORDER if event in wanted}
