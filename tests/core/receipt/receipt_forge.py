"""Fixtures for the receipt / pre-flight tests: spec notation helpers and a small fake Forge."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fullsend.core.model import Comment, PullRequest, Review, WorkflowRun
from fullsend.core.scalars import parse_time
from fullsend.errors import ForgeError

R = "github-actions[bot]"  # the receipt's login
A = "fullsend[bot]"  # role / App login
HUMAN = "_The run already working on this item absorbed follow-up run(s) {}, so a run queued for those events exits without repeating the work._"


def M(ids: str, head: str) -> str:
    """``M(ids,head)``: the WIRE marker with ``ids`` verbatim (e.g. ``"101,102"``)."""
    return f"<!-- fullsend:steer consumed={ids} head={head} -->"


def RB(ids: str, head: str) -> str:
    """``R(ids,head)``: the whole WIRE receipt body."""
    return M(ids, head) + "\n" + HUMAN.format(", ".join(ids.split(",")))


def comment(
    body: str,
    login: str = R,
    user_type: str = "Bot",
    created: str = "2026-09-25T10:00:00Z",
    updated: str | None = None,
    cid: int = 1,
) -> Comment:
    """A comment as the forge reports it, unedited unless ``updated`` says otherwise; a time that
    is not RFC 3339 (``""``) is unknown (``None``) with its raw string kept."""
    updated_raw = created if updated is None else updated
    return Comment(
        id=cid,
        body=body,
        author=login,
        author_type=user_type,
        created_at=parse_time(created),
        updated_at=parse_time(updated_raw),
        created_at_raw=created,
        updated_at_raw=updated_raw,
        html_url=f"https://github.com/org/repo/issues/7#issuecomment-{cid}",
    )


def review(
    login: str = "org-review[bot]",
    user_type: str = "Bot",
    state: str = "APPROVED",
    commit: str = "f3af8c5a" + "0" * 32,
    submitted: str = "2026-09-23T16:30:00Z",
    rid: int = 1,
) -> Review:
    return Review(
        id=rid,
        author=login,
        author_type=user_type,
        state=state,
        body="",
        submitted_at=parse_time(submitted),
        commit_id=commit,
    )


@dataclass
class FakeForge:
    """Implements the parts of ``fullsend.ports.Forge`` the pre-flight and writer use.

    Each configured value may be an exception instance, raised when read.  ``calls`` records
    ``(method, args, credential)`` in order.
    """

    logins: dict[str, Any] = field(default_factory=lambda: {"job": R, "role": A})
    comments: Any = field(default_factory=list)
    run: Any = None
    pr_head: Any = ""
    reviews: Any = field(default_factory=list)
    post_result: Any = None
    view: Any = field(default_factory=lambda: ForgeError("GraphQL is not available here"))
    calls: list[tuple[str, Any, str]] = field(default_factory=list)
    bounds: list[tuple[float | None, datetime | None]] = field(default_factory=list)
    posted: list[tuple[int, str, str]] = field(default_factory=list)

    @staticmethod
    def _give(value: Any) -> Any:
        if isinstance(value, BaseException):
            raise value
        return value

    def bounded(self, max_wait_s: float | None = None, until: datetime | None = None) -> FakeForge:
        self.bounds.append((max_wait_s, until))
        return self

    def receipt_view(self, number: int) -> tuple[str, list[Comment]]:
        """GraphQL's receipt view: ``view`` is ``(login, comments)`` or an exception (default:
        GraphQL unavailable, so the pre-flight reads over REST)."""
        self.calls.append(("receipt_view", number, "job"))
        login, comments = self._give(self.view)
        return login, list(comments)

    def viewer_login(self, credential: str) -> str:
        self.calls.append(("viewer_login", None, credential))
        return self._give(self.logins[credential])

    def list_issue_comments(
        self, number: int, since: datetime | None = None, credential: str = "role"
    ) -> list[Comment]:
        self.calls.append(("list_issue_comments", number, credential))
        return list(self._give(self.comments))

    def get_run(self, run_id: int) -> WorkflowRun:
        self.calls.append(("get_run", run_id, "job"))
        return self._give(self.run)

    def get_pull_request(self, number: int) -> PullRequest:
        self.calls.append(("get_pull_request", number, "role"))
        return PullRequest(number=number, head_sha=self._give(self.pr_head))

    def list_reviews(self, number: int) -> list[Review]:
        self.calls.append(("list_reviews", number, "role"))
        return list(self._give(self.reviews))

    def post_comment(self, number: int, body: str, credential: str = "role") -> Comment:
        self.calls.append(("post_comment", number, credential))
        self.posted.append((number, body, credential))
        result = self._give(self.post_result)
        return result

    def get_issue(self, number: int) -> Any:  # pragma: no cover - not used by the pre-flight
        raise AssertionError("the pre-flight never reads the issue")


def forbidden(status: int = 403, message: str = "Resource not accessible by integration") -> ForgeError:
    return ForgeError(f"{status} {message}", status)


@dataclass
class LogSink:
    """Collects ``log(level, message)`` lines."""

    lines: list[tuple[str, str]] = field(default_factory=list)

    def __call__(self, level: str, message: str) -> None:
        self.lines.append((level, message))

    @property
    def text(self) -> str:
        return "\n".join(f"{level}: {message}" for level, message in self.lines)
