"""The GitHub adapter against the simulator over real HTTP: identity resolution,
retries through the injected clock, error classification, writes never retried."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from fullsend.adapters.github.forge import GitHubForge
from fullsend.adapters.github.graphql import GraphQLClient
from fullsend.adapters.github.ratelimit import RateLimitPolicy, WaitBound
from fullsend.core.model import Repo
from fullsend.errors import ForgeError, NotFoundError
from fullsend.simulator.fixtures import JOB_TOKEN, ROLE_TOKEN, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator


class RecordingClock:
    """A clock whose sleeps are recorded and return at once (no real sleep in tests)."""

    def __init__(self) -> None:
        self.slept: list[float] = []

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return 0.0

    def sleep(self, seconds: float) -> bool:
        self.slept.append(seconds)
        return True


@pytest.fixture
def sim():
    with GitHubSimulator() as simulator:
        standard_pr_scenario(simulator)
        yield simulator


def _forge(sim, job=JOB_TOKEN, role=ROLE_TOKEN, clock=None):
    return GitHubForge(Repo("org", "repo"), sim.api_url, sim.graphql_url, job, role, clock or RecordingClock())


def test_installation_tokens_resolve_through_graphql_first_once_per_run(sim):
    forge = _forge(sim)
    sim.reset_requests()
    assert forge.viewer_login("job") == "github-actions[bot]"
    assert forge.viewer_login("job") == "github-actions[bot]"
    assert forge.viewer_login("role") == "fullsend-ai-review[bot]"
    assert [r.path for r in sim.requests] == ["/graphql", "/graphql"]


def test_graphql_queries_share_one_kept_alive_connection(sim):
    """Each query over a new connection costs a TLS handshake against GitHub; the pool is
    thread-safe, so a later query from another thread rides the same kept-alive connection."""
    clock = RecordingClock()
    client = GraphQLClient(sim.graphql_url, JOB_TOKEN, clock, 5, RateLimitPolicy(clock))
    sim.reset_requests()
    for _ in range(3):
        client.query("viewer", "query { viewer { login } }", None, WaitBound())
    other = threading.Thread(target=client.query, args=("viewer", "query { viewer { login } }", None, WaitBound()))
    other.start()
    other.join()
    ports = [r.client_port for r in sim.requests]
    assert len(ports) == 4 and ports[0] > 0
    assert ports[0] == ports[1] == ports[2] == ports[3]


def test_a_personal_token_resolves_through_rest_user(sim):
    sim.add_token("pat-of-a-maintainer", "maintainer", "User")
    forge = _forge(sim, role="pat-of-a-maintainer")
    sim.reset_requests()
    assert forge.viewer_login("role") == "maintainer"
    assert [r.path for r in sim.requests] == ["/user"]


def test_an_app_token_without_the_installation_prefix_falls_back_user_app_graphql(sim):
    sim.add_token("v1.app-token-without-prefix", "some-app[bot]", "Bot")
    forge = _forge(sim, role="v1.app-token-without-prefix")
    sim.reset_requests()
    # /user answered 403 "not accessible by integration": an App, spelled as REST spells it.
    assert forge.viewer_login("role") == "some-app[bot]"
    assert [r.path for r in sim.requests] == ["/user", "/app", "/graphql"]


# GitHub's ``integration`` schema leaves ``slug`` optional (docs/adopting.md "GitHub Enterprise
# Server"): an /app answer without it makes that one route know no login, never a malformed run.
APP_WITHOUT_SLUG = {
    "id": 1,
    "node_id": "A_1",
    "name": "Some App",
    "owner": None,
    "description": None,
    "external_url": "https://example.invalid",
    "html_url": "https://example.invalid/apps/x",
    "created_at": "2026-01-01T00:00:00Z",
    "updated_at": "2026-01-01T00:00:00Z",
    "permissions": {},
    "events": [],
}


def test_an_app_answer_with_a_slug_spells_the_app_login(sim):
    sim.add_token("v1.app-token-without-prefix", "some-app[bot]", "Bot")
    sim.fail("GET", r"^/app$", 200, body={**APP_WITHOUT_SLUG, "slug": "some-app"})
    forge = _forge(sim, role="v1.app-token-without-prefix")
    sim.reset_requests()
    assert forge.viewer_login("role") == "some-app[bot]"
    assert [r.path for r in sim.requests] == ["/user", "/app"]


def test_an_app_answer_without_a_slug_falls_through_to_graphql(sim):
    sim.add_token("v1.app-token-without-prefix", "some-app[bot]", "Bot")
    sim.fail("GET", r"^/app$", 200, body=APP_WITHOUT_SLUG)
    forge = _forge(sim, role="v1.app-token-without-prefix")
    sim.reset_requests()
    assert forge.viewer_login("role") == "some-app[bot]"
    assert [r.path for r in sim.requests] == ["/user", "/app", "/graphql"]


def test_an_app_answer_without_a_slug_is_named_when_every_route_fails(sim):
    sim.add_token("v1.app-token-without-prefix", "some-app[bot]", "Bot")
    sim.fail("GET", r"^/app$", 200, body=APP_WITHOUT_SLUG)
    sim.graphql_errors(times=None)
    forge = _forge(sim, role="v1.app-token-without-prefix")
    with pytest.raises(ForgeError) as err:
        forge.viewer_login("role")
    assert "GET /app: the App record has no slug field" in str(err.value)
    assert "MalformedResponse" not in type(err.value).__name__


def test_an_unknown_token_fails_naming_every_cause_without_the_token(sim):
    forge = _forge(sim, role="not-a-real-token-123")
    with pytest.raises(ForgeError) as err:
        forge.viewer_login("role")
    assert "not-a-real-token-123" not in str(err.value)
    assert "/user" in str(err.value) and "/app" in str(err.value) and "GraphQL" in str(err.value)


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_transient_gets_are_retried_through_the_clock(sim, status):
    clock = RecordingClock()
    sim.fail("GET", r"/actions/runs/33740015232$", status, times=2)
    run = _forge(sim, clock=clock).get_run(33740015232)
    assert run.id == 33740015232
    assert sim.request_count("GET", r"/actions/runs/33740015232$") == 3
    assert clock.slept == [1.0, 2.0]


def test_retry_after_is_honoured(sim):
    clock = RecordingClock()
    sim.fail("GET", r"/actions/runs/33740015232$", 429, times=1, headers={"Retry-After": "7"})
    _forge(sim, clock=clock).get_run(33740015232)
    assert clock.slept == [7.0]


def test_primary_rate_limit_waits_until_the_reset(sim):
    clock = RecordingClock()
    reset = int(datetime.now(UTC).timestamp()) + 20
    sim.fail(
        "GET",
        r"/actions/runs/33740015232$",
        403,
        times=1,
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)},
        body={"message": "API rate limit exceeded"},
    )
    _forge(sim, clock=clock).get_run(33740015232)
    assert len(clock.slept) == 1 and 18.0 <= clock.slept[0] <= 22.0


def test_five_attempts_then_a_transient_error(sim):
    clock = RecordingClock()
    sim.fail("GET", r"/actions/runs/33740015232$", 503, times=None)
    with pytest.raises(ForgeError) as err:
        _forge(sim, clock=clock).get_run(33740015232)
    assert err.value.transient
    assert sim.request_count("GET", r"/actions/runs/33740015232$") == 5


def test_permanent_errors_are_not_retried(sim):
    sim.fail(
        "GET", r"/actions/runs/33740015232$", 403, times=1, body={"message": "Resource not accessible by integration"}
    )
    with pytest.raises(ForgeError) as err:
        _forge(sim).get_run(33740015232)
    assert err.value.permanent and err.value.status == 403
    assert sim.request_count("GET", r"/actions/runs/33740015232$") == 1


def test_a_404_pull_request_means_an_issue(sim):
    sim.add_issue(12, title="A bug")
    with pytest.raises(NotFoundError):
        _forge(sim).get_pull_request(12)
    assert _forge(sim).get_issue(12).title == "A bug"


def test_a_comment_post_is_never_retried(sim):
    sim.fail("POST", r"/issues/7/comments$", 502, times=1)
    with pytest.raises(ForgeError):
        _forge(sim).post_comment(7, "hello", credential="job")
    assert sim.request_count("POST", r"/issues/7/comments$") == 1
    assert sim.comments(7) == []


def test_a_comment_post_reports_its_author(sim):
    comment = _forge(sim).post_comment(7, "hello", credential="job")
    assert comment.author == "github-actions[bot]" and comment.author_is_app
    assert comment.html_url.endswith(f"#issuecomment-{comment.id}")


def test_comments_are_read_across_pages(sim):
    for i in range(230):
        sim.add_comment(7, f"comment {i}", "reviewer")
    comments = _forge(sim).list_issue_comments(7, credential="job")
    assert [c.body for c in comments] == [f"comment {i}" for i in range(230)]
    assert sim.request_count("GET", r"/issues/7/comments$") == 3


def test_conditional_reads_use_the_etag(sim):
    forge = _forge(sim)
    first = forge.get_issue(7)
    second = forge.get_issue(7)
    assert first == second
    statuses = [r.status for r in sim.requests if r.path.endswith("/issues/7")]
    assert statuses == [200, 304]


def test_an_unchanged_run_listing_costs_only_304s_across_pages(sim):
    for _ in range(150):
        sim.add_workflow_run(path=".github/workflows/fullsend.yml", event="issue_comment", status="completed")
    forge = _forge(sim)
    since = datetime(2020, 1, 1, tzinfo=UTC)
    first = forge.list_workflow_runs("fullsend.yml", since)
    sim.reset_requests()
    second = forge.list_workflow_runs("fullsend.yml", since)
    assert [r.id for r in first.runs] == [r.id for r in second.runs] and len(first.runs) == 151
    assert [r.status for r in sim.requests] == [304, 304]
    assert sim.counted_request_count() == 0


def test_an_unchanged_run_listing_is_not_parsed_again_and_a_change_is(sim):
    """Issue 22: the parsed rows are cached by the pages' ETags; a poll of 304s hands back the same
    ``WorkflowRun`` records (no re-parse), in an immutable listing; any changed page re-parses."""
    for _ in range(150):
        sim.add_workflow_run(path=".github/workflows/fullsend.yml", event="issue_comment", status="completed")
    forge = _forge(sim)
    since = datetime(2020, 1, 1, tzinfo=UTC)
    first = forge.list_workflow_runs("fullsend.yml", since)
    assert isinstance(first.runs, tuple) and not first.capped  # a caller cannot change the cached listing
    second = forge.list_workflow_runs("fullsend.yml", since)
    third = forge.list_workflow_runs("fullsend.yml", since)
    assert len(second.runs) == 151 and all(a is b for a, b in zip(second.runs, third.runs, strict=True))
    oldest = second.runs[0].id  # oldest first: the run on page 2 moves when one is added at the top
    sim.update_workflow_run(oldest, status="in_progress")
    changed = forge.list_workflow_runs("fullsend.yml", since)
    assert next(r for r in changed.runs if r.id == oldest).status == "in_progress"
    assert [r.status for r in sim.requests if r.path.endswith("/fullsend.yml/runs")][-2:] == [304, 200]
    assert forge.list_workflow_runs("fullsend.yml", datetime(2031, 1, 1, tzinfo=UTC)).runs == ()  # another filter


def test_the_shim_listing_is_ordered_once_at_the_port_oldest_first_by_created_at_then_id(sim):
    """The ``Forge.list_workflow_runs`` contract: the adapter hands the watcher its listing in the
    order it judges runs (oldest ``created_at`` first, id on a tie), however GitHub paged it."""
    shim = ".github/workflows/fullsend.yml"
    spec = [("2030-01-01T10:00:05Z", 901), ("2030-01-01T10:00:01Z", 905), ("2030-01-01T10:00:05Z", 903)]
    for created, run_id in spec:
        sim.add_workflow_run(id=run_id, path=shim, event="issue_comment", status="queued", created_at=created)
    listing = _forge(sim).list_workflow_runs("fullsend.yml", datetime(2030, 1, 1, tzinfo=UTC)).runs
    assert [r.id for r in listing] == [905, 901, 903]


def test_a_run_read_twice_while_the_listing_shifts_is_kept_once_as_its_later_copy(sim):
    """A run created between two page reads pushes the last run of page 1 onto page 2; that run
    changed meanwhile, and the listing keeps the fresher copy (``order_listing``)."""
    created = [
        sim.add_workflow_run(
            path=".github/workflows/fullsend.yml",
            event="issue_comment",
            status="queued",
            created_at=f"2030-01-01T10:{i // 60:02d}:{i % 60:02d}Z",
        )["id"]
        for i in range(100)
    ]
    shifted = created[0]  # the oldest of the 100 newest: last on page 1

    def shift(s):
        s.add_workflow_run(
            path=".github/workflows/fullsend.yml", event="issue_comment", created_at="2030-01-01T11:00:00Z"
        )
        s.update_workflow_run(shifted, status="in_progress", updated_at="2030-01-01T11:00:01Z")

    sim.on_request(sim.match("GET", r"/actions/workflows/fullsend\.yml/runs$", page=1), shift)
    listing = _forge(sim).list_workflow_runs("fullsend.yml", datetime(2020, 1, 1, tzinfo=UTC)).runs
    pages = [r.query.get("page", ["1"])[0] for r in sim.requests if r.path.endswith("/fullsend.yml/runs")]
    ids = [r.id for r in listing]
    assert pages == ["1", "2"] and len(ids) == len(set(ids)) and set(created) <= set(ids)
    assert next(r for r in listing if r.id == shifted).status == "in_progress"


def test_the_repository_run_listing_pages_newest_first_and_reports_its_cap(sim):
    for i in range(1001):
        sim.add_workflow_run(
            path=".github/workflows/ci.yml",
            event="push",
            status="completed",
            created_at=f"2030-01-01T{10 + i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z",
        )
    forge = _forge(sim)
    sim.reset_requests()
    runs, capped = forge.list_repository_runs(None)
    assert capped and len(runs) == 1000 and len(sim.requests) == 10 and "created" not in sim.requests[0].query
    assert [r.created_at for r in runs] == sorted((r.created_at for r in runs), reverse=True)
    since, until = datetime(2030, 1, 1, tzinfo=UTC), datetime(2030, 1, 1, 10, 0, 9, tzinfo=UTC)
    few, capped = forge.list_repository_runs(since, until)
    assert not capped and len(few) == 10
    assert sim.requests[-1].query["created"] == ["2030-01-01T00:00:00Z..2030-01-01T10:00:09Z"]


def test_the_issue_record_carries_its_created_at(sim):
    issue = _forge(sim).get_issue(7)
    assert issue.created_at is not None and issue.created_at.tzinfo is not None


def test_review_thread_comments_are_read_with_their_file_line_and_thread(sim):
    """``GET …/pulls/{n}/comments`` over HTTP: a thread and a reply; an outdated comment (``line``
    null) keeps its ``original_line``; ``since`` filters on ``updated_at``; an issue answers 404."""
    first = sim.add_thread_comment(7, "lookup may return None", "coderabbitai[bot]", "src/db.py", 88)
    reply = sim.add_thread_comment(7, "/fs-fix guard it", "reviewer", in_reply_to=first["id"])
    outdated = sim.add_thread_comment(7, "old", "reviewer", "README.md", None, original_line=4)
    forge = _forge(sim)
    got = forge.list_review_comments(7)
    assert [(c.id, c.author, c.path, c.line, c.in_reply_to_id, c.in_thread) for c in got] == [
        (first["id"], "coderabbitai[bot]", "src/db.py", 88, 0, True),
        (reply["id"], "reviewer", "src/db.py", 88, first["id"], True),
        (outdated["id"], "reviewer", "README.md", 4, 0, True),
    ]
    assert got[0].author_is_app and got[1].body == "/fs-fix guard it"
    assert forge.list_review_comments(7, datetime(2099, 1, 1, tzinfo=UTC)) == []
    sim.add_issue(9, "an issue")
    with pytest.raises(NotFoundError):
        forge.list_review_comments(9)
