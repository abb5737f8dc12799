"""The head-reviewed skip before the application is loaded (docs/rules.md#head-reviewed,
docs/architecture.md "Fast skip").

Each case builds one world on a fresh simulator (real HTTP on 127.0.0.1) and runs it through
``fast_skip``, the lifecycle's own steps up to its pre-flight on the forge; it must give the
expected ``skip_reason`` (``None``: the run does the work)."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from typing import Any

import pytest

from fullsend.adapters.gha import Console
from fullsend.app.action.cancel import Cancellation
from fullsend.app.action.skip.fastskip import fast_skip
from fullsend.core.receipt.marker import receipt_body
from fullsend.simulator.fixtures import FIX_CREATED_AT, JOB_LOGIN, StandardScenario, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import parse_outputs, runner_env

APP = "fullsend-ai-review[bot]"  # the role token's App: a default review App login
AFTER, BEFORE = "2026-09-03T10:00:01Z", "2026-09-03T09:59:59Z"
World = Callable[[GitHubSimulator, StandardScenario], Any]


def sync_event(number: int = 7, action: str = "synchronize") -> dict[str, Any]:
    return {"action": action, "pull_request": {"number": number}}


def review(login: str = APP, state: str = "COMMENTED", at: str = AFTER, **extra: Any) -> World:
    return lambda sim, fix: sim.add_review(fix.pr, login, state, submitted_at=at, **extra)


def fast_reason(env: dict[str, str], tmp_path) -> str | None:
    fast = fast_skip(Console(io.StringIO()), env, Cancellation())
    if fast.exit_code is None:
        return None
    return parse_outputs((tmp_path / "file_commands" / "output").read_text())["skip_reason"]


def reason(tmp_path, world: World, inputs=None, env_over=None, event=None, prefix="") -> str | None:
    with GitHubSimulator(prefix=prefix) as sim:
        fix = standard_pr_scenario(sim)
        world(sim, fix)
        env = runner_env(tmp_path, sim, fix, inputs=inputs, event=event or sync_event())
        env["GITHUB_EVENT_NAME"] = "pull_request"
        env.update(env_over(sim, fix) if callable(env_over) else (env_over or {}))
        return fast_reason(env, tmp_path)


def nothing(sim: GitHubSimulator, fix: StandardScenario) -> None:
    return None


def created_bad(sim: GitHubSimulator, fix: StandardScenario) -> None:
    review()(sim, fix)
    sim.mutate("GET", r"/actions/runs/\d+$", lambda b: {**b, "created_at": "yesterday"}, times=None)


def states(value: Any) -> World:
    def world(sim: GitHubSimulator, fix: StandardScenario) -> None:
        review()(sim, fix)
        sim.mutate("GET", r"/reviews$", lambda b: [{**r, "state": value} for r in b], times=None)

    return world


def then(*worlds: World) -> World:
    return lambda sim, fix: [w(sim, fix) for w in worlds]


HR = "head-reviewed"
CASES: dict[str, tuple[World, dict[str, Any], str | None]] = {
    # name: (world, options of both(), expected skip_reason)
    "reviewed-after-creation": (review(), {}, HR),
    "approved-after": (review(state="APPROVED"), {}, HR),
    "changes-requested-after": (review(state="CHANGES_REQUESTED"), {}, HR),
    "owner-review-app": (review(login="org-review[bot]"), {}, HR),
    "opened": (review(), {"event": sync_event(action="opened")}, HR),
    "labeled": (review(), {"event": sync_event(action="labeled")}, HR),
    "steering-off": (review(), {"inputs": {"steer_enabled": "false"}}, HR),
    "ghes-prefix": (review(), {"prefix": "/api/v3"}, HR),
    "configured-login": (review(login="custom[bot]"), {"inputs": {"review_bot_logins": "x[bot], custom[bot]"}}, HR),
    "receipt-first": (  # the unsigned form, which the fast skip decides (issue 45)
        then(review(), lambda s, f: s.add_comment(f.pr, receipt_body([f.my_run_id], f.head), JOB_LOGIN)),
        {"inputs": {"allow_unsigned_receipts": "true"}},
        "receipt",
    ),
    "unsigned-receipt-refused": (
        then(review(), lambda s, f: s.add_comment(f.pr, receipt_body([f.my_run_id], f.head), JOB_LOGIN)),
        {},
        HR,
    ),
    "reviewed-before-creation": (review(at=BEFORE), {}, None),
    "reviewed-at-creation": (review(at=FIX_CREATED_AT), {}, None),
    "other-app": (review(login="other-review[bot]"), {}, None),
    "default-app-not-configured": (review(), {"inputs": {"review_bot_logins": "custom[bot]"}}, None),
    "a-user-named-like-the-app": (review(user_type="User"), {}, None),
    "dismissed": (review(state="DISMISSED"), {}, None),
    "pending": (review(state="PENDING"), {}, None),
    "unknown-state": (states("SUPER_APPROVED"), {}, None),
    "state-lower-case": (states("commented"), {}, HR),
    "state-not-a-string": (states(1), {}, None),
    "head-moved": (review(commit_id="bbb222"), {}, None),
    "no-review": (nothing, {}, None),
    "stage-code": (review(), {"inputs": {"stage": "code"}}, None),
    "comment-event": (review(), {"event": {"action": "created", "issue": {"number": 7}}}, None),
    "event-other-pr": (review(), {"event": sync_event(number=8)}, None),
    "closed-event": (review(), {"event": sync_event(action="closed")}, None),
    "manual-rerun": (review(), {"env_over": {"GITHUB_RUN_ATTEMPT": "2"}}, None),
    "run-404": (then(review(), lambda s, f: s.fail("GET", r"/actions/runs/\d+$", 404, times=None)), {}, None),
    "pull-500": (then(review(), lambda s, f: s.fail("GET", r"/pulls/7$", 500, times=None)), {}, None),
    "reviews-502": (then(review(), lambda s, f: s.fail("GET", r"/reviews", 502, times=None)), {}, None),
    "reviews-not-json": (
        then(review(), lambda s, f: s.mutate("GET", r"/reviews", lambda b: b"<html>", None)),
        {},
        None,
    ),
    "reviews-object": (then(review(), lambda s, f: s.mutate("GET", r"/reviews", lambda b: {"r": b}, None)), {}, None),
    "run-created-unreadable": (created_bad, {}, None),
}
CASES["review-author-null"] = (
    then(review(), lambda s, f: s.mutate("GET", r"/reviews$", lambda b: [{**r, "user": None} for r in b], None)),
    {},
    None,
)
CASES["submitted-at-missing"] = (
    then(
        review(), lambda s, f: s.mutate("GET", r"/reviews$", lambda b: [{**r, "submitted_at": None} for r in b], None)
    ),
    {},
    None,
)


@pytest.mark.parametrize("name", list(CASES))
def test_each_world_gives_its_expected_decision(tmp_path, name: str) -> None:
    world, options, expected = CASES[name]
    assert reason(tmp_path, world, **options) == expected


def _keys_read(sim: GitHubSimulator) -> None:
    """Wait until the issuer's keys (a signed receipt's proof, issue 45) have been answered."""
    for _ in range(600):
        if any(r.path.endswith("/.well-known/jwks") for r in sim.requests):
            return
        threading.Event().wait(0.05)
    raise AssertionError("the issuer's keys were never read")


def test_the_head_reads_go_beside_the_receipt_view_and_each_is_sent_once(tmp_path) -> None:
    """One round trip: the receipt view's answer is held until the reviews read has arrived, which
    happens only when the head-reviewed reads are sent beside it (docs/architecture.md "Fast skip")."""
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        review()(sim, fix)
        env = runner_env(tmp_path, sim, fix, event=sync_event())
        env["GITHUB_EVENT_NAME"] = "pull_request"
        reviews_asked, overlapped = threading.Event(), threading.Event()
        sim.on_request(lambda r: r.path.endswith("/reviews"), lambda s: reviews_asked.set())
        sim.on_request(
            lambda r: r.path == "/graphql" and r.login == JOB_LOGIN,
            lambda s: overlapped.set() if reviews_asked.wait(10) else None,
        )
        out = io.StringIO()
        assert fast_skip(Console(out), env, Cancellation()).exit_code == 0
        _keys_read(sim)
        sent = sorted(f"{r.method} {r.path.rsplit('/', 1)[-1]}" for r in sim.requests)
    assert overlapped.is_set()
    # this run is read once for both checks (the head's, and a signed receipt's proof: issue 45),
    # and the issuer's keys beside them
    assert sent == sorted(["GET 7", "GET reviews", f"GET {fix.my_run_id}", "GET jwks", "POST graphql", "POST graphql"])
    lines = out.getvalue()
    assert f"The review App already reviewed this head after run {fix.my_run_id} was created; nothing to do" in lines
    assert lines.rstrip().endswith("Outcome: skipped (head-reviewed)")


def test_a_run_that_does_the_work_goes_on_with_the_forge_and_the_pre_flight_s_lines(tmp_path) -> None:
    """No review of the head: the fast path hands its forge on with the pre-flight done and its
    line held for the lifecycle's log; a later read is sent anew (nothing is kept but the forge)."""
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        review(at=BEFORE)(sim, fix)
        env = runner_env(tmp_path, sim, fix, event=sync_event())
        env["GITHUB_EVENT_NAME"] = "pull_request"
        fast = fast_skip(Console(io.StringIO()), env, Cancellation())
        assert fast.exit_code is None and fast.preflight_done and fast.forge is not None and fast.relay is not None
        _keys_read(sim)  # read beside the receipt query, and not waited for when no receipt lists the run
        # the receipt view, the role's viewer, the run, the pull request, its reviews, the issuer's keys
        assert len(sim.requests) == 6
        assert fast.relay.lines == [
            (
                "info",
                "Head-reviewed skip not applied: no review App review of aaa111 after 2026-09-03T10:00:00Z [head-reviewed]",
            )
        ]
        sim.reset_requests()
        assert fast.forge.get_pull_request(fix.pr).head_sha == fix.head
        assert [r.path for r in sim.requests] == [f"/repos/org/repo/pulls/{fix.pr}"]
