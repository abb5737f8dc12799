"""The GitHub adapter: REST and GraphQL over the one HTTP client (``client``), implementing
``fullsend.ports.Forge`` over two credentials (docs/architecture.md "GitHub access"): the job token
for Actions reads and receipts, the role token for work-item reads and the agent's own posts.
Every answer is checked here (``wire``) and returned as a frozen ``fullsend.core.model`` record
(``records``); a malformed one is a ``MalformedResponse`` naming the endpoint and the field.  Every
request waits within its token's rate-limit policy (``ratelimit``) and the caller's bound
(:meth:`GitHubForge.bounded`).  No HTTP library's object leaves this package.  Base URLs come from
``GITHUB_API_URL`` / ``GITHUB_GRAPHQL_URL``."""

from __future__ import annotations

import copy
import re
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import quote

from fullsend.adapters.github import records, wire
from fullsend.adapters.github.client import Client, at_once
from fullsend.adapters.github.graphql import RECEIPT_VIEW_QUERY, GraphQLClient, receipt_page
from fullsend.adapters.github.issuer import read_issuer_keys
from fullsend.adapters.github.logins import INSTALLATION_PREFIX, LoginResolution
from fullsend.adapters.github.ratelimit import RateLimitPolicy, WaitBound
from fullsend.adapters.github.transport import Transport, next_link
from fullsend.core.model import (
    Comment,
    Comparison,
    Issue,
    ItemVersion,
    Job,
    PullRequest,
    Repo,
    Review,
    RunListing,
    WorkflowRun,
    latest_attempt_jobs,
)
from fullsend.core.provenance.verdicts import order_listing
from fullsend.core.report.tally import ItemComment
from fullsend.core.review import PostedReview, ReviewDraft, review_request
from fullsend.core.scalars import created_query, format_time
from fullsend.errors import ForgeError, MalformedResponse

if TYPE_CHECKING:  # annotations only: the fast skip never loads the ports
    from fullsend.ports import Clock, Credential, Log

RUN_PAGES_MAX = 4  # a poll sees at most the newest 400 shim runs
REPO_RUN_PAGES_MAX = 10  # GitHub serves at most 1,000 results of a filtered run listing
LIST_PAGES_MAX = 100  # jobs, comments, reviews
PER_PAGE = 100
P = TypeVar("P", bound=wire.Wire)


class GitHubForge(LoginResolution):
    """``Forge`` over the REST and GraphQL APIs at ``api_url`` / ``graphql_url`` for one repository.

    ``role_token`` may be empty: work-item reads then use the job token (receipts are off in
    that case anyway: docs/architecture.md "Receipt").  ``job_token`` may be empty in the agent
    stage (docs/architecture.md "Agent stage"): every read then uses the role token.  Every
    method raises ``ForgeError`` only.  A rate limit is waited out through ``clock`` for at most
    60 s per call unless :meth:`bounded` says otherwise.
    ``log`` hears one warning per field GitHub left out that no decision needs; ``client`` is the
    HTTP client (default: one reading ``os.environ``).  The fast skip builds this forge too and
    the working path goes on with it (docs/architecture.md "Fast skip").
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
        log: Log | None = None,
        client: Client | None = None,
    ) -> None:
        self.repo = repo
        self._log = log
        self._absent: set[str] = set()  # lenient fields already warned about, once per run
        if not job_token:  # the agent stage: one credential, the role token, for everything
            job_token, role_token = role_token, ""
        self._tokens = {"job": job_token, "role": role_token or job_token}
        job_policy = RateLimitPolicy(clock)
        role_policy = RateLimitPolicy(clock) if role_token else job_policy
        pool = client or Client()  # the one HTTP client: REST and GraphQL, both credentials, one pool
        self._http = {
            "job": Transport(api_url, job_token, clock, timeout_s, job_policy, pool),
            "role": Transport(api_url, role_token, clock, timeout_s, role_policy, pool) if role_token else None,
        }
        self._graphql = {
            "job": GraphQLClient(graphql_url, job_token, clock, timeout_s, job_policy, pool),
            "role": GraphQLClient(graphql_url, role_token or job_token, clock, timeout_s, role_policy, pool),
        }
        self._pool, self._timeout_s = pool, timeout_s
        self._bound = WaitBound()
        self._logins: dict[str, str] = {}
        self._integration: set[str] = set()  # credentials known to act as an App
        # The last shim listing parsed, keyed by (path, created filter, page ETags): a poll whose
        # pages all answer 304 (same ETags) reuses it instead of re-parsing up to 400 rows.
        self._parsed_listing: tuple[tuple[str, str, tuple[str, ...]], RunListing] | None = None

    def bounded(self, max_wait_s: float | None = None, until: datetime | None = None) -> GitHubForge:
        """This forge (same tokens, limits and caches) waiting out rate limits for at most
        ``max_wait_s`` seconds per call and never past ``until``; ``None`` lifts that bound."""
        view = copy.copy(self)
        view._bound = WaitBound(max_wait_s, until)
        return view

    def _noted(self, endpoint: str) -> wire.Noted:
        """What ``wire.parse`` calls for a lenient field GitHub left out: one warning per field
        per run, naming it (docs/architecture.md "GitHub access")."""

        def note(path: str) -> None:
            field = re.sub(r"\[\d+\]", "[]", path)
            if field in self._absent:
                return
            self._absent.add(field)
            if self._log is not None:
                self._log(
                    "warning",
                    f"GitHub's answer to {endpoint} has no {field}; no decision needs it, so the run goes on",
                )

        return note

    def _t(self, credential: Credential) -> Transport:
        return self._http.get(credential) or self._http["job"]  # type: ignore[return-value]  # "job" is always set

    def _gql(self, credential: Credential) -> GraphQLClient:
        return self._graphql[credential]

    @property
    def _base(self) -> str:
        return f"/repos/{quote(self.repo.owner, safe='')}/{quote(self.repo.name, safe='')}"

    def _get(
        self,
        model: type[P],
        credential: Credential,
        path: str,
        params: dict[str, Any] | None = None,
        conditional: bool = False,
    ) -> P:
        data = self._t(credential).request("GET", path, params, conditional=conditional, bound=self._bound).data
        return wire.parse(model, data, f"GET {path}", noted=self._noted(f"GET {path}"))

    def _pages(
        self,
        credential: Credential,
        path: str,
        params: dict[str, Any],
        item: type[P],
        envelope: tuple[type[wire.Wire], str] | None,
        max_pages: int,
    ) -> list[P]:
        """Follow Link ``rel=next`` up to ``max_pages`` while pages are full (``total_count`` is
        not trusted: GitHub's can understate the list).  Each page is checked whole."""
        return self._walk(credential, path, params, item, envelope, max_pages)[0]

    def _walk(
        self,
        credential: Credential,
        path: str,
        params: dict[str, Any],
        item: type[P],
        envelope: tuple[type[wire.Wire], str] | None,
        max_pages: int,
    ) -> tuple[list[P], bool]:
        """``(items, capped)`` of :meth:`_pages`; ``capped`` when ``max_pages`` full pages were
        read and GitHub still announced a next one."""
        pages, capped = self._fetch(credential, path, params, envelope[1] if envelope else None, max_pages)
        return self._parse_pages(pages, item, envelope), capped

    def _fetch(
        self,
        credential: Credential,
        path: str,
        params: dict[str, Any],
        key: str | None,
        max_pages: int,
        etags: list[str] | None = None,
    ) -> tuple[list[tuple[str, Any]], bool]:
        """The raw pages, ``[(endpoint, JSON)]``, and whether ``max_pages`` full pages were read
        with a next one announced.  A page is full when its array (``key`` of an envelope, or the
        body) holds 100 items; ``etags``, when given, receives each page's ETag ("" for none)."""
        pages: list[tuple[str, Any]] = []
        url, query = path, dict(params, per_page=PER_PAGE)
        for _ in range(max_pages):
            resp = self._t(credential).request("GET", url, query, conditional=True, bound=self._bound)
            if etags is not None:
                etags.append(resp.headers.get("etag", ""))
            pages.append((f"GET {url}", resp.data))
            rows = resp.data.get(key) if key and isinstance(resp.data, dict) else resp.data
            url, query = next_link(resp.headers), {}
            if not isinstance(rows, list) or len(rows) < PER_PAGE or not url:
                return pages, False
        return pages, True

    def _parse_pages(
        self, pages: list[tuple[str, Any]], item: type[P], envelope: tuple[type[wire.Wire], str] | None
    ) -> list[P]:
        """Every page checked whole at the seam; ``MalformedResponse`` names the page and the field."""
        items: list[P] = []
        for endpoint, data in pages:
            if envelope is not None:
                items.extend(getattr(wire.parse(envelope[0], data, endpoint, noted=self._noted(endpoint)), envelope[1]))
            else:
                items.extend(wire.parse_list(item, data, endpoint, noted=self._noted(endpoint)))
        return items

    # ---- Actions reads (job token) -------------------------------------------------------
    def get_run(self, run_id: int) -> WorkflowRun:
        """``GET /repos/{o}/{r}/actions/runs/{id}``."""
        return records.run_record(self._get(wire.WorkflowRun, "job", f"{self._base}/actions/runs/{run_id}"), self.repo)

    def list_run_jobs(self, run_id: int) -> list[Job]:
        """The jobs of every attempt of a run (``filter=all``, ≤ 100 pages of 100), each job name's
        record from the latest attempt that ran it (after "re-run failed jobs" the Route
        job of attempt 1 is still the run's Route job; docs/architecture.md "Provenance")."""
        path = f"{self._base}/actions/runs/{run_id}/jobs"
        rows = self._pages("job", path, {"filter": "all"}, wire.Job, (wire.JobsPage, "jobs"), LIST_PAGES_MAX)
        return latest_attempt_jobs([records.job_record(j) for j in rows])

    def list_workflow_runs(self, workflow_file: str, created_since: datetime) -> RunListing:
        """The shim's runs with ``created>=<since>``, ≤ 4 pages, oldest first; a run read twice
        (the listing shifted between page reads) is kept once by ``core``'s ``order_listing``;
        ``capped`` when the 4 pages were full.  A poll whose pages carry the ETags of the last
        parse (all 304s) returns that listing again, without checking or converting a row again."""
        path = f"{self._base}/actions/workflows/{quote(workflow_file, safe='')}/runs"
        created, etags = ">=" + format_time(created_since), list[str]()
        pages, _ = self._fetch("job", path, {"created": created}, "workflow_runs", RUN_PAGES_MAX, etags)
        key = (path, created, tuple(etags))
        parsed = self._parsed_listing
        if parsed is None or parsed[0] != key or not all(etags):
            rows = self._parse_pages(pages, wire.WorkflowRun, (wire.WorkflowRunsPage, "workflow_runs"))
            listing = RunListing(
                tuple(order_listing(records.run_record(row, self.repo) for row in rows)),
                capped=len(rows) >= RUN_PAGES_MAX * PER_PAGE,
            )
            parsed = self._parsed_listing = (key, listing)
        return parsed[1]  # immutable: the cached listing is the caller's too

    def list_repository_runs(
        self, created_since: datetime | None, created_until: datetime | None = None
    ) -> tuple[list[WorkflowRun], bool]:
        """``GET …/actions/runs?created=…``: ``(runs, capped)``, ≤ 10 pages, newest first as
        GitHub lists them (``fullsend.ports.Forge.list_repository_runs``)."""
        created = created_query(created_since, created_until)
        rows, capped = self._walk(
            "job",
            f"{self._base}/actions/runs",
            {"created": created} if created else {},
            wire.WorkflowRun,
            (wire.WorkflowRunsPage, "workflow_runs"),
            REPO_RUN_PAGES_MAX,
        )
        return [records.run_record(r, self.repo) for r in rows], capped

    def collaborator_role(self, login: str) -> str:
        """``GET …/collaborators/{login}/permission`` under the job token (the metadata access every
        job token has): the login's ``role_name``.  ``NotFoundError`` when GitHub knows no such
        collaborator or user; ``ForgeError`` otherwise."""
        path = f"{self._base}/collaborators/{quote(login, safe='')}/permission"
        return self._get(wire.CollaboratorPermission, "job", path).role_name

    # ---- work-item reads (role token) ----------------------------------------------------
    def get_pull_request(self, number: int) -> PullRequest:
        """``GET …/pulls/{n}``; ``NotFoundError`` means the item is an issue."""
        path = f"{self._base}/pulls/{number}"
        return records.pull_record(self._get(wire.PullRequest, "role", path, conditional=True))

    def get_issue(self, number: int) -> Issue:
        """``GET …/issues/{n}`` (served for pull requests too)."""
        return records.issue_record(self._get(wire.Issue, "role", f"{self._base}/issues/{number}", conditional=True))

    def item_version(self, number: int, pull_request: bool) -> ItemVersion:
        """``GET …/issues/{n}`` and, for a pull request, ``GET …/pulls/{n}``, both conditional
        (a 304 is free; the same ETag cache as :meth:`get_issue`/:meth:`get_pull_request`):
        their ETags and the fields an event of the shim changes (``records.item_version``), and
        the newest ``updated_at`` (``None`` when a record lacks one)."""
        paths = [f"{self._base}/issues/{number}"] + ([f"{self._base}/pulls/{number}"] if pull_request else [])
        parts, times = [], []
        for path in paths:
            resp = self._t("role").request("GET", path, None, conditional=True, bound=self._bound)
            parts.append(records.item_version(resp.headers.get("etag", ""), resp.data))
            times.append(records.item_updated_at(resp.data))
        known = [t for t in times if t is not None]
        return ItemVersion("\n".join(parts), max(known) if len(known) == len(times) else None)

    def list_issue_comments(
        self, number: int, since: datetime | None = None, credential: Credential = "role"
    ) -> list[Comment]:
        """Every comment (``since`` = updated_at filter), ≤ 100 pages, oldest first."""
        params = {"since": format_time(since)} if since else {}
        rows = self._pages(
            credential, f"{self._base}/issues/{number}/comments", params, wire.IssueComment, None, LIST_PAGES_MAX
        )
        return [records.comment_record(c) for c in rows]

    def list_review_comments(self, number: int, since: datetime | None = None) -> list[Comment]:
        """``GET …/pulls/{n}/comments``: every comment of the pull request's review threads
        (``since`` = updated_at filter), ≤ 100 pages, oldest first, each ``in_thread``."""
        params = {"since": format_time(since)} if since else {}
        path = f"{self._base}/pulls/{number}/comments"
        rows = self._pages("role", path, params, wire.ReviewComment, None, LIST_PAGES_MAX)
        return [records.review_comment_record(c) for c in rows]

    def list_repository_comments(self, since: datetime) -> tuple[list[ItemComment], bool]:
        """``GET …/issues/comments?since=…&sort=created&direction=asc``: ``(comments, capped)``,
        every issue and pull-request comment of the repository updated at/after ``since``, oldest
        first, ≤ 100 pages of 100; ``capped`` when the cap was reached (later ones are missing)."""
        params = {"since": format_time(since), "sort": "created", "direction": "asc"}
        path = f"{self._base}/issues/comments"
        rows, capped = self._walk("role", path, params, wire.RepositoryComment, None, LIST_PAGES_MAX)
        return [records.item_comment_record(c) for c in rows], capped

    def list_reviews(self, number: int) -> list[Review]:
        """Every review of a pull request, ≤ 100 pages."""
        rows = self._pages("role", f"{self._base}/pulls/{number}/reviews", {}, wire.Review, None, LIST_PAGES_MAX)
        return [records.review_record(r) for r in rows]

    def compare(self, base: str, head: str) -> Comparison:
        """``GET …/compare/{base}...{head}?per_page=1`` (both path-escaped, WIRE)."""
        path = f"{self._base}/compare/{quote(base, safe='')}...{quote(head, safe='')}"
        return records.comparison_record(self._get(wire.Comparison, "role", path, {"per_page": 1}))

    def receipt_view(self, number: int) -> tuple[str, list[Comment]]:
        """The job token's login and every comment of the item with GraphQL's ``lastEditedAt``, one
        request per 100 comments (docs/rules.md#receipt-lists-my-run).  The viewer login read alongside
        counts only for an installation token (``ghs_``, spelled ``name[bot]``; others resolve as
        :meth:`viewer_login` does).  The role token's login is resolved beside the first page (one round
        trip; its failure is met later).  Raises ``ForgeError`` when GraphQL cannot answer."""
        comments: list[Comment] = []
        cursor, login = "", ""
        for page in range(LIST_PAGES_MAX):
            variables = {"owner": self.repo.owner, "name": self.repo.name, "number": number, "after": cursor or None}
            ask = partial(self._gql("job").query, "receipt view", RECEIPT_VIEW_QUERY, variables, self._bound)
            data = cast("dict[str, Any]", at_once(ask, self._role_login_quietly)[0]) if page == 0 else ask()
            login, found, cursor = receipt_page(data, "GraphQL receipt view", self._noted("GraphQL receipt view"))
            comments.extend(found)
            if not cursor:
                break
        if "job" in self._logins or not self._tokens["job"].startswith(INSTALLATION_PREFIX):
            return self.viewer_login("job"), comments  # only an installation token's kind is known here
        self._logins["job"] = self.app_spelling("job", login)
        return self._logins["job"], comments

    def _role_login_quietly(self) -> None:
        """Resolve the role token's login now (kept by :meth:`viewer_login`); a failure is met later."""
        if self._tokens["role"] != self._tokens["job"]:
            try:
                self.viewer_login("role")
            except ForgeError:
                pass

    # ---- writes (repeated only after a rate-limited answer) ---------------------------------
    def default_branch(self) -> str:
        """``GET /repos/{o}/{r}`` ``.default_branch`` (role token); ``MalformedResponse`` when it is not a string."""
        data = self._t("role").request("GET", self._base, None, bound=self._bound).data
        branch = data.get("default_branch") if isinstance(data, dict) else None
        if not isinstance(branch, str) or not branch:
            raise MalformedResponse(f"GET {self._base}", "default_branch", "missing or not a string")
        return branch

    def issuer_keys(self, url: str) -> dict[str, Any]:
        """The OIDC issuer's key set at ``url``, read with no credential (``issuer.read_issuer_keys``)."""
        return read_issuer_keys(self._pool, url, self._timeout_s)

    def post_comment(self, number: int, body: str, credential: Credential = "role") -> Comment:
        """``POST …/issues/{n}/comments``; returns the created comment as the API reports it.

        Raises ``MalformedResponse`` with the 2xx ``status`` when the comment was created but the
        answer does not describe it (the caller knows it was posted, not where).
        """
        path = f"{self._base}/issues/{number}/comments"
        resp = self._t(credential).request("POST", path, body={"body": body}, bound=self._bound)
        return records.comment_record(
            wire.parse(wire.IssueComment, resp.data, f"POST {path}", resp.status, self._noted(f"POST {path}"))
        )

    def post_review(self, number: int, draft: ReviewDraft) -> PostedReview:
        """``POST …/pulls/{n}/reviews`` under the role token (``review_request``: texts neutralised).
        Raises ``ForgeError``: a 422 when GitHub refuses a line comment (not in the diff), and
        ``MalformedResponse`` with the 2xx ``status`` when the review was made but the answer does
        not describe it."""
        path = f"{self._base}/pulls/{number}/reviews"
        resp = self._t("role").request("POST", path, body=review_request(draft), bound=self._bound)
        answer = wire.parse(wire.PostedReview, resp.data, f"POST {path}", resp.status, self._noted(f"POST {path}"))
        return PostedReview(answer.id, answer.state, answer.html_url)

    def edit_comment(self, comment_id: int, body: str, credential: Credential = "role") -> Comment:
        """``PATCH …/issues/comments/{id}``; ``MalformedResponse`` (2xx status) as for a post."""
        path = f"{self._base}/issues/comments/{comment_id}"
        resp = self._t(credential).request("PATCH", path, body={"body": body}, bound=self._bound)
        return records.comment_record(
            wire.parse(wire.IssueComment, resp.data, f"PATCH {path}", resp.status, self._noted(f"PATCH {path}"))
        )
