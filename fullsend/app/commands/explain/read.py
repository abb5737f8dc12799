"""Read-only forge access for ``fullsend explain``: every call is recorded, none can stop the report.

Every read goes through the ``fullsend.ports.Forge`` port (the command hands in a
``GitHubForge`` with one token as both credentials).  Only ``GET`` requests are made, plus the
GraphQL ``viewer`` query when the login is resolved; nothing is ever posted.  A failed call is
recorded as a :class:`~fullsend.app.commands.explain.model.CallReport` naming the missing
permission on a 403, and the reader raises :class:`ReadFailed`: a report built on a read that
failed would state what it could not know ("Comments: none"), so the command stops there and says
which read failed (a 404 the caller expects, such as ``GET …/pulls/{n}`` of an issue, is an answer,
not a failure).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import NoReturn, TypeVar
from urllib.parse import quote

from fullsend.app.commands.explain.model import CallReport
from fullsend.app.commands.proofs import OfflineProofs
from fullsend.core.model import Comment, Issue, Job, PullRequest, Repo, Review, WorkflowRun
from fullsend.core.scalars import created_query, format_time
from fullsend.errors import ForgeError, NotFoundError
from fullsend.ports import Forge

T = TypeVar("T")

#: The permission a read needs, named in the report when GitHub answers 403.
PERMISSION_ACTIONS = "actions: read"
PERMISSION_ISSUES = "issues: read"
PERMISSION_PULLS = "pull-requests: read"


class ReadFailed(Exception):
    """A read of ``fullsend explain`` failed; ``report`` is its recorded :class:`CallReport`."""

    def __init__(self, report: CallReport) -> None:
        self.report = report
        super().__init__(f"{report.call}: {report.detail}")


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

    ``forge`` serves ``repo`` with one read token as both the job and the role credential.
    """

    def __init__(
        self, repo: Repo, forge: Forge, proofs: OfflineProofs | None = None, allow_unsigned: bool = False
    ) -> None:
        self.repo = repo
        self.forge = forge
        #: How a receipt's proof is checked (docs/rules.md "Receipt proof"): ``None`` checks none.
        self.proofs, self.allow_unsigned = proofs, allow_unsigned
        self.calls: list[CallReport] = []
        self._jobs: dict[int, tuple[list[Job] | None, ForgeError | None]] = {}

    @property
    def _base(self) -> str:
        return f"/repos/{quote(self.repo.owner, safe='')}/{quote(self.repo.name, safe='')}"

    def _attempt(
        self, call: str, permission: str, read: Callable[[], T], *, not_found_ok: bool = False
    ) -> tuple[T | None, ForgeError | None]:
        """Run one read; record it; return ``(value, None)``, or ``(None, error)`` for a 404 the
        caller expects (``not_found_ok``).  Raises :class:`ReadFailed` for any other failure."""
        try:
            value = read()
        except NotFoundError as exc:
            if not not_found_ok:
                self._failed(CallReport(call, False, 404, f"{exc} ({_hint(404, permission)})"))
            self.calls.append(CallReport(call, True, 404, "404: not found"))
            return None, exc
        except ForgeError as exc:
            hint = _hint(exc.status, permission)
            self._failed(CallReport(call, False, exc.status, f"{exc}" + (f" ({hint})" if hint else "")))
        self.calls.append(CallReport(call, True, 200))
        return value, None

    def _failed(self, report: CallReport) -> NoReturn:
        self.calls.append(report)
        raise ReadFailed(report)

    # ---- the item ------------------------------------------------------------------------
    def item(self, number: int) -> tuple[Issue | None, datetime | None]:
        """``GET /repos/{o}/{r}/issues/{n}``: the issue record (served for pull requests too) and
        its ``created_at`` (``None`` when unknown)."""
        issue, _ = self._attempt(
            f"GET {self._base}/issues/{number}", PERMISSION_ISSUES, lambda: self.forge.get_issue(number)
        )
        return issue, issue.created_at if issue is not None else None

    def pull_request(self, number: int) -> tuple[PullRequest | None, bool]:
        """``GET …/pulls/{n}``: ``(record, known)``; a 404 is ``(None, True)``: the item is an issue."""
        pr, err = self._attempt(
            f"GET {self._base}/pulls/{number}",
            PERMISSION_PULLS,
            lambda: self.forge.get_pull_request(number),
            not_found_ok=True,
        )
        return pr, pr is not None or isinstance(err, NotFoundError)

    def comments(self, number: int) -> list[Comment] | None:
        """Every comment of the item, oldest first (``GET …/issues/{n}/comments``, all pages)."""
        found, _ = self._attempt(
            f"GET {self._base}/issues/{number}/comments",
            PERMISSION_ISSUES,
            lambda: self.forge.list_issue_comments(number),
        )
        return found

    def reviews(self, number: int) -> list[Review] | None:
        """Every review of a pull request (``GET …/pulls/{n}/reviews``, all pages)."""
        found, _ = self._attempt(
            f"GET {self._base}/pulls/{number}/reviews", PERMISSION_PULLS, lambda: self.forge.list_reviews(number)
        )
        return found

    def review_comments(self, number: int) -> list[Comment] | None:
        """Every comment of a pull request's review threads, oldest first (``GET …/pulls/{n}/comments``,
        all pages): the watcher's read for a ``review_comment:<id>`` run (docs/architecture.md "Delta")."""
        found, _ = self._attempt(
            f"GET {self._base}/pulls/{number}/comments",
            PERMISSION_PULLS,
            lambda: self.forge.list_review_comments(number),
        )
        return found

    def reader_login(self) -> str:
        """The login the token reads as (``/user``, ``/app`` or GraphQL ``viewer``); "" if unknown."""
        login, _ = self._attempt("GET /user (or GraphQL viewer)", "", lambda: self.forge.viewer_login("job"))
        return login or ""

    # ---- Actions -------------------------------------------------------------------------
    def run(self, run_id: int) -> WorkflowRun | None:
        """``GET …/actions/runs/{id}``."""
        run, _ = self._attempt(
            f"GET {self._base}/actions/runs/{run_id}", PERMISSION_ACTIONS, lambda: self.forge.get_run(run_id)
        )
        return run

    def jobs(self, run_id: int) -> tuple[list[Job] | None, ForgeError | None]:
        """``GET …/actions/runs/{id}/jobs`` (all pages), read once per run; ``(jobs, None)`` or
        ``(None, error)`` (the error's ``permanent`` verdict decides the provenance outcome)."""
        if run_id not in self._jobs:
            self._jobs[run_id] = self._attempt(
                f"GET {self._base}/actions/runs/{run_id}/jobs",
                PERMISSION_ACTIONS,
                lambda: self.forge.list_run_jobs(run_id),
            )
        return self._jobs[run_id]

    def shim_runs(self, workflow_file: str, created_since: datetime) -> list[WorkflowRun] | None:
        """The watcher's own listing (docs/architecture.md "Listing"): the shim's runs created at or after
        ``created_since``, at most 4 pages of 100."""
        path = f"{self._base}/actions/workflows/{quote(workflow_file, safe='')}/runs"
        found, _ = self._attempt(
            f"GET {path}?created>={format_time(created_since)}",
            PERMISSION_ACTIONS,
            lambda: list(self.forge.list_workflow_runs(workflow_file, created_since).runs),
        )
        return found

    def list_repository_runs(
        self, created_since: datetime | None, created_until: datetime | None = None
    ) -> tuple[list[WorkflowRun] | None, bool]:
        """``GET /repos/{o}/{r}/actions/runs?created=…``: every workflow run of the repository
        created in ``[created_since, created_until]`` (either bound may be ``None``), newest first
        as GitHub lists them, at most 10 pages of 100 (``Forge.list_repository_runs``).

        Returns ``(runs, capped)``: ``capped`` is true when the page cap was reached (older runs
        may be missing); ``(None, False)`` when the listing failed (recorded in :attr:`calls`).
        """
        created = created_query(created_since, created_until)
        label = f"GET {self._base}/actions/runs" + (f"?created={created}" if created else "")
        found, _ = self._attempt(
            label, PERMISSION_ACTIONS, lambda: self.forge.list_repository_runs(created_since, created_until)
        )
        if found is None:
            return None, False
        return found
