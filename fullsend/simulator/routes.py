"""Endpoint handlers of the GitHub simulator (docs/architecture.md "The simulator").

Each handler takes the simulator state, the parsed ``Call`` and the path match, and returns a
``Reply`` (status, JSON body, headers).  Authentication, faults, ETags and recording live in
``sim_http``; this module only answers.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from fullsend.core.scalars import parse_time
from fullsend.simulator.issue_routes import create_issue
from fullsend.simulator.pull_routes import create_pull
from fullsend.simulator.query import created_filter, page_params, paginate
from fullsend.simulator.replies import DOCS, Call, Handler, Reply, error, not_found, validation_failed
from fullsend.simulator.review_routes import STATES, own_pull_refusal, review_problem
from fullsend.simulator.shapes import full_repo_json, public_user_json

if TYPE_CHECKING:  # pragma: no cover
    from fullsend.simulator.items import ItemsState
# Filters after which GitHub returns at most 1,000 runs (list-workflow-runs description).
_CAPPING_FILTERS = ("actor", "branch", "check_suite_id", "created", "event", "head_sha", "status")
_RUN_CAP = 1000


def _listing(sim: ItemsState, call: Call, items: list[Any], sub: str, wrap: str | None) -> Reply:
    """Page ``items``; ``wrap`` names the array key of a ``{total_count, <wrap>}`` envelope."""
    chunk, link = paginate(items, call.query_pairs, call.query, sim.urls.link_base + sub)
    body: Any = {"total_count": len(items), wrap: chunk} if wrap else chunk
    return Reply(200, body, {"Link": link} if link else {})


def get_run(sim: ItemsState, call: Call, m: re.Match[str]) -> Reply:
    """``GET …/actions/runs/{id}``."""
    run = sim.get_run(int(m["id"]))
    return Reply(200, run) if run is not None else not_found()


def list_jobs(sim: ItemsState, call: Call, m: re.Match[str]) -> Reply:
    """``GET …/actions/runs/{id}/jobs`` (``filter=latest`` by default, or ``all``) and
    ``…/attempts/{n}/jobs``: ``{total_count, jobs}``, creation order, Link pages."""
    run_id = int(m["id"])
    if sim.get_run(run_id) is None:
        return not_found()
    job_filter = call.param("filter", "latest")
    if job_filter not in ("latest", "all"):
        return error(422, "Validation Failed: filter must be latest or all")
    attempt = int(m["attempt"]) if m["attempt"] else None
    return _listing(sim, call, sim.jobs_listing(run_id, job_filter, attempt), m["sub"], "jobs")


def list_runs(sim: ItemsState, call: Call, m: re.Match[str]) -> Reply:
    """``…/actions/workflows/{file}/runs`` and ``…/actions/runs``: newest first, filtered."""
    wf = unquote(m["wf"]) if m["wf"] else None
    if wf is not None and not sim.knows_workflow(wf):
        return not_found()
    keep_created = created_filter(call.param("created")) if "created" in call.query else None
    if "created" in call.query and keep_created is None:
        return error(422, "Validation Failed: invalid created filter")
    runs = [r for r in sim.runs() if _run_matches(r, wf, call)]
    if keep_created is not None:
        runs = [r for r in runs if keep_created(parse_time(r.get("created_at")))]
    runs.sort(key=_newest_first_key, reverse=True)
    if any(k in call.query for k in _CAPPING_FILTERS):
        runs = runs[:_RUN_CAP]
    if call.param("exclude_pull_requests") == "true":
        runs = [{**r, "pull_requests": []} for r in runs]
    return _listing(sim, call, runs, m["sub"], "workflow_runs")


def _newest_first_key(run: dict[str, Any]) -> tuple[float, int]:
    created = parse_time(run.get("created_at"))
    return (created.timestamp() if created else float("-inf"), int(run["id"]))


def _run_matches(run: dict[str, Any], wf: str | None, call: Call) -> bool:
    path = str(run.get("path", ""))
    if wf is not None and wf != path.rsplit("/", 1)[-1] and wf != str(run.get("workflow_id")):
        return False
    checks = {
        "event": run.get("event"),
        "head_sha": run.get("head_sha"),
        "branch": run.get("head_branch"),
        "check_suite_id": str(run.get("check_suite_id")),
        "actor": (run.get("actor") or {}).get("login"),
    }
    if any(k in call.query and call.param(k) != v for k, v in checks.items()):
        return False
    status = call.param("status")
    return not status or status in (run.get("status"), run.get("conclusion"))


def get_repo(sim: ItemsState, call: Call, m: re.Match[str]) -> Reply:
    """``GET /repos/{o}/{r}`` (a non-lazy client's first read)."""
    return Reply(200, full_repo_json(sim.urls, "2024-01-02T03:04:05Z"))


def get_issue(sim: ItemsState, call: Call, m: re.Match[str]) -> Reply:
    """``GET …/issues/{n}``: issues and pull requests alike."""
    issue = sim.get_issue(int(m["n"]))
    return Reply(200, issue) if issue is not None else not_found()


def get_pull(sim: ItemsState, call: Call, m: re.Match[str]) -> Reply:
    """``GET …/pulls/{n}``: 404 for a plain issue, which is how the watcher tells."""
    pr = sim.get_pull(int(m["n"]))
    return Reply(200, pr) if pr is not None else error(404, "Not Found", DOCS + "/pulls/pulls#get-a-pull-request")


def list_comments(sim: ItemsState, call: Call, m: re.Match[str]) -> Reply:
    """``GET …/issues/{n}/comments``: oldest first, ``since`` on ``updated_at >= since``, Link pages."""
    number = int(m["n"])
    if sim.get_issue(number) is None:
        return not_found()
    return _comments_since(sim, call, m, sim.comments(number))


def list_thread_comments(sim: ItemsState, call: Call, m: re.Match[str]) -> Reply:
    """``GET …/pulls/{n}/comments``: the review threads' comments, oldest first, ``since`` on
    ``updated_at >= since``, Link pages."""
    comments = sim.thread_comments(int(m["n"]))
    return not_found() if comments is None else _comments_since(sim, call, m, comments)


def _comments_since(sim: ItemsState, call: Call, m: re.Match[str], comments: list[dict[str, Any]]) -> Reply:
    """One page of ``comments`` (oldest first), those with ``updated_at >= since`` when asked."""
    if "since" in call.query:
        since = parse_time(call.param("since").replace(" ", "+"))
        if since is None:
            return error(422, "Validation Failed: invalid since")
        comments = [c for c in comments if (parse_time(c.get("updated_at")) or since) >= since]
    return _listing(sim, call, comments, m["sub"], None)


def get_thread_comment(sim: ItemsState, call: Call, m: re.Match[str]) -> Reply:
    """``GET …/pulls/comments/{id}``."""
    comment = sim.get_thread_comment(int(m["id"]))
    return Reply(200, comment) if comment is not None else not_found()


def list_repository_comments(sim: ItemsState, call: Call, m: re.Match[str]) -> Reply:
    """``GET …/issues/comments``: every comment of the repository, ``since`` on ``updated_at >=
    since``, ordered by ``sort`` (``created``, the default, or ``updated``) and ``direction``
    (``asc`` unless ``desc``), Link pages."""
    comments = sim.all_comments()
    if "since" in call.query:
        since = parse_time(call.param("since").replace(" ", "+"))
        if since is None:
            return error(422, "Validation Failed: invalid since")
        comments = [c for c in comments if (parse_time(c.get("updated_at")) or since) >= since]
    key = "updated_at" if call.param("sort") == "updated" else "created_at"
    comments.sort(key=lambda c: (parse_time(c.get(key)) or datetime.min.replace(tzinfo=UTC), c["id"]))
    if call.param("direction") == "desc":
        comments.reverse()
    return _listing(sim, call, comments, m["sub"], None)


def create_comment(sim: ItemsState, call: Call, m: re.Match[str]) -> Reply:
    """``POST …/issues/{n}/comments``: authored by the token's identity, stamped now; 201."""
    number = int(m["n"])
    if sim.get_issue(number) is None:
        return not_found()
    body = _json_field(call.body, "body")
    if not isinstance(body, str):
        return error(422, 'Invalid request.\n\n"body" wasn\'t supplied.')
    comment = sim.add_comment(number, body, call.login, "Bot" if call.is_bot else "User")
    sim.notify("issue_comment", action="created", number=number, login=call.login, comment=comment)
    return Reply(201, comment, {"Location": comment["url"]})


def get_comment(sim: ItemsState, call: Call, m: re.Match[str]) -> Reply:
    """``GET …/issues/comments/{id}``."""
    comment = sim.get_comment(int(m["id"]))
    return Reply(200, comment) if comment is not None else not_found()


def update_comment(sim: ItemsState, call: Call, m: re.Match[str]) -> Reply:
    """``PATCH …/issues/comments/{id}``: new body, ``updated_at`` now; any authenticated token."""
    comment_id = int(m["id"])
    if sim.get_comment(comment_id) is None:
        return not_found()
    body = _json_field(call.body, "body")
    if not isinstance(body, str):
        return error(422, 'Invalid request.\n\n"body" wasn\'t supplied.')
    return Reply(200, sim.edit_comment(comment_id, body))


def delete_comment(sim: ItemsState, call: Call, m: re.Match[str]) -> Reply:
    """``DELETE …/issues/comments/{id}``: 204."""
    comment_id = int(m["id"])
    if sim.get_comment(comment_id) is None:
        return not_found()
    sim.delete_comment(comment_id)
    return Reply(204)


def list_reviews(sim: ItemsState, call: Call, m: re.Match[str]) -> Reply:
    """``GET …/pulls/{n}/reviews``: submission order, Link pages."""
    reviews = sim.reviews(int(m["n"]))
    return not_found() if reviews is None else _listing(sim, call, reviews, m["sub"], None)


def create_review(sim: ItemsState, call: Call, m: re.Match[str]) -> Reply:
    """``POST …/pulls/{n}/reviews``: the review by the token's identity (``PENDING`` without an
    ``event``), its line comments kept; 422 for what ``review_problem`` names."""
    number = int(m["n"])
    if sim.reviews(number) is None:
        return not_found()
    try:
        doc = json.loads(call.body or b"{}")
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        return error(400, "Problems parsing JSON")
    problem = review_problem(doc)
    if problem:
        return error(422, f"Unprocessable Entity: {problem}")
    commit = doc["commit_id"] if isinstance(doc.get("commit_id"), str) else ""
    if commit and not sim.has_head(number, commit):
        return error(422, "Unprocessable Entity: commit_id is not part of the pull request")
    own = own_pull_refusal(doc, (sim.get_pull(number) or {}).get("user") or {}, call.login)
    if own:
        return validation_failed("Unprocessable Entity", [own])
    kind = "Bot" if call.is_bot else "User"
    review = sim.add_review(
        number, call.login, STATES.get(doc.get("event") or "", "PENDING"), doc.get("body") or "", kind, commit
    )
    sim.add_review_comments(review["id"], doc.get("comments", []))
    if review["state"] != "PENDING":
        sim.notify("pull_request_review", action="submitted", number=number, login=call.login, review=review)
    return Reply(200, review)


def compare(sim: ItemsState, call: Call, m: re.Match[str]) -> Reply:
    """``GET …/compare/{base}...{head}``: 404 for an unknown base."""
    base, sep, head = unquote(m["bh"]).partition("...")
    if not sep or not base or not head:
        return not_found()
    per_page, _ = page_params({"per_page": [call.param("per_page", "250")]})
    answer = sim.compare_answer(base, head, per_page if "per_page" in call.query else 250)
    if isinstance(answer, int):
        return error(answer, "Not Found" if answer == 404 else "Error")
    return Reply(200, answer)


def get_user(sim: ItemsState, call: Call, m: re.Match[str]) -> Reply:
    """``GET /user``: 403 for an App (installation token), the user for a ``User`` token."""
    if call.is_bot:
        return error(403, "Resource not accessible by integration", DOCS + "/users/users#get-the-authenticated-user")
    return Reply(200, public_user_json(sim.urls, call.login, "2020-01-01T00:00:00Z"))


def get_app(sim: ItemsState, call: Call, m: re.Match[str]) -> Reply:
    """``GET /app``: 401, as for any non-JWT token."""
    return error(401, "A JSON web token could not be decoded", DOCS)


def _json_field(raw: bytes, key: str) -> Any:
    try:
        data = json.loads(raw or b"null")
    except ValueError:
        return None
    return data.get(key) if isinstance(data, dict) else None


_R = r"/repos/(?P<o>[^/]+)/(?P<r>[^/]+)"
ROUTES: tuple[tuple[str, re.Pattern[str], Handler], ...] = tuple(
    (method, re.compile(_R + pattern if pattern.startswith("(?P<sub>") or pattern == "" else pattern), handler)
    for method, pattern, handler in (
        ("GET", "", get_repo),
        ("GET", r"(?P<sub>/actions/runs/(?P<id>\d+))", get_run),
        ("GET", r"(?P<sub>/actions/runs/(?P<id>\d+)(?:/attempts/(?P<attempt>\d+))?/jobs)", list_jobs),
        ("GET", r"(?P<sub>/actions/workflows/(?P<wf>[^/]+)/runs)", list_runs),
        ("GET", r"(?P<sub>/actions/runs)(?P<wf>)", list_runs),
        ("GET", r"(?P<sub>/issues/(?P<n>\d+))", get_issue),
        ("GET", r"(?P<sub>/pulls/(?P<n>\d+))", get_pull),
        ("GET", r"(?P<sub>/issues/(?P<n>\d+)/comments)", list_comments),
        ("POST", r"(?P<sub>/issues/(?P<n>\d+)/comments)", create_comment),
        ("GET", r"(?P<sub>/issues/comments)", list_repository_comments),
        ("GET", r"(?P<sub>/issues/comments/(?P<id>\d+))", get_comment),
        ("PATCH", r"(?P<sub>/issues/comments/(?P<id>\d+))", update_comment),
        ("DELETE", r"(?P<sub>/issues/comments/(?P<id>\d+))", delete_comment),
        ("GET", r"(?P<sub>/pulls/(?P<n>\d+)/reviews)", list_reviews),
        ("GET", r"(?P<sub>/pulls/(?P<n>\d+)/comments)", list_thread_comments),
        ("GET", r"(?P<sub>/pulls/comments/(?P<id>\d+))", get_thread_comment),
        ("POST", r"(?P<sub>/pulls/(?P<n>\d+)/reviews)", create_review),
        ("POST", r"(?P<sub>/pulls)", create_pull),
        ("POST", r"(?P<sub>/issues)", create_issue),
        ("GET", r"(?P<sub>/compare/(?P<bh>.+))", compare),
        ("GET", r"/user", get_user),
        ("GET", r"/app", get_app),
    )
)


def dispatch(sim: ItemsState, call: Call) -> Reply:
    """Answer ``call`` from the route table (404 for unknown paths, methods and repositories)."""
    path = call.path
    alias = f"/repositories/{sim.urls.repo_id}"
    if path == alias or path.startswith(alias + "/"):
        path = f"/repos/{quote(sim.urls.owner)}/{quote(sim.urls.repo)}" + path[len(alias) :]
    for method, pattern, handler in ROUTES:
        m = pattern.fullmatch(path)
        if m is None or method != call.method:
            continue
        if "o" in pattern.groupindex and not _same_repo(sim, m):
            return not_found()
        return handler(sim, call, m)
    return not_found()


def _same_repo(sim: ItemsState, m: re.Match[str]) -> bool:
    return (unquote(m["o"]).lower(), unquote(m["r"]).lower()) == (sim.urls.owner.lower(), sim.urls.repo.lower())
