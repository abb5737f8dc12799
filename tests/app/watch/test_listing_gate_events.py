"""Completeness of the listing gate, per event kind the shim reacts to (docs/architecture.md "Listing gate").

For each event kind of the shim's ``on:`` (``examples/fullsend.yml``) that can happen to a
watched item, the simulator changes the item's records the way GitHub does (the table in
docs/architecture.md cites the evidence); the real adapter's conditional reads
(``GitHubForge.item_version``) then give another version and the gate opens.  A quiet item's
reads are 304s and keep the gate shut.  ``issues opened`` and ``pull_request_target opened``
create the item: they start a run, never a follow-up of a watched one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from fullsend.adapters.github.forge import GitHubForge
from fullsend.core.model import Repo
from fullsend.core.watch import gate
from fullsend.core.watch.settle import Outcome
from fullsend.simulator.fixtures import JOB_TOKEN, ROLE_TOKEN, add_follow_up_run, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.app.watch.watch_rig import CLOCK_ORIGIN, Rig, at, make_rig
from tests.doubles.virtual_clock import VirtualClock

PR, ISSUE = 7, 9
Event = Callable[[GitHubSimulator], Any]


def _review_with_line_comment(sim: GitHubSimulator) -> None:
    review = sim.add_review(PR, "reviewer", "COMMENTED")
    sim.add_review_comments(review["id"], [{"path": "db/schema.sql", "line": 1, "body": "why?"}])


EVENTS: dict[str, tuple[int, Event, str]] = {  # kind → (item, what the event does, the field it changes)
    "issues.edited": (ISSUE, lambda s: s.update_issue(ISSUE, body="Now with steps."), "body"),
    "issues.labeled": (ISSUE, lambda s: s.update_issue(ISSUE, labels=["bug"]), "labels"),
    "issue_comment.created": (PR, lambda s: s.add_comment(PR, "/fs-review again", "reviewer"), "comments"),
    "issue_comment.created@issue": (ISSUE, lambda s: s.add_comment(ISSUE, "/fs-fix", "reviewer"), "comments"),
    "pull_request_target.synchronize": (PR, lambda s: s.move_head(PR, "bbb222"), "head"),
    "pull_request_target.ready_for_review": (PR, lambda s: s.update_issue(PR, draft=False), "draft"),
    "pull_request_target.closed": (PR, lambda s: s.update_issue(PR, state="closed"), "state"),
    "pull_request_target.labeled": (PR, lambda s: s.update_issue(PR, labels=["needs-review", "db"]), "labels"),
    "pull_request_target.unlabeled": (PR, lambda s: s.update_issue(PR, labels=[]), "labels"),
    "pull_request_review.submitted": (
        PR,
        lambda s: s.add_review(PR, "reviewer", "COMMENTED", body="Looks close."),
        "updated_at",
    ),
    "pull_request_review_comment.created": (PR, _review_with_line_comment, "review_comments"),
}


@pytest.fixture
def world() -> Iterator[tuple[GitHubSimulator, GitHubForge, VirtualClock]]:
    clock = VirtualClock(at(CLOCK_ORIGIN))
    with GitHubSimulator(clock=clock.now) as sim:
        standard_pr_scenario(sim)
        sim.update_issue(PR, draft=True, labels=["needs-review"])
        sim.add_issue(ISSUE, "Orders table", "Add it.", labels=[], created_at=clock.now(), updated_at=clock.now())
        forge = GitHubForge(Repo("org", "repo"), sim.api_url, sim.graphql_url, JOB_TOKEN, ROLE_TOKEN, clock)
        yield sim, forge, clock


def _record(sim: GitHubSimulator, number: int) -> dict[str, Any]:
    pull = sim.get_pull(number)
    return {**(sim.get_issue(number) or {}), **({"pull": pull} if pull else {})}


def _changed(before: dict[str, Any], after: dict[str, Any], field: str) -> bool:
    if field == "head":
        return bool(before["pull"]["head"]["sha"] != after["pull"]["head"]["sha"])
    if field in ("draft", "review_comments"):
        return bool(before["pull"][field] != after["pull"][field])
    if field == "updated_at":
        return bool(before["pull"]["updated_at"] != after["pull"]["updated_at"])
    return bool(before[field] != after[field])


@pytest.mark.parametrize("kind", sorted(EVENTS))
def test_each_event_kind_changes_the_items_record_and_opens_the_gate(
    world: tuple[GitHubSimulator, GitHubForge, VirtualClock], kind: str
) -> None:
    sim, forge, clock = world
    number, event, field = EVENTS[kind]
    pull = number == PR
    baseline, why = gate.decide(gate.Gate(), 0.0, forge.item_version(number, pull).key, False, False)
    listed = gate.listed(baseline, 0.0)
    clock.advance_to(1.0)
    quiet, why = gate.decide(listed, 1.0, forge.item_version(number, pull).key, False, False)
    assert why == gate.CLOSED and quiet == listed  # unchanged: both reads answered 304
    before = _record(sim, number)
    clock.advance_to(2.0)
    sim.reset_requests()
    event(sim)
    assert _changed(before, _record(sim, number), field), field
    version = forge.item_version(number, pull)
    opened, why = gate.decide(listed, 3.0, version.key, False, False, version.updated_at)
    assert why == gate.OPEN_CHANGED and opened.open_until_s == 3.0 + gate.GATE_WINDOW_S
    assert opened.changed_at == clock.now()  # the event's instant, which its run is created at or after
    assert sim.request_count("GET", rf"/(issues|pulls)/{number}$") == (2 if pull else 1)


def test_every_event_kind_of_the_example_shim_is_covered() -> None:
    """Each ``on:`` type of examples/fullsend.yml has a completeness case, or creates the item."""
    text = (Path(__file__).parents[3] / "examples" / "fullsend.yml").read_text(encoding="utf-8")
    text = text.split("\npermissions:")[0]
    kinds: set[str] = set()
    event = ""
    for line in text.splitlines():
        stripped = line.split("#")[0].strip()
        if line.startswith("  ") and not line.startswith("    ") and stripped.endswith(":"):
            event = stripped.rstrip(":")
        elif stripped.startswith("types:"):
            names = stripped.removeprefix("types:").strip().strip("[]")
            kinds |= {f"{event}.{name.strip()}" for name in names.split(",")}
    creates = {"issues.opened", "pull_request_target.opened"}
    covered = {k.split("@")[0] for k in EVENTS} | creates
    assert kinds and kinds <= covered, sorted(kinds - covered)


def test_a_gated_tick_lists_only_after_its_item_changed() -> None:
    """The real watch loop's gated cycle: a quiet item lists nothing; a comment opens the gate."""
    clock = VirtualClock(at(CLOCK_ORIGIN))
    with GitHubSimulator(clock=clock.now) as sim:
        rig: Rig = make_rig(sim, clock)  # type: ignore[arg-type]
        w = rig.watcher(poll_interval_s=5.0, deadline=clock.now() + timedelta(hours=1))
        assert w.poll_and_steer(forced=False).value and rig.listings() == 1  # the first: the backstop's
        clock.advance_to(5.0)
        w.poll_and_steer(forced=False)
        assert rig.listings() == 1 and w.state.polls == 1  # quiet: the gate stays shut
        sim.add_comment(PR, "a question", "reviewer")
        clock.advance_to(10.0)
        w.poll_and_steer(forced=False)
        assert rig.listings() == 2 and w.state.polls == 2
        w.poll_and_steer()  # forced (a turn end): lists whatever the gate says
        assert rig.listings() == 3


def test_the_moving_bound_never_skips_a_run_still_pending() -> None:
    """60 runs of another item push the ``created>=`` bound up; a follow-up whose Route job is
    still running stays above it, is judged when Route succeeds, and steers."""
    clock = VirtualClock(at(CLOCK_ORIGIN))  # 10:10:00; my run started at 10:00:00
    with GitHubSimulator(clock=clock.now) as sim:
        rig: Rig = make_rig(sim, clock)  # type: ignore[arg-type]
        w = rig.watcher(poll_interval_s=5.0, deadline=clock.now() + timedelta(hours=2), max_steers=1)
        for k in range(60):  # 10:11: another item's runs
            add_follow_up_run(sim, pr=8, pull_requests=(8,), created_at=clock.now() + timedelta(minutes=1, seconds=k))
        clock.advance_to(25 * 60.0)  # 10:35
        pending = rig.accept(201, route="in_progress", created_at=clock.now())
        rig.sim.move_head(PR, "bbb222")
        clock.advance_to(60 * 60.0)  # 11:10: the bound may move up to 10:35 - 10 min margin, in 10 min steps
        assert w.poll_and_steer() is Outcome.RETRY and 201 in w.state.undecided
        assert w.state.list_since == at("2026-09-03T10:20:00Z")  # 60 runs of 10:11 dropped; 201 (10:35) kept
        route = sim.jobs_of(pending["id"])[0]["id"]
        sim.update_job(route, status="completed", conclusion="success")
        clock.advance_to(60 * 60.0 + 5)
        assert w.poll_and_steer() is Outcome.STEERED and rig.steerer.calls == [("steer", 201)]
        last = [r for r in sim.requests if r.path.endswith("/fullsend.yml/runs")][-1]
        assert last.query.get("created") == [">=2026-09-03T10:20:00Z"]


def test_the_window_closes_once_the_changes_run_is_decided_and_not_before() -> None:
    """A push's run listed and steered closes the window: another item's runs no longer cost a
    listing.  A change that produced no run of my item keeps listing for the whole window."""
    clock = VirtualClock(at(CLOCK_ORIGIN))
    with GitHubSimulator(clock=clock.now) as sim:
        rig: Rig = make_rig(sim, clock)  # type: ignore[arg-type]
        w = rig.watcher(poll_interval_s=5.0, deadline=clock.now() + timedelta(hours=1))
        w.poll_and_steer(forced=False)
        clock.advance_to(5.0)
        sim.move_head(PR, "bbb222")
        pending = rig.accept(201, route="in_progress", created_at=clock.now())
        assert w.poll_and_steer(forced=False) is Outcome.RETRY and rig.listings() == 2  # listed, pending
        route = sim.jobs_of(pending["id"])[0]["id"]
        sim.update_job(route, status="completed", conclusion="success")
        clock.advance_to(10.0)
        assert w.poll_and_steer(forced=False) is Outcome.STEERED and rig.listings() == 3
        for k, t_s in enumerate((15.0, 20.0, 25.0)):  # inside the 30 s window: another item's runs
            add_follow_up_run(sim, pr=8, pull_requests=(8,), created_at=clock.now())
            clock.advance_to(t_s)
            w.poll_and_steer(forced=False)
            assert rig.listings() == 3, k
        sim.add_comment(PR, "a note without a command", "reviewer")  # no run of my item follows
        for t_s in (30.0, 35.0, 40.0, 55.0, 60.0):
            clock.advance_to(t_s)
            add_follow_up_run(sim, pr=8, pull_requests=(8,), created_at=clock.now())
            w.poll_and_steer(forced=False)
        assert rig.listings() == 3 + 4  # 30, 35, 40, 55 s (the window 30-60 s); at 60 s it has closed
