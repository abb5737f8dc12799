"""A pull-request review with line comments, as the agent asks for it (docs/architecture.md "Review helper").

The records ``fullsend review`` hands the ``Forge`` port; the request body is GitHub's
``POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews`` (WIRE field names).  Agent-written text
is neutralised (``fullsend.core.receipt.marker.neutralize``) before it is posted, so no review can
carry a receipt's or a status comment's marker.  Pure: standard library and ``fullsend.core``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from fullsend.core.receipt.marker import neutralize

Event = Literal["COMMENT", "APPROVE", "REQUEST_CHANGES"]
Side = Literal["LEFT", "RIGHT"]


@dataclass(frozen=True)
class LineComment:
    """A comment on ``line`` (1-based) of ``path`` in the diff; ``start_line`` makes it a range;
    ``side`` ``RIGHT`` is the new version of the file, ``LEFT`` the old."""

    path: str
    line: int
    body: str
    side: Side = "RIGHT"
    start_line: int | None = None


@dataclass(frozen=True)
class ReviewDraft:
    """One review: its ``body``, ``event`` and line ``comments``, on commit ``commit_id``."""

    commit_id: str
    body: str
    event: Event = "COMMENT"
    comments: tuple[LineComment, ...] = ()


def _comment_json(comment: LineComment) -> dict[str, Any]:
    out: dict[str, Any] = {
        "path": comment.path,
        "line": comment.line,
        "side": comment.side,
        "body": neutralize(comment.body),
    }
    if comment.start_line is not None:
        out |= {"start_line": comment.start_line, "start_side": comment.side}
    return out


def review_request(draft: ReviewDraft) -> dict[str, Any]:
    """The request body (WIRE): ``commit_id``, ``body``, ``event``, ``comments[]``; texts neutralised."""
    return {
        "commit_id": draft.commit_id,
        "body": neutralize(draft.body),
        "event": draft.event,
        "comments": [_comment_json(c) for c in draft.comments],
    }


@dataclass(frozen=True)
class PostedReview:
    """What GitHub answered for a posted review: its ``id``, ``state`` and ``html_url``."""

    id: int
    state: str
    html_url: str
