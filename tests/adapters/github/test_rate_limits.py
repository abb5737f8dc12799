"""Issue 18: one rate-limit policy at the adapter seam, GitHub's documented rule, through the simulator.

The rule (docs/rules.md#rate-limited): honour ``retry-after``; else, with
``x-ratelimit-remaining: 0``, send nothing before ``x-ratelimit-reset``; else wait at least a
minute and back off exponentially.  No request is sent into a known active limit.  Every wait
goes through a virtual clock (nothing sleeps), and every test counts the requests GitHub saw.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from fullsend.adapters.github.forge import GitHubForge
from fullsend.core.model import Repo
from fullsend.errors import RateLimited
from fullsend.simulator.fixtures import FIX_RUN_ID, JOB_LOGIN, JOB_TOKEN, ROLE_LOGIN, ROLE_TOKEN, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.doubles.recording_clock import RecordingVirtualClock

RUN = rf"/actions/runs/{FIX_RUN_ID}$"


@pytest.fixture
def clock() -> RecordingVirtualClock:
    return RecordingVirtualClock()


@pytest.fixture
def sim(clock: RecordingVirtualClock):
    with GitHubSimulator(clock=clock.now) as simulator:
        standard_pr_scenario(simulator)
        simulator.reset_requests()
        yield simulator


def _forge(sim: GitHubSimulator, clock: RecordingVirtualClock) -> GitHubForge:
    return GitHubForge(Repo("org", "repo"), sim.api_url, sim.graphql_url, JOB_TOKEN, ROLE_TOKEN, clock)


def test_a_secondary_limit_without_headers_waits_a_minute_then_backs_off_exponentially(sim, clock):
    sim.secondary_limit("GET", RUN, retry_after=None, times=3)
    run = _forge(sim, clock).bounded(max_wait_s=None).get_run(FIX_RUN_ID)
    assert run.id == FIX_RUN_ID
    assert clock.slept_s == [60.0, 120.0, 240.0]  # not 1, 2, 4 s: GitHub asks for at least a minute
    assert sim.request_count("GET", RUN) == 4


def test_a_429_without_headers_is_a_secondary_limit_too(sim, clock):
    sim.secondary_limit("GET", RUN, retry_after=None, status=429)
    _forge(sim, clock).get_run(FIX_RUN_ID)
    assert clock.slept_s == [60.0]


def test_retry_after_90_is_honoured_in_full_when_the_caller_allows_it(sim, clock):
    sim.secondary_limit("GET", RUN, retry_after=90)
    _forge(sim, clock).bounded(max_wait_s=120).get_run(FIX_RUN_ID)
    assert clock.slept_s == [90.0]  # not capped at 60 s, which would send into the limit
    assert sim.request_count("GET", RUN) == 2


def test_a_limit_longer_than_the_bound_is_refused_and_nothing_is_sent_into_it(sim, clock):
    sim.secondary_limit("GET", RUN, retry_after=90)
    forge = _forge(sim, clock)  # the default bound: 60 s
    with pytest.raises(RateLimited) as refused:
        forge.get_run(FIX_RUN_ID)
    assert refused.value.until == clock.now() + timedelta(seconds=90) and refused.value.transient
    with pytest.raises(RateLimited):
        forge.list_run_jobs(FIX_RUN_ID)  # another endpoint of the same token: still inside the limit
    with pytest.raises(RateLimited):
        forge.viewer_login("job")  # GraphQL too: a secondary limit holds the whole token
    assert clock.slept_s == [] and sim.request_count() == 1
    forge.get_issue(7)  # the role token is not limited
    assert sim.request_count() == 2


def test_retry_after_as_an_http_date(sim, clock):
    sim.secondary_limit("GET", RUN, retry_after=clock.now() + timedelta(seconds=42))
    _forge(sim, clock).get_run(FIX_RUN_ID)
    assert clock.slept_s == [42.0]


@pytest.mark.parametrize("value", ["²", "soon", "-5", "1e3", "99999999999999999999"])
def test_an_unreadable_retry_after_is_the_default_wait_never_an_error(sim, clock, value):
    sim.secondary_limit("GET", RUN, retry_after=value)
    _forge(sim, clock).get_run(FIX_RUN_ID)
    assert clock.slept_s == [60.0]


def test_remaining_zero_with_the_reset_24_minutes_away_is_not_resent(sim, clock):
    reset = clock.now() + timedelta(minutes=24)
    sim.primary_limit("GET", RUN, reset_at=reset, times=None)
    with pytest.raises(RateLimited) as refused:
        _forge(sim, clock).get_run(FIX_RUN_ID)
    assert refused.value.until == reset + timedelta(seconds=1)
    assert sim.request_count("GET", RUN) == 1 and clock.slept_s == []  # not four more, 60 s apart


def test_remaining_zero_waits_until_the_reset_when_the_caller_allows_it(sim, clock):
    sim.primary_limit("GET", RUN, reset_at=clock.now() + timedelta(seconds=20))
    _forge(sim, clock).get_run(FIX_RUN_ID)
    assert clock.slept_s == [21.0] and sim.request_count("GET", RUN) == 2


def test_an_answer_that_spent_the_last_request_holds_the_next_one_until_the_reset(sim, clock):
    reset = clock.now() + timedelta(seconds=30)
    sim.mutate("GET", RUN, lambda body: body, times=1)  # the real answer …
    sim.fail(
        "GET",
        r"/issues/7$",
        200,
        times=1,
        headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(reset.timestamp()))},
        body=sim.get_issue(7),
        login=ROLE_LOGIN,
    )  # … and one that used up the role token's budget
    forge = _forge(sim, clock)
    forge.get_issue(7)
    assert clock.slept_s == []
    forge.get_pull_request(7)  # the same token: waits for the reset before it is sent
    assert clock.slept_s == [31.0]
    forge.get_run(FIX_RUN_ID)  # the job token has its own budget
    assert clock.slept_s == [31.0]


def test_graphql_rate_limited_is_waited_out_like_rest(sim, clock):
    sim.graphql_rate_limited(reset_at=clock.now() + timedelta(seconds=10), login=JOB_LOGIN)
    assert _forge(sim, clock).viewer_login("job") == JOB_LOGIN
    assert clock.slept_s == [11.0] and sim.request_count("POST", r"^/graphql$") == 2


def test_a_rate_limited_post_is_sent_again_after_the_wait_and_creates_one_comment(sim, clock):
    sim.secondary_limit("POST", r"/issues/7/comments$", retry_after=5)
    comment = _forge(sim, clock).post_comment(7, "hello", credential="job")
    assert comment.body == "hello" and clock.slept_s == [5.0]
    assert [c["body"] for c in sim.comments(7)] == ["hello"]


def test_a_post_refused_by_a_long_limit_is_not_sent_again(sim, clock):
    sim.secondary_limit("POST", r"/issues/7/comments$", retry_after=600, times=None)
    with pytest.raises(RateLimited):
        _forge(sim, clock).bounded(max_wait_s=120).post_comment(7, "hello", credential="job")
    assert sim.request_count("POST", r"/issues/7/comments$") == 1 and sim.comments(7) == []


def test_a_bound_by_instant_refuses_a_limit_ending_after_it(sim, clock):
    sim.secondary_limit("GET", RUN, retry_after=50)
    forge = _forge(sim, clock).bounded(max_wait_s=None, until=clock.now() + timedelta(seconds=30))
    with pytest.raises(RateLimited):
        forge.get_run(FIX_RUN_ID)
    assert clock.slept_s == []
