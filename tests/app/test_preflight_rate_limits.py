"""Issue 18: what a rate limit means for the pre-flight (wait up to a bound, then fail open) and the
receipt writer (wait up to a bound, then give up, logged), through the simulator with a virtual clock.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.action.skip.facts import PreflightFacts
from fullsend.app.action.skip.preflight import run_preflight
from fullsend.app.action.skip.receipt import PostState, post_receipt
from fullsend.app.action.tokens import receipt_signer
from fullsend.core.model import Repo
from fullsend.core.receipt.marker import Marker
from fullsend.simulator.fixtures import (
    JOB_LOGIN,
    JOB_TOKEN,
    ROLE_TOKEN,
    add_follow_up_run,
    genuine_receipt,
    oidc_request_token,
    shim_workflow_ref,
    standard_pr_scenario,
)
from fullsend.simulator.server import GitHubSimulator
from tests.doubles.recording_clock import RecordingVirtualClock

QUEUED_RUN = 33740015299
COMMENTS = r"/issues/7/comments$"


@pytest.fixture
def clock() -> RecordingVirtualClock:
    return RecordingVirtualClock()


@pytest.fixture
def sim(clock: RecordingVirtualClock):
    with GitHubSimulator(clock=clock.now) as simulator:
        standard_pr_scenario(simulator)
        add_follow_up_run(simulator, run_id=QUEUED_RUN)
        simulator.add_comment(7, genuine_receipt(simulator, [QUEUED_RUN], "aaa111"), JOB_LOGIN)
        simulator.reset_requests()
        yield simulator


def _facts(tmp_path: Path, sim: GitHubSimulator) -> PreflightFacts:
    return PreflightFacts(
        stage="review",
        run_id_raw=str(QUEUED_RUN),
        run_attempt="1",
        repository="org/repo",
        item_number=7,
        job_token=JOB_TOKEN,
        role_token=ROLE_TOKEN,
        minted=True,
        fullsend_dir=str(tmp_path / ".fullsend"),
        event_name="issue_comment",
        in_actions=True,
        receipt_issuer=sim.issuer.url,
        workflow_ref=shim_workflow_ref(sim),
    )


def _forge(sim: GitHubSimulator, clock: RecordingVirtualClock) -> GitHubForge:
    return GitHubForge(Repo("org", "repo"), sim.api_url, sim.graphql_url, JOB_TOKEN, ROLE_TOKEN, clock)


def test_the_preflight_waits_out_a_limit_within_its_bound_and_still_skips(sim, clock, tmp_path):
    sim.secondary_limit("POST", r"^/graphql$", retry_after=100, login=JOB_LOGIN)
    lines: list[tuple[str, str]] = []
    skip = run_preflight(_forge(sim, clock), _facts(tmp_path, sim), lambda level, msg: lines.append((level, msg)))
    assert skip is not None and skip.rule_id == "receipt-lists-my-run"
    assert clock.slept_s == [100.0]  # more than the default 60 s: the pre-flight allows 120 s


def test_the_preflight_fails_open_when_a_limit_outlasts_its_bound(sim, clock, tmp_path):
    sim.secondary_limit("POST", r"^/graphql$", retry_after=600, times=None, login=JOB_LOGIN)
    lines: list[tuple[str, str]] = []
    skip = run_preflight(_forge(sim, clock), _facts(tmp_path, sim), lambda level, msg: lines.append((level, msg)))
    assert skip is None  # the run does the work
    warnings = [m for level, m in lines if level == "warning"]
    assert len(warnings) == 1 and "Could not check whether this update was already handled" in warnings[0]
    assert "rate limit" in warnings[0]
    graphql = [(r.method, r.path) for r in sim.requests if r.login == JOB_LOGIN and r.path == "/graphql"]
    assert graphql == [("POST", "/graphql")]
    assert clock.slept_s == []  # nothing was sent into the limit, and nothing waited for it


def test_the_receipt_writer_waits_out_a_short_limit(sim, clock, tmp_path):
    sim.secondary_limit("POST", COMMENTS, retry_after=30)
    lines: list[tuple[str, str]] = []
    post = post_receipt(
        _forge(sim, clock),
        _facts(tmp_path, sim),
        Marker((101,), "aaa111"),
        lambda level, msg: lines.append((level, msg)),
        receipt_signer(sim.oidc_request_url, oidc_request_token(sim, QUEUED_RUN), clock),
    )
    assert post.state is PostState.POSTED and post.comment is not None and post.comment.html_url
    assert clock.slept_s == [30.0]
    assert sim.request_count("POST", COMMENTS) == 2 and len(sim.comments(7)) == 2


def test_the_receipt_writer_gives_up_after_its_bound_and_says_so(sim, clock, tmp_path):
    sim.secondary_limit("POST", COMMENTS, retry_after=600, times=None)
    lines: list[tuple[str, str]] = []
    post = post_receipt(
        _forge(sim, clock),
        _facts(tmp_path, sim),
        Marker((101,), "aaa111"),
        lambda level, msg: lines.append((level, msg)),
        receipt_signer(sim.oidc_request_url, oidc_request_token(sim, QUEUED_RUN), clock),
    )
    assert post.state is PostState.NOT_POSTED and post.comment is None
    assert [level for level, m in lines if m.startswith("Gave up posting the steer receipt")] == ["warning"]
    assert sim.request_count("POST", COMMENTS) == 1 and len(sim.comments(7)) == 1  # only the earlier receipt
