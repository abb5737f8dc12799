"""Read-only forge access for ``fullsend explain``: every call is recorded, none can stop the report.

All reads go through :class:`fullsend.adapters.github.GitHubForge` with one token as both
credentials, except two the adapter does not offer, which use the adapter's public
``Transport``: the issue record with its ``created_at`` and the repository-wide run listing
(:meth:`ExplainReader.list_repository_runs`).  Only ``GET`` requests are made, plus the GraphQL
``viewer`` query when the login is resolved; nothing is ever posted.  A failed call is recorded
as a :class:`~fullsend.app.commands.explain.model.CallReport` naming the missing permission on a 403, and
the reader returns ``None`` so the rest of the report still prints (fail-safe, per call).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar
from urllib.parse import quote

from fullsend.adapters.github.forge import GitHubForge
from fullsend.adapters.github.transport import Transport, next_link
from fullsend.app.commands.explain.model import CallReport
from fullsend.core.model import Comment, Issue, Job, PullRequest, Repo, Review, WorkflowRun, format_time, parse_time
from fullsend.errors import ForgeError, NotFoundError
from fullsend.ports import Clock

T = TypeVar("T")

#: The repository-wide listing reads at most this many pages of 100 (GitHub serves at most
#: 1,000 results for a filtered run search).
REPO_RUN_PAGES_MAX = 10
PER_PAGE = 100

#: The permission a read needs, named in the report when GitHub answers 403.
PERMISSION_ACTIONS = "actions: read"
PERMISSION_ISSUES = "issues: read"
PERMISSION_PULLS = "pull-requests: read"


def _hint(status: int | None, permission: str) -> str:
    """The probable cause of a failed call, in the project's words."""
    if status == 401:
        return "the token was refused: check GH_TOKEN / GITHUB_TOKEN and GITHUB_API_URL"
    if status == 403:
        need = f" ({permission})" if permission else ""
        return f"missing permission: the token may not read this{need}, or a rate limit was hit"
    if status == 404:
        return "not found, or the token cannot see the repository"
    if status is None or status == 429 or 500 <= status <= 504:
        return "GitHub did not answer usefully (a network error, a rate limit or a server error); try again"
    return ""


class ExplainReader:
    """The reads of ``fullsend explain`` for one repository, each recorded in :attr:`calls`.

    ``api_url`` is ``GITHUB_API_URL`` (or the URL's host API), ``graphql_url``
    ``GITHUB_GRAPHQL_URL``; ``token`` serves as both the job and the role credential.
    ``transport`` may be injected by tests; by default it is built like the adapter's own.
    """

    def __init__(self, repo: Repo, api_url: str, graphql_url: str, token: str, clock: Clock,
                 timeout_s: int = 15, transport: Transport | None = None) -> None:
        self.repo = repo
        self.forge = GitHubForge(repo, api_url, graphql_url, token, token, clock, timeout_s)
        self._transport = transport or Transport(api_url, token, clock, timeout_s)
        self.calls: list[CallReport] = []
        self._jobs: dict[int, tuple[list[Job] | None, ForgeError | None]] = {}

    @property
    def _base(self) -> str:
        return f"/repos/{quote(self.repo.owner, safe='')}/{quote(self.repo.name, safe='')}"

    def _attempt(self, call: str, permission: str, read: Callable[[], T], *,
                 not_found_ok: bool = False) -> tuple[T | None, ForgeError | None]:
        """Run one read; record it; return ``(value, None)`` or ``(None, error)``."""
        try:
            value = read()
        except NotFoundError as exc:
            if not_found_ok:
                self.calls.append(CallReport(call, True, 404, "404: not found"))
            else:
                self.calls.append(CallReport(call, False, 404, f"{exc} ({_hint(404, permission)})"))
            return None, exc
        except ForgeError as exc:
            hint = _hint(exc.status, permission)
            self.calls.append(CallReport(call, False, exc.status, f"{exc}" + (f" ({hint})" if hint else "")))
            return None, exc
        self.calls.append(CallReport(call, True, 200))
        return value, None

    # ---- the item ------------------------------------------------------------------------
    def item(self, number: int) -> tuple[Issue | None, datetime | None]:
        """``GET /repos/{o}/{r}/issues/{n}``: the issue record (served for pull requests too) and
        its ``created_at`` (``None`` when unknown)."""
        path = f"{self._base}/issues/{number}"
        data, _ = self._attempt(f"GET {path}", PERMISSION_ISSUES,
                                lambda: self._transport.request("GET", path).data)
        if not isinstance(data, dict):
            return None, None
        return Issue.from_json(data), parse_time(data.get("created_at"))

    def pull_request(self, number: int) -> tuple[PullRequest | None, bool]:
        """``GET …/pulls/{n}``: ``(record, known)``; a 404 is ``(None, True)``: the item is an issue."""
        pr, err = self._attempt(f"GET {self._base}/pulls/{number}", PERMISSION_PULLS,
                                lambda: self.forge.get_pull_request(number), not_found_ok=True)
        return pr, pr is not None or isinstance(err, NotFoundError)

    def comments(self, number: int) -> list[Comment] | None:
        """Every comment of the item, oldest first (``GET …/issues/{n}/comments``, all pages)."""
        found, _ = self._attempt(f"GET {self._base}/issues/{number}/comments", PERMISSION_ISSUES,
                                 lambda: self.forge.list_issue_comments(number))
        return found

    def reviews(self, number: int) -> list[Review] | None:
        """Every review of a pull request (``GET …/pulls/{n}/reviews``, all pages)."""
        found, _ = self._attempt(f"GET {self._base}/pulls/{number}/reviews", PERMISSION_PULLS,
                                 lambda: self.forge.list_reviews(number))
        return found

    def reader_login(self) -> str:
        """The login the token reads as (``/user``, ``/app`` or GraphQL ``viewer``); "" if unknown."""
        login, _ = self._attempt("GET /user (or GraphQL viewer)", "", lambda: self.forge.viewer_login("job"))
        return login or ""

    # ---- Actions -------------------------------------------------------------------------
    def run(self, run_id: int) -> WorkflowRun | None:
        """``GET …/actions/runs/{id}``."""
        run, _ = self._attempt(f"GET {self._base}/actions/runs/{run_id}", PERMISSION_ACTIONS,
                               lambda: self.forge.get_run(run_id))
        return run

    def jobs(self, run_id: int) -> tuple[list[Job] | None, ForgeError | None]:
        """``GET …/actions/runs/{id}/jobs`` (all pages), read once per run; ``(jobs, None)`` or
        ``(None, error)`` (the error's ``permanent`` verdict decides the provenance outcome)."""
        if run_id not in self._jobs:
            self._jobs[run_id] = self._attempt(f"GET {self._base}/actions/runs/{run_id}/jobs", PERMISSION_ACTIONS,
                                               lambda: self.forge.list_run_jobs(run_id))
        return self._jobs[run_id]

    def shim_runs(self, workflow_file: str, created_since: datetime) -> list[WorkflowRun] | None:
        """The watcher's own listing (docs/architecture.md "Listing"): the shim's runs created at or after
        ``created_since``, at most 4 pages of 100."""
        path = f"{self._base}/actions/workflows/{quote(workflow_file, safe='')}/runs"
        found, _ = self._attempt(f"GET {path}?created>={format_time(created_since)}", PERMISSION_ACTIONS,
                                 lambda: self.forge.list_workflow_runs(workflow_file, created_since))
        return found

    def list_repository_runs(self, created_since: datetime | None,
                             created_until: datetime | None = None) -> tuple[list[WorkflowRun] | None, bool]:
        """``GET /repos/{o}/{r}/actions/runs?created=…``: every workflow run of the repository
        created in ``[created_since, created_until]`` (either bound may be ``None``), newest first
        as GitHub lists them, at most :data:`REPO_RUN_PAGES_MAX` pages of 100.

        Returns ``(runs, capped)``: ``capped`` is true when the page cap was reached (older runs
        may be missing); ``(None, False)`` when the listing failed (recorded in :attr:`calls`).
        """
        path = f"{self._base}/actions/runs"
        created = _created_query(created_since, created_until)
        params = {"created": created} if created else {}
        label = f"GET {path}" + (f"?created={created}" if created else "")
        found, _ = self._attempt(label, PERMISSION_ACTIONS, lambda: self._run_pages(path, params))
        if found is None:
            return None, False
        rows, capped = found
        return [WorkflowRun.from_json(r) for r in rows if isinstance(r, dict)], capped

    def _run_pages(self, path: str, params: dict[str, Any]) -> tuple[list[Any], bool]:
        """Follow ``Link: rel="next"``; stop on a short page, ``total_count`` or the page cap."""
        rows: list[Any] = []
        url, query = path, {**params, "per_page": PER_PAGE}
        for _ in range(REPO_RUN_PAGES_MAX):
            resp = self._transport.request("GET", url, query)
            data = resp.data if isinstance(resp.data, dict) else {}
            page = data.get("workflow_runs")
            page = page if isinstance(page, list) else []
            rows.extend(page)
            total = data.get("total_count")
            if len(page) < PER_PAGE or (isinstance(total, int) and 0 < total <= len(rows)):
                return rows, False
            url, query = next_link(resp.headers), {}
            if not url:
                return rows, False
        return rows, True


def _created_query(since: datetime | None, until: datetime | None) -> str:
    """GitHub's ``created`` search qualifier for the bounds given ("" when neither is)."""
    if since is not None and until is not None:
        return f"{format_time(since)}..{format_time(until)}"
    if since is not None:
        return f">={format_time(since)}"
    if until is not None:
        return f"<={format_time(until)}"
    return ""
