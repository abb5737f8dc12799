"""The GitHub adapter: the only importer of PyGithub (through ``github_http``).

Implements ``fullsend.ports.Forge`` over two credentials
(docs/architecture.md "GitHub access"): the job token for Actions reads and receipts, the role token for work-item reads
and the agent's own posts.  Returns frozen ``fullsend.core.model`` records; no PyGithub object
leaves this module.  Base URLs come from ``GITHUB_API_URL`` / ``GITHUB_GRAPHQL_URL``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any
from urllib.parse import quote

import requests

from fullsend.adapters.github.transport import Transport, next_link
from fullsend.core.model import (
    Comment,
    Comparison,
    Issue,
    Job,
    PullRequest,
    Repo,
    Review,
    WorkflowRun,
    created_query,
    format_time,
)
from fullsend.core.provenance.verdicts import order_listing
from fullsend.errors import ForgeError
from fullsend.ports import Clock, Credential

RUN_PAGES_MAX = 4  # a poll sees at most the newest 400 shim runs
REPO_RUN_PAGES_MAX = 10  # GitHub serves at most 1,000 results of a filtered run listing
LIST_PAGES_MAX = 100  # jobs, comments, reviews
INSTALLATION_PREFIX = "ghs_"  # an installation token: its login is read through GraphQL first


class RunListing(list):
    """The shim's runs of one poll; ``capped`` is True when the 4-page bound was reached."""

    capped: bool = False


class GitHubForge:
    """``Forge`` over the REST API at ``api_url`` for one repository.

    ``role_token`` may be empty: work-item reads then use the job token (receipts are off in
    that case anyway: docs/architecture.md "Receipt").  Every method raises ``ForgeError`` only.
    """

    def __init__(
        self,
        repo: Repo,
        api_url: str,
        graphql_url: str,
        job_token: str,
        role_token: str,
        clock: Clock,
        timeout_s: int = 15,
        on_request: Callable[[str], None] | None = None,
    ) -> None:
        self.repo = repo
        self._graphql_url = graphql_url
        self._tokens = {"job": job_token, "role": role_token or job_token}
        self._timeout_s = timeout_s
        self._http = {
            "job": Transport(api_url, job_token, clock, timeout_s),
            "role": Transport(api_url, role_token or job_token, clock, timeout_s) if role_token else None,
        }
        self._logins: dict[str, str] = {}
        self._integration: set[str] = set()  # credentials known to act as an App
        self._on_request = on_request
        # The last shim listing parsed, keyed by (path, created filter, page ETags): a poll whose
        # pages all answer 304 (same ETags) reuses it instead of re-parsing up to 400 rows.
        self._parsed_listing: tuple[tuple[str, str, tuple[str, ...]], RunListing] | None = None

    def _t(self, credential: Credential) -> Transport:
        return self._http.get(credential) or self._http["job"]  # type: ignore[return-value]  # "job" is never None

    @property
    def _base(self) -> str:
        return f"/repos/{quote(self.repo.owner, safe='')}/{quote(self.repo.name, safe='')}"

    def _get(self, credential: Credential, path: str, params: dict[str, Any] | None = None,
             conditional: bool = False) -> Any:
        return self._t(credential).request("GET", path, params, conditional=conditional).data

    def _pages(self, credential: Credential, path: str, params: dict[str, Any], key: str | None,
               max_pages: int) -> list[Any]:
        """Follow Link ``rel=next`` up to ``max_pages``; stop on a short page or ≥ total_count."""
        return self._walk(credential, path, params, key, max_pages)[0]

    def _walk(self, credential: Credential, path: str, params: dict[str, Any], key: str | None,
              max_pages: int, etags: list[str] | None = None) -> tuple[list[Any], bool]:
        """``(items, capped)`` of :meth:`_pages`; ``capped`` when ``max_pages`` full pages were
        read and GitHub still announced a next one.  ``etags``, when given, receives each page's
        ETag ("" for a page without one), in page order."""
        items: list[Any] = []
        url, query = path, dict(params, per_page=100)
        for _ in range(max_pages):
            resp = self._t(credential).request("GET", url, query, conditional=True)
            if etags is not None:
                etags.append(resp.headers.get("etag", ""))
            data = resp.data
            page = (data.get(key) if isinstance(data, dict) else None) if key else data
            page = page if isinstance(page, list) else []
            items.extend(page)
            total = data.get("total_count") if key and isinstance(data, dict) else None
            if len(page) < 100 or (isinstance(total, int) and 0 < total <= len(items)):
                return items, False
            url, query = next_link(resp.headers), {}
            if not url:
                return items, False
        return items, True

    # ---- Actions reads (job token) -------------------------------------------------------
    def get_run(self, run_id: int) -> WorkflowRun:
        """``GET /repos/{o}/{r}/actions/runs/{id}``."""
        return WorkflowRun.from_json(self._get("job", f"{self._base}/actions/runs/{run_id}") or {})

    def list_run_jobs(self, run_id: int) -> list[Job]:
        """All jobs of a run, ≤ 100 pages of 100."""
        rows = self._pages("job", f"{self._base}/actions/runs/{run_id}/jobs", {}, "jobs", LIST_PAGES_MAX)
        return [Job.from_json(j) for j in rows if isinstance(j, dict)]

    def list_workflow_runs(self, workflow_file: str, created_since: datetime) -> list[WorkflowRun]:
        """The shim's runs with ``created>=<since>``, ≤ 4 pages, oldest first; a run read twice
        (the listing shifted between page reads) is kept once by ``core``'s ``order_listing``.
        A poll whose pages carry the ETags of the last parse (all 304s) returns those records again
        in a new list, without re-parsing a row."""
        path = f"{self._base}/actions/workflows/{quote(workflow_file, safe='')}/runs"
        created, etags = ">=" + format_time(created_since), list[str]()
        rows = self._walk("job", path, {"created": created}, "workflow_runs", RUN_PAGES_MAX, etags)[0]
        key = (path, created, tuple(etags))
        parsed = self._parsed_listing
        if parsed is None or parsed[0] != key or not all(etags):
            listing = RunListing(order_listing(WorkflowRun.from_json(row) for row in rows if isinstance(row, dict)))
            listing.capped = len(rows) >= RUN_PAGES_MAX * 100
            parsed = self._parsed_listing = (key, listing)
        copy = RunListing(parsed[1])  # the caller may change its list; the cached one stays whole
        copy.capped = parsed[1].capped
        return copy

    def list_repository_runs(self, created_since: datetime | None,
                             created_until: datetime | None = None) -> tuple[list[WorkflowRun], bool]:
        """``GET …/actions/runs?created=…``: ``(runs, capped)``, ≤ 10 pages, newest first as
        GitHub lists them (``fullsend.ports.Forge.list_repository_runs``)."""
        created = created_query(created_since, created_until)
        rows, capped = self._walk("job", f"{self._base}/actions/runs", {"created": created} if created else {},
                                  "workflow_runs", REPO_RUN_PAGES_MAX)
        return [WorkflowRun.from_json(r) for r in rows if isinstance(r, dict)], capped

    # ---- work-item reads (role token) ----------------------------------------------------
    def get_pull_request(self, number: int) -> PullRequest:
        """``GET …/pulls/{n}``; ``NotFoundError`` means the item is an issue."""
        return PullRequest.from_json(self._get("role", f"{self._base}/pulls/{number}", conditional=True) or {})

    def get_issue(self, number: int) -> Issue:
        """``GET …/issues/{n}`` (served for pull requests too)."""
        return Issue.from_json(self._get("role", f"{self._base}/issues/{number}", conditional=True) or {})

    def list_issue_comments(self, number: int, since: datetime | None = None,
                            credential: Credential = "role") -> list[Comment]:
        """Every comment (``since`` = updated_at filter), ≤ 100 pages, oldest first."""
        params = {"since": format_time(since)} if since else {}
        rows = self._pages(credential, f"{self._base}/issues/{number}/comments", params, None, LIST_PAGES_MAX)
        return [Comment.from_json(c) for c in rows if isinstance(c, dict)]

    def list_reviews(self, number: int) -> list[Review]:
        """Every review of a pull request, ≤ 100 pages."""
        rows = self._pages("role", f"{self._base}/pulls/{number}/reviews", {}, None, LIST_PAGES_MAX)
        return [Review.from_json(r) for r in rows if isinstance(r, dict)]

    def compare(self, base: str, head: str) -> Comparison:
        """``GET …/compare/{base}...{head}?per_page=1`` (both path-escaped, WIRE)."""
        path = f"{self._base}/compare/{quote(base, safe='')}...{quote(head, safe='')}"
        return Comparison.from_json(self._get("role", path, {"per_page": 1}) or {})

    # ---- writes (never retried) ------------------------------------------------------------
    def post_comment(self, number: int, body: str, credential: Credential = "role") -> Comment:
        """``POST …/issues/{n}/comments``; returns the created comment as the API reports it."""
        resp = self._t(credential).request("POST", f"{self._base}/issues/{number}/comments", body={"body": body})
        return Comment.from_json(resp.data if isinstance(resp.data, dict) else {})

    def edit_comment(self, comment_id: int, body: str, credential: Credential = "role") -> Comment:
        """``PATCH …/issues/comments/{id}``."""
        resp = self._t(credential).request("PATCH", f"{self._base}/issues/comments/{comment_id}", body={"body": body})
        return Comment.from_json(resp.data if isinstance(resp.data, dict) else {})

    # ---- identity (docs/architecture.md "Receipt reader") ------------------------------------
    def viewer_login(self, credential: Credential) -> str:
        """Resolve the login a credential posts under, once per run.

        ``ghs_`` tokens try GraphQL ``viewer`` first; others ``/user`` → ``/app`` → GraphQL.
        Raises ``ForgeError`` naming every cause when all fail.
        """
        if credential in self._logins:
            return self._logins[credential]
        token = self._tokens[credential]
        if not token:
            raise ForgeError("no token to resolve a login from")
        order = [self._graphql_viewer, self._rest_user, self._rest_app]
        if not token.startswith(INSTALLATION_PREFIX):
            order = [self._rest_user, self._rest_app, self._graphql_viewer]
        causes = []
        for step in order:
            try:
                login = step(credential)
            except ForgeError as exc:
                causes.append(str(exc))
                if step == self._rest_user and exc.status == 403:
                    self._integration.add(credential)  # "not accessible by integration": an App token
                continue
            self._logins[credential] = login
            return login
        raise ForgeError("could not resolve the login: " + "; ".join(causes))

    def _rest_user(self, credential: Credential) -> str:
        data = self._t(credential).request("GET", "/user").data
        login = data.get("login") if isinstance(data, dict) else None
        if not isinstance(login, str) or not login:
            raise ForgeError("/user returned no login")
        return login

    def _rest_app(self, credential: Credential) -> str:
        data = self._t(credential).request("GET", "/app").data
        slug = data.get("slug") if isinstance(data, dict) else None
        if not isinstance(slug, str) or not slug:
            raise ForgeError("/app returned no slug")
        return slug + "[bot]"

    def _graphql_viewer(self, credential: Credential) -> str:
        try:
            resp = requests.post(
                self._graphql_url,
                json={"query": "query { viewer { login } }"},
                headers={"Authorization": f"Bearer {self._tokens[credential]}"},
                timeout=self._timeout_s,
            )
        except requests.RequestException as exc:
            raise ForgeError(f"GraphQL viewer failed: {type(exc).__name__}") from None
        try:
            data = resp.json()
        except ValueError:
            data = {}
        if resp.status_code != 200:
            msg = data.get("message") if isinstance(data, dict) else None
            raise ForgeError(f"GraphQL viewer: HTTP {resp.status_code} {msg or ''}".strip(), resp.status_code)
        errors = data.get("errors") if isinstance(data, dict) else None
        if errors:
            first = errors[0].get("message") if isinstance(errors[0], dict) else errors[0]
            raise ForgeError(f"GraphQL viewer: {first}")
        viewer = (data.get("data") or {}).get("viewer") if isinstance(data, dict) else None
        login = viewer.get("login") if isinstance(viewer, dict) else None
        if not isinstance(login, str) or not login:
            raise ForgeError("GraphQL viewer returned no login")
        is_app = self._tokens[credential].startswith(INSTALLATION_PREFIX) or credential in self._integration
        if is_app and not login.lower().endswith("[bot]"):
            login += "[bot]"  # an installation token acts as an App: spell it as REST does
        return login
