"""Every simulator response, of every endpoint it serves, validates against GitHub's OpenAPI schemas.

The oracle is ``tests/data/openapi/github-rest-trimmed.json`` (``tools/openapi_trim.py`` over
``@octokit/openapi`` 23.0.2), checked with ``jsonschema`` and a FormatChecker that has
``rfc3339-validator``.  GraphQL uses a hand-written schema.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from jsonschema import Draft202012Validator, FormatChecker

from fullsend.simulator.fixtures import add_comment_follow_up, add_follow_up_run, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator

APP_TOKEN = "ghs_app_token_for_tests"  # as in conftest.py
USER_TOKEN = "gho_user_token_for_tests"
READ_ONLY_TOKEN = "ghs_read_only_job_token"

DATA = Path(__file__).resolve().parents[1] / "data" / "openapi"
DOC = json.loads((DATA / "github-rest-trimmed.json").read_text())
GRAPHQL = json.loads((DATA / "graphql-viewer.schema.json").read_text())
FORMATS = FormatChecker()

THREAD_ID, THREAD_REPLY_ID = 1400000101, 1400000102  # a review thread on PR 7 and a reply in it
# (endpoint key in the trimmed file, status, method, path, token, json body)
R = "/repos/org/repo"
CASES: list[tuple[str, str, str, str, str, Any]] = [
    ("GET /repos/{owner}/{repo}/actions/runs/{run_id}", "200", "GET", f"{R}/actions/runs/33740015232", APP_TOKEN, None),
    ("GET /repos/{owner}/{repo}/actions/runs/{run_id}", "200", "GET", f"{R}/actions/runs/33740015300", APP_TOKEN, None),
    (
        "GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs",
        "200",
        "GET",
        f"{R}/actions/runs/33740015232/jobs",
        APP_TOKEN,
        None,
    ),
    (
        "GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs",
        "200",
        "GET",
        f"{R}/actions/runs/33740015300/jobs",
        APP_TOKEN,
        None,
    ),
    (
        "GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs",
        "200",
        "GET",
        f"{R}/actions/workflows/fullsend.yml/runs?created=%3E%3D2026-09-03T10%3A00%3A00Z&per_page=100&page=1",
        APP_TOKEN,
        None,
    ),
    (
        "GET /repos/{owner}/{repo}/actions/runs",
        "200",
        "GET",
        f"{R}/actions/runs?created=%3E%3D2026-09-03T10%3A00%3A00Z&per_page=100&page=1",
        APP_TOKEN,
        None,
    ),
    ("GET /repos/{owner}/{repo}/issues/{issue_number}", "200", "GET", f"{R}/issues/7", APP_TOKEN, None),
    ("GET /repos/{owner}/{repo}/issues/{issue_number}", "200", "GET", f"{R}/issues/12", APP_TOKEN, None),
    ("GET /repos/{owner}/{repo}/issues/{issue_number}", "404", "GET", f"{R}/issues/999", APP_TOKEN, None),
    ("GET /repos/{owner}/{repo}/pulls/{pull_number}", "200", "GET", f"{R}/pulls/7", APP_TOKEN, None),
    ("GET /repos/{owner}/{repo}/pulls/{pull_number}", "404", "GET", f"{R}/pulls/12", APP_TOKEN, None),
    (
        "GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
        "200",
        "GET",
        f"{R}/issues/7/comments?per_page=100&page=1",
        APP_TOKEN,
        None,
    ),
    (
        "GET /repos/{owner}/{repo}/issues/comments",
        "200",
        "GET",
        f"{R}/issues/comments?since=2026-09-01T00%3A00%3A00Z&sort=created&direction=asc&per_page=100&page=1",
        APP_TOKEN,
        None,
    ),
    (
        "GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
        "200",
        "GET",
        f"{R}/issues/7/comments?since=2026-09-03T10%3A04%3A00Z",
        APP_TOKEN,
        None,
    ),
    (
        "GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
        "404",
        "GET",
        f"{R}/issues/999/comments",
        APP_TOKEN,
        None,
    ),
    (
        "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
        "201",
        "POST",
        f"{R}/issues/7/comments",
        APP_TOKEN,
        {"body": "<!-- fullsend:steer consumed=33740015300 head=bbb222 -->"},
    ),
    (
        "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
        "201",
        "POST",
        f"{R}/issues/12/comments",
        USER_TOKEN,
        {"body": "a human reply"},
    ),
    (
        "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
        "403",
        "POST",
        f"{R}/issues/7/comments",
        READ_ONLY_TOKEN,
        {"body": "x"},
    ),
    (
        "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
        "404",
        "POST",
        f"{R}/issues/999/comments",
        APP_TOKEN,
        {"body": "x"},
    ),
    (
        "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}",
        "200",
        "PATCH",
        f"{R}/issues/comments/4000000001",
        APP_TOKEN,
        {"body": "edited"},
    ),
    (
        "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
        "200",
        "GET",
        f"{R}/pulls/7/reviews?per_page=100&page=1",
        APP_TOKEN,
        None,
    ),
    (
        "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
        "200",
        "POST",
        f"{R}/pulls/7/reviews",
        APP_TOKEN,
        {"body": "Two findings.", "event": "COMMENT", "comments": [{"path": "a.py", "line": 3, "body": "x"}]},
    ),
    (
        "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
        "422",
        "POST",
        f"{R}/pulls/7/reviews",
        APP_TOKEN,
        {"event": "REQUEST_CHANGES"},
    ),
    (
        "GET /repos/{owner}/{repo}/pulls/{pull_number}/comments",
        "200",
        "GET",
        f"{R}/pulls/7/comments?per_page=100&page=1",
        APP_TOKEN,
        None,
    ),
    (
        "GET /repos/{owner}/{repo}/pulls/{pull_number}/comments",
        "200",
        "GET",
        f"{R}/pulls/7/comments?since=2026-09-03T10%3A08%3A00Z",
        APP_TOKEN,
        None,
    ),
    (
        "GET /repos/{owner}/{repo}/pulls/comments/{comment_id}",
        "200",
        "GET",
        f"{R}/pulls/comments/{THREAD_REPLY_ID}",
        APP_TOKEN,
        None,
    ),
    ("GET /repos/{owner}/{repo}/pulls/comments/{comment_id}", "404", "GET", f"{R}/pulls/comments/9", APP_TOKEN, None),
    (
        "GET /repos/{owner}/{repo}/compare/{basehead}",
        "200",
        "GET",
        f"{R}/compare/aaa111...ccc333?per_page=1",
        APP_TOKEN,
        None,
    ),
    ("GET /repos/{owner}/{repo}/compare/{basehead}", "200", "GET", f"{R}/compare/aaa111...aaa111", APP_TOKEN, None),
    ("GET /repos/{owner}/{repo}/compare/{basehead}", "200", "GET", f"{R}/compare/ccc333...aaa111", APP_TOKEN, None),
    ("GET /repos/{owner}/{repo}/compare/{basehead}", "404", "GET", f"{R}/compare/gone000...ccc333", APP_TOKEN, None),
    ("GET /user", "200", "GET", "/user", USER_TOKEN, None),
    ("GET /user", "403", "GET", "/user", APP_TOKEN, None),
    ("GET /user", "401", "GET", "/user", "not-a-known-token", None),
]


@pytest.fixture
def world(new_sim: Any) -> Any:
    """A simulator populated with realistic FIX data: an App and a human comment, an authorized
    follow-up run, a refused one, two head moves (text, binary and renamed files), an explicit
    404 compare, App/human/pending reviews, a review thread with a reply, and a plain issue with a label."""
    with new_sim() as sim:
        standard_pr_scenario(sim)
        sim.update_issue(7, labels=["ready-for-review", "area/db"])
        sim.add_comment(7, "Please look at the migration.", "reviewer", created_at="2026-09-03T10:02:00Z")
        sim.add_comment(7, "Review started.", "fullsend-ai-review[bot]", created_at="2026-09-03T10:03:00Z")
        add_comment_follow_up(
            sim, "/fs-review please re-check the migration", run_id=33740015300, created_at="2026-09-03T10:05:00Z"
        )
        add_follow_up_run(
            sim,
            event="pull_request_target",
            pull_requests=(7,),
            route="failure",
            stage_status="completed",
            stage_conclusion="skipped",
            created_at="2026-09-03T10:06:00Z",
        )
        sim.move_head(
            7,
            "bbb222",
            files=[
                {"filename": "db/migrate.sql", "additions": 3, "deletions": 1, "patch": "@@ -1 +1,3 @@\n-a\n+b\n+c\n+d"}
            ],
        )
        sim.move_head(
            7,
            "ccc333",
            files=[
                {"filename": "logo.png", "status": "added"},
                {"filename": "app/new.py", "previous_filename": "app/old.py", "status": "renamed", "patch": "@@"},
            ],
            ahead_by=2,
        )
        sim.set_compare("gone000", "ccc333", 404)
        sim.add_review(
            7,
            "fullsend-ai-review[bot]",
            "APPROVED",
            "Looks good.",
            commit_id="aaa111",
            submitted_at="2026-09-03T10:04:00Z",
        )
        sim.add_review(7, "alice", "CHANGES_REQUESTED", "Please split the migration.")
        sim.add_review(7, "bob", "PENDING")
        sim.add_thread_comment(
            7, "Off by one here.", "alice", "db/migrate.sql", 3, id=THREAD_ID, created_at="2026-09-03T10:07:00Z"
        )
        sim.add_thread_comment(
            7,
            "/fs-fix use <= here",
            "alice",
            in_reply_to=THREAD_ID,
            id=THREAD_REPLY_ID,
            created_at="2026-09-03T10:08:00Z",
        )
        sim.add_token(READ_ONLY_TOKEN, "github-actions", "Bot", read_only=True)
        sim.add_issue(12, title="Orders are lost", body="Steps…", labels=["bug"], user="carol")
        yield sim


def _validate(instance: Any, schema: dict[str, Any]) -> None:
    Draft202012Validator(schema, format_checker=FORMATS).validate(instance)


def _schema(key: str, status: str) -> dict[str, Any]:
    return {**DOC["endpoints"][key][status], "$defs": DOC["$defs"]}


@pytest.mark.parametrize(
    "key,status,method,path,token,body", CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)]
)
def test_response_matches_openapi(
    world: GitHubSimulator, client: Any, key: str, status: str, method: str, path: str, token: str, body: Any
) -> None:
    response = client(world, token).session.request(method, world.api_url + path, json=body, timeout=10)
    assert response.status_code == int(status), response.text
    _validate(response.json(), _schema(key, status))


def test_every_trimmed_endpoint_and_status_is_exercised() -> None:
    exercised = {(c[0], c[1]) for c in CASES} | set(GIT_CASES)
    documented = {(k, s) for k, statuses in DOC["endpoints"].items() for s in statuses}
    # /app answers 401 to installation tokens; its 200 is never served.
    assert documented - exercised == {("GET /app", "200")}
    assert exercised <= documented


def test_app_401_is_a_basic_error(world: GitHubSimulator, client: Any) -> None:
    response = client(world).get("/app")
    assert response.status_code == 401
    _validate(response.json(), {"$ref": "#/$defs/basic-error", "$defs": DOC["$defs"]})


def test_list_items_carry_the_same_fields_as_get_run(world: GitHubSimulator, client: Any) -> None:
    client = client(world)
    listed = client.get(f"{R}/actions/workflows/fullsend.yml/runs").json()["workflow_runs"]
    for item in listed:
        single = client.get(f"{R}/actions/runs/{item['id']}").json()
        assert item == single
        assert "referenced_workflows" in item  # GitHub's shape carries it: a client may rely on it


@pytest.mark.parametrize("token,login", [(APP_TOKEN, "fullsend-ai-review"), (USER_TOKEN, "alice")])
def test_graphql_viewer_matches_hand_schema(world: GitHubSimulator, client: Any, token: str, login: str) -> None:
    response = client(world, token).session.post(
        world.graphql_url, json={"query": "query { viewer { login } }"}, timeout=10
    )
    assert response.status_code == 200
    _validate(response.json(), GRAPHQL)
    assert response.json()["data"]["viewer"]["login"] == login


def test_graphql_unknown_query_answers_errors(world: GitHubSimulator, client: Any) -> None:
    response = client(world).session.post(world.graphql_url, json={"query": "query { rateLimit { cost } }"}, timeout=10)
    _validate(response.json(), GRAPHQL)
    assert response.json()["errors"][0]["message"]


def test_oracle_can_fail_on_a_bad_time_and_a_missing_field(world: GitHubSimulator, client: Any) -> None:
    run = client(world).get(f"{R}/actions/runs/33740015232").json()
    schema = _schema("GET /repos/{owner}/{repo}/actions/runs/{run_id}", "200")
    with pytest.raises(jsonschema.ValidationError, match="date-time"):
        _validate({**run, "created_at": "2026-09-03 10:00"}, schema)
    with pytest.raises(jsonschema.ValidationError, match="jobs_url"):
        _validate({k: v for k, v in run.items() if k != "jobs_url"}, schema)
    job_schema = _schema("GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs", "200")
    jobs = client(world).get(f"{R}/actions/runs/33740015232/jobs").json()
    jobs["jobs"][1]["conclusion"] = "exploded"
    with pytest.raises(jsonschema.ValidationError):
        _validate(jobs, job_schema)


def test_a_run_calling_the_hosted_dispatch_by_commit_is_a_valid_record(world: GitHubSimulator, client: Any) -> None:
    """docs/rules.md#chain-differs: a call pinned by commit is listed with ``path`` and ``sha`` and
    no ``ref`` (GitHub's schema requires only the first two), and the adapter reads it as such."""
    from fullsend.adapters.github import records, wire
    from fullsend.core.model import Repo

    sha = "5e1ec7ed0c0ffee0ddba11ab1e0b5e55ed0fab1e"
    entry = {"path": f"fullsend-ai/steer-action/.github/workflows/dispatch.yml@{sha}", "sha": sha}
    run = world.add_workflow_run(id=77001, path=".github/workflows/fullsend.yml", referenced_workflows=[entry])
    body = client(world).get(f"{R}/actions/runs/{run['id']}").json()
    _validate(body, {"$ref": "#/$defs/workflow-run", "$defs": DOC["$defs"]})
    assert body["referenced_workflows"] == [entry]
    record = records.run_record(wire.parse(wire.WorkflowRun, body, "GET run"), Repo("org", "repo"))
    [read] = record.referenced_workflows
    assert (read.path, read.ref, read.sha) == (entry["path"], "", sha)


def test_the_review_thread_reader_reads_every_answer_the_schema_allows(world: GitHubSimulator, client: Any) -> None:
    """``GET …/pulls/{n}/comments`` as served validates, and the adapter's parser reads it with the
    thread's file, line and the comment a reply answers; cut to the fields GitHub requires (no
    ``line``, ``original_line`` or ``in_reply_to_id``), it still validates and still parses."""
    from fullsend.adapters.github import records, wire

    key = "GET /repos/{owner}/{repo}/pulls/{pull_number}/comments"
    body = client(world).get(f"{R}/pulls/7/comments").json()
    _validate(body, _schema(key, "200"))
    read = [records.review_comment_record(c) for c in wire.parse_list(wire.ReviewComment, body, key)]
    assert [(c.id, c.author, c.path, c.line, c.in_reply_to_id, c.body) for c in read] == [
        (THREAD_ID, "alice", "db/migrate.sql", 3, 0, "Off by one here."),
        (THREAD_REPLY_ID, "alice", "db/migrate.sql", 3, THREAD_ID, "/fs-fix use <= here"),
    ]
    required = set(DOC["$defs"]["pull-request-review-comment"]["required"])
    assert {"line", "original_line", "in_reply_to_id"}.isdisjoint(required)
    bare = [{k: v for k, v in c.items() if k in required} for c in body]
    _validate(bare, _schema(key, "200"))
    read = [records.review_comment_record(c) for c in wire.parse_list(wire.ReviewComment, bare, key)]
    assert [(c.path, c.line, c.in_reply_to_id, c.in_thread) for c in read] == [("db/migrate.sql", 0, 0, True)] * 2


# ---- the adopter's world: opening issues and pull requests on the git server, Apps' tokens
GIT_CASES = (
    ("POST /repos/{owner}/{repo}/pulls", "201"),
    ("POST /repos/{owner}/{repo}/pulls", "422"),
    ("POST /repos/{owner}/{repo}/issues", "201"),
    ("POST /repos/{owner}/{repo}/issues", "422"),
    ("GET /repos/{owner}/{repo}/installation", "200"),
    ("POST /app/installations/{installation_id}/access_tokens", "201"),
    ("POST /app/installations/{installation_id}/access_tokens", "422"),
)


def _jwt(private_pem: str, client_id: str) -> str:
    import base64
    import subprocess
    import tempfile
    import time

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    now = int(time.time())
    head = b64(json.dumps({"alg": "RS256"}).encode())
    claims = b64(json.dumps({"iat": now - 30, "exp": now + 300, "iss": client_id}).encode())
    signed_part = f"{head}.{claims}"
    with tempfile.NamedTemporaryFile("w", suffix=".pem") as key:
        key.write(private_pem)
        key.flush()
        sig = subprocess.run(
            ["openssl", "dgst", "-sha256", "-sign", key.name],
            input=signed_part.encode(),
            capture_output=True,
            check=True,
        ).stdout
    return f"{signed_part}.{b64(sig)}"


def test_repository_writes_and_app_tokens_match_openapi(tmp_path: Path, client: Any) -> None:
    import subprocess

    from fullsend.simulator.apps import App, AppsServer
    from fullsend.simulator.git.pulls import follow_pulls
    from fullsend.simulator.git.server import GitServer

    key = tmp_path / "app.pem"
    subprocess.run(["openssl", "genrsa", "-out", str(key), "2048"], check=True, capture_output=True)
    public = subprocess.run(
        ["openssl", "rsa", "-in", str(key), "-pubout"], check=True, capture_output=True, text=True
    ).stdout
    with GitHubSimulator() as sim:
        sim.add_token(APP_TOKEN, "fullsend-ai-review", "Bot", contents="write")
        git, apps = GitServer(sim, tmp_path / "git"), AppsServer(sim)
        sim.extensions += [git, apps]
        git.create("org", "repo")
        follow_pulls(sim, git)
        app = apps.add(App("org-fullsend", "Iv1.x", public, {"contents": "write", "pull_requests": "write"}))
        work = tmp_path / "work"
        url = git.url("org", "repo").replace("http://", f"http://x-access-token:{APP_TOKEN}@")
        for args in (
            ["init", "-q", "-b", "main", str(work)],
            ["-C", str(work), "commit", "-q", "--allow-empty", "-m", "a"],
            ["-C", str(work), "push", "-q", url, "main", "main:feature"],
            ["-C", str(work), "commit", "-q", "--allow-empty", "-m", "b"],
            ["-C", str(work), "push", "-q", url, "main:feature"],
        ):
            subprocess.run(
                ["git", "-c", "user.name=t", "-c", "user.email=t@invalid", *args], check=True, capture_output=True
            )
        session = client(sim, APP_TOKEN).session
        answers = {
            ("POST /repos/{owner}/{repo}/pulls", "201"): session.post(
                f"{sim.api_url}{R}/pulls", json={"title": "t", "head": "feature", "base": "main"}
            ),
            ("POST /repos/{owner}/{repo}/pulls", "422"): session.post(
                f"{sim.api_url}{R}/pulls", json={"title": "t", "head": "nope", "base": "main"}
            ),
            ("POST /repos/{owner}/{repo}/issues", "201"): session.post(
                f"{sim.api_url}{R}/issues", json={"title": "t", "labels": ["bug"]}
            ),
            ("POST /repos/{owner}/{repo}/issues", "422"): session.post(
                f"{sim.api_url}{R}/issues", json={"body": "no title"}
            ),
        }
        bearer = {"Authorization": f"Bearer {_jwt(key.read_text(), 'Iv1.x')}"}
        import requests

        answers[("GET /repos/{owner}/{repo}/installation", "200")] = requests.get(
            f"{sim.api_url}{R}/installation", headers=bearer, timeout=10
        )
        tokens = f"{sim.api_url}/app/installations/{app.installation_id}/access_tokens"
        answers[("POST /app/installations/{installation_id}/access_tokens", "201")] = requests.post(
            tokens, headers=bearer, json={"permissions": {"contents": "write"}}, timeout=10
        )
        answers[("POST /app/installations/{installation_id}/access_tokens", "422")] = requests.post(
            tokens, headers=bearer, json={"permissions": {"administration": "write"}}, timeout=10
        )
    assert set(answers) == set(GIT_CASES)
    for (endpoint, status), response in answers.items():
        assert response.status_code == int(status), (endpoint, response.text)
        _validate(response.json(), _schema(endpoint, status))
