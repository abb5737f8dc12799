"""Issue 18: no answer shape crashes the run.  Every finding, through the simulator and the real adapter.

A missing or wrong-typed field is a ``MalformedResponse`` (a ``ForgeError``) naming the endpoint
and the field; GraphQL's ``{"data": "x"}`` and an ``errors`` object are causes like any other;
ids outside GitHub's range are malformed; an author without a type is unknown; a
``pull_requests[]`` entry of another repository does not bind; paging goes on while pages are full.
"""

from __future__ import annotations

import pytest

from fullsend.adapters.github.forge import GitHubForge
from fullsend.core.model import Repo
from fullsend.errors import ForgeError, MalformedResponse
from fullsend.simulator.faults import MISSING, replace_body, set_field
from fullsend.simulator.fixtures import FIX_RUN_ID, JOB_LOGIN, JOB_TOKEN, ROLE_TOKEN, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.doubles.recording_clock import RecordingVirtualClock

RUN = rf"/actions/runs/{FIX_RUN_ID}$"
JOBS = rf"/actions/runs/{FIX_RUN_ID}/jobs$"


@pytest.fixture
def sim():
    with GitHubSimulator() as simulator:
        standard_pr_scenario(simulator)
        yield simulator


def _forge(sim: GitHubSimulator) -> GitHubForge:
    clock = RecordingVirtualClock()
    return GitHubForge(Repo("org", "repo"), sim.api_url, sim.graphql_url, JOB_TOKEN, ROLE_TOKEN, clock)


@pytest.mark.parametrize(
    "body",
    [
        {"data": "x"},
        {"errors": {"message": "boom"}},
        {"data": {"viewer": []}},
        {"data": {"viewer": {"login": 7}}},
        [],
        "x",
        {"errors": ["boom"]},
    ],
)
def test_graphql_viewer_shapes_are_causes_never_exceptions(sim, body):
    sim.mutate("POST", r"^/graphql$", replace_body(body), times=None)
    with pytest.raises(ForgeError) as err:
        _forge(sim).viewer_login("job")  # a ghs_ token: GraphQL first, then /user and /app fail too
    assert "GraphQL viewer" in str(err.value) and "could not resolve the login" in str(err.value)


def test_a_graphql_errors_list_names_its_message(sim):
    sim.graphql_errors({"errors": [{"message": "Something went wrong"}]}, times=None)
    with pytest.raises(ForgeError, match="GraphQL viewer: Something went wrong"):
        _forge(sim).viewer_login("job")


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        ("id", "33740015232", "id"),
        ("id", True, "id"),
        ("id", 2**53, "id"),
        ("id", 0, "id"),
        ("id", -4, "id"),
        ("created_at", "yesterday", "created_at"),
        ("created_at", MISSING, "created_at"),
        ("path", None, "path"),
        ("pull_requests", {"number": 7}, "pull_requests"),
        ("pull_requests", MISSING, "pull_requests"),
        ("referenced_workflows", [{"ref": "main"}], "referenced_workflows[0].path"),
    ],
)
def test_a_run_of_the_wrong_shape_names_the_endpoint_and_the_field(sim, path, value, field):
    sim.mutate("GET", RUN, set_field(path, value), times=None)
    with pytest.raises(MalformedResponse) as err:
        _forge(sim).get_run(FIX_RUN_ID)
    assert err.value.endpoint == f"GET /repos/org/repo/actions/runs/{FIX_RUN_ID}" and err.value.field == field
    assert err.value.transient


def test_a_list_where_the_jobs_envelope_belongs_is_malformed(sim):
    sim.mutate("GET", JOBS, replace_body([]), times=None)
    with pytest.raises(MalformedResponse) as err:
        _forge(sim).list_run_jobs(FIX_RUN_ID)
    assert err.value.endpoint.startswith("GET ") and err.value.endpoint.endswith("/jobs")


def test_a_comment_id_beyond_githubs_range_is_malformed_and_names_the_item(sim):
    sim.add_comment(7, "hello", "reviewer")
    sim.add_comment(7, "again", "reviewer")
    sim.mutate("GET", r"/issues/7/comments$", lambda body: [body[0], {**body[1], "id": 2**53}], times=None)
    with pytest.raises(MalformedResponse) as err:
        _forge(sim).list_issue_comments(7)
    assert err.value.field == "[1].id"


def test_an_author_without_a_type_is_unknown_never_the_job_bot(sim):
    sim.add_comment(7, "hello", JOB_LOGIN)
    sim.mutate("GET", r"/issues/7/comments$", set_field("*.user.type", MISSING), times=None)
    [comment] = _forge(sim).list_issue_comments(7, credential="job")
    assert (comment.author, comment.author_type, comment.author_is_app) == ("", "", False)


def test_a_label_without_a_name_is_unknown_and_counted_never_malformed(sim):
    """GitHub's label schema requires none of its fields (docs/adopting.md "GitHub Enterprise Server")."""
    sim.update_issue(7, labels=["area/db", "ready-for-review"])

    def unname_first(body):
        body["labels"][0].pop("name")
        return body

    sim.mutate("GET", r"/issues/7$", unname_first, times=None)
    issue = _forge(sim).get_issue(7)
    assert (issue.labels, issue.unnamed_labels) == (("ready-for-review",), 1)


def test_a_pull_requests_entry_of_another_repository_does_not_bind(sim):
    other = {
        "number": 7,
        "id": 1,
        "url": "https://api.github.com/repos/someone/fork/pulls/7",
        "head": {
            "ref": "x",
            "sha": "aaa111",
            "repo": {"id": 2, "url": "https://api.github.com/repos/someone/fork", "name": "fork"},
        },
        "base": {
            "ref": "main",
            "sha": "b" * 40,
            "repo": {"id": 2, "url": "https://api.github.com/repos/someone/fork", "name": "fork"},
        },
    }
    run = sim.add_workflow_run(
        path=".github/workflows/fullsend.yml", event="pull_request_target", pull_requests=[other, 8]
    )
    assert _forge(sim).get_run(int(run["id"])).pull_requests == (8,)  # the fork's PR 7 is not our PR 7
    unknown = sim.add_workflow_run(
        path=".github/workflows/fullsend.yml",
        event="pull_request_target",
        pull_requests=[{"number": 7, "id": 3, "url": "x", "head": {}, "base": {}}],
    )
    assert _forge(sim).get_run(int(unknown["id"])).pull_requests == ()  # no base repository: binds nothing


def test_paging_goes_on_while_pages_are_full_whatever_total_count_says(sim):
    for i in range(150):
        sim.add_job(FIX_RUN_ID, f"dispatch / Lint {i}", "completed", "success")
    sim.mutate("GET", JOBS, set_field("total_count", 100), times=None)  # understates the 152 jobs
    jobs = _forge(sim).list_run_jobs(FIX_RUN_ID)
    assert len(jobs) == 152 and sim.request_count("GET", JOBS) == 2


def test_a_comment_post_answered_with_a_list_is_posted_with_no_comment_to_show(sim):
    sim.mutate("POST", r"/issues/7/comments$", replace_body([]))
    with pytest.raises(MalformedResponse) as err:
        _forge(sim).post_comment(7, "hello", credential="job")
    assert err.value.status == 201 and [c["body"] for c in sim.comments(7)] == ["hello"]


def test_a_non_json_answer_to_a_post_is_malformed_with_its_2xx_status(sim):
    sim.mutate("POST", r"/issues/7/comments$", lambda body: b"<html>unicorn</html>")
    with pytest.raises(MalformedResponse) as err:
        _forge(sim).post_comment(7, "hello", credential="job")
    assert err.value.status == 201 and err.value.field == ""
