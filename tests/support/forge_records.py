"""Builders for the envelope tests: times on 2026-09-03 UTC, comments, reviews, runs, states."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from fullsend.core.delta.records import BaselineState, ForgeSnapshot
from fullsend.core.model import Comment, Issue, Review, WorkflowRun
from fullsend.core.provenance.binding import Authorization
from fullsend.core.wire import FENCE_CLOSE, FENCE_OPEN

#: SelfLogins of the shared fixture FIX.
FIX_SELF = frozenset({"fullsend-ai-review[bot]"})


def at(hhmmss: str, day: str = "2026-09-03") -> datetime:
    """``at("10:05")`` / ``at("10:05:03")`` → aware UTC instant on ``day``."""
    if hhmmss.count(":") == 1:
        hhmmss += ":00"
    return datetime.fromisoformat(f"{day}T{hhmmss}+00:00").astimezone(UTC)


def comment(cid: int, author: str, body: str, created: str, updated: str | None = None, app: bool = False) -> Comment:
    """A comment; ``updated`` defaults to ``created`` (unedited)."""
    c_at = at(created)
    return Comment(
        id=cid,
        body=body,
        author=author,
        author_type="Bot" if app else "User",
        created_at=c_at,
        updated_at=at(updated) if updated else c_at,
    )


def review(rid: int, author: str, state: str, body: str, submitted: str, app: bool = False) -> Review:
    return Review(
        id=rid, author=author, author_type="Bot" if app else "User", state=state, body=body, submitted_at=at(submitted)
    )


def auth(login: str, run_id: int, until: str, comment_id: int = 0) -> Authorization:
    """``auth(reviewer,55,T)``: an authorization for ``login``, run ``run_id``, Until T."""
    return Authorization(run_id, at(until), comment_id, login.lower())


def run(
    rid: int,
    event: str = "issue_comment",
    actor: str = "reviewer",
    created: str = "10:05:03",
    title: str = "org/repo#7",
    attempt: int = 1,
) -> WorkflowRun:
    return WorkflowRun(
        id=rid,
        event=event,
        actor=actor,
        triggering_actor=actor,
        created_at=at(created),
        display_title=title,
        run_attempt=attempt,
        path=".github/workflows/fullsend.yml",
    )


def pr_state(last_head: str = "aaa111", since: str = "10:00", labels: tuple[str, ...] = ()) -> BaselineState:
    """The PR fixture of FIX: baseline 10:00:00, lastHead aaa111."""
    return BaselineState(at(since), True, last_head, labels)


def issue_state(
    title: str = "Old title", body: str = "Old body", labels=("bug", "p1"), since: str = "10:00"
) -> BaselineState:
    return BaselineState(at(since), False, "", tuple(sorted(labels)), title, body)


def issue(title: str = "", body: str = "", labels=(), pr: bool = False) -> Issue:
    return Issue(number=7, title=title, body=body, labels=tuple(sorted(labels)), is_pull_request=pr)


def pr_snap(head: str = "aaa111", comments=(), reviews=(), iss: Issue | None = None, **kw) -> ForgeSnapshot:
    """PR reads of FIX: compare → 404 unless given (``compare_error="not-found"``)."""
    kw.setdefault("compare_error", "not-found")
    return ForgeSnapshot(comments=list(comments), issue=iss, head_sha=head, reviews=list(reviews), **kw)


def section(text: str, start: str, end: str | None) -> str:
    """The part of ``text`` between the first ``start`` and the next ``end`` (or the end)."""
    i = text.index(start) + len(start)
    j = text.find(end, i) if end else -1
    return text[i:] if j < 0 else text[i:j]


def fenced(text: str) -> tuple[str, str, str]:
    """(before, inside, after) the runner's fences; fails the test unless there is exactly one pair."""
    assert text.count(FENCE_OPEN) == 1 and text.count(FENCE_CLOSE) == 1, text
    before, rest = text.split(FENCE_OPEN)
    inside, after = rest.split(FENCE_CLOSE)
    return before, inside, after


def count_lines_starting(text: str, prefix: str) -> int:
    return sum(1 for line in text.split("\n") if line.startswith(prefix))


#: Independent check that a line reads as a structural token (spaces/tabs and simple markers).
_SIMPLE_LEAD = r"^[ \t]*(?:(?:[>*+_~|`\-]|#{1,6})[ \t]*)*"
_LIVE_ATTRIBUTION = re.compile(_SIMPLE_LEAD + r"instruction from @|\|[ \t]*instruction from @", re.I | re.M)
_LIVE_HEADING = re.compile(
    r"^(?!> )[ \t]*(?:#{1,6}[ \t]*)?(?:amendments[ \t#*_~|`]*$|work-item context(?![A-Za-z0-9_]))", re.I | re.M
)


def live_tokens(text: str) -> list[str]:
    """Lines of ``text`` that read as an attribution or a heading (empty when none)."""
    return [m.group(0) for m in _LIVE_ATTRIBUTION.finditer(text)] + [m.group(0) for m in _LIVE_HEADING.finditer(text)]
