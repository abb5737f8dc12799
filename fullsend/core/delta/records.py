"""Records of the delta: the baseline, what the app read, the delta itself, the built text.

Shapes only; the logic is in ``fullsend.core.delta.changes`` (docs/architecture.md "Delta") and
``fullsend.core.text.steertext`` (docs/architecture.md "Steer text").  All records are frozen; times
are aware UTC ``datetime`` or ``None`` (unknown).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from fullsend.core.model import Comment, Comparison, Issue, Review

KIND_COMMENT = "comment"
KIND_REVIEW = "review"
KIND_HEAD = "head"
KIND_STATE = "state"
#: A comment in a review thread (its file and line ride along); and the note saying where a
#: review thread's instruction was written, a context line of its own.
KIND_THREAD = "review_comment"
KIND_SPOT = "thread_spot"


@dataclass(frozen=True)
class BaselineState:
    """State that defines the baseline.

    ``since``: the delta window start (my run's ``created_at`` or the carried baseline's, then each
    delivered snapshot instant).  ``last_head``: the head SHA the agent was last told about (PR;
    "" for an issue).  ``labels`` (sorted), ``title``, ``body``: the content snapshot.
    ``delivered_comment_ids`` / ``delivered_review_ids``: what already reached the agent (and my
    own run's triggering comment), excluded by identity: GitHub stamps comments and reviews to
    the second, so the window opens at ``since``'s second, inclusively
    (docs/architecture.md "Delta").
    """

    since: datetime
    is_pull_request: bool
    last_head: str = ""
    labels: tuple[str, ...] = ()
    title: str = ""
    body: str = ""
    delivered_comment_ids: frozenset[int] = frozenset()
    delivered_review_ids: frozenset[int] = frozenset()
    delivered_thread_ids: frozenset[int] = frozenset()


@dataclass(frozen=True)
class ForgeSnapshot:
    """What the app read from the forge for one delta.

    ``comments``: issue comments listed with ``since = state.since``, in listing order.
    ``issue``: ``GET …/issues/{n}`` (labels for a PR; title/body/labels for an issue), ``None`` if
    not read.  ``head_sha``: the PR's current head ("" for an issue).  ``reviews``: the PR's
    reviews.  ``comparison`` / ``compare_error``: the compare read, made only when
    ``needs_compare`` said so; ``compare_error`` is ``"not-found"``, ``"not-supported"``,
    ``"error"`` or ``""``.  ``thread_comments``: the PR's review-thread comments (``in_thread``).
    """

    comments: Sequence[Comment]
    issue: Issue | None
    head_sha: str = ""
    reviews: Sequence[Review] = ()
    comparison: Comparison | None = None
    compare_error: str = ""
    thread_comments: Sequence[Comment] = ()


@dataclass(frozen=True)
class DeltaItem:
    """One item of the delta.

    ``kind``: ``comment`` | ``review`` | ``review_comment`` | ``thread_spot`` | ``head`` |
    ``state``; a review-thread comment carries its file ``path`` and ``line`` (0: the whole
    file).  ``author`` and ``state`` (review state) are forge values as written; ``at`` is the
    binding time (comments) or ``submitted_at`` (reviews).  An amendment has ``run_ids`` (bound
    runs, ascending) and an ``instruction`` ("" when the comment renders as a plain body).
    """

    kind: str
    body: str
    author: str = ""
    state: str = ""
    at: datetime | None = None
    id: int = 0
    run_ids: tuple[int, ...] = ()
    instruction: str = ""
    path: str = ""
    line: int = 0


@dataclass(frozen=True)
class Delta:
    """What changed on the work item since the baseline.

    ``context`` order: PR → head, comments, reviews, labels; issue → comments, title, body,
    labels (state items last).  ``unbound``: authorized run ids bound to no comment, ascending.
    ``issue``: the issue record read for this delta (for :func:`fullsend.core.delta.changes.advance`).
    """

    amendments: tuple[DeltaItem, ...] = ()
    context: tuple[DeltaItem, ...] = ()
    unbound: tuple[int, ...] = ()
    head_moved: bool = False
    new_head: str = ""
    last_head: str = ""
    issue: Issue | None = None

    @property
    def comment_ids(self) -> frozenset[int]:
        """Ids of the comments this delta carries, as amendments or context."""
        return frozenset(i.id for i in (*self.amendments, *self.context) if i.kind == KIND_COMMENT)

    @property
    def thread_ids(self) -> frozenset[int]:
        """Ids of the review-thread comments this delta carries, as amendments or context."""
        return frozenset(i.id for i in (*self.amendments, *self.context) if i.kind == KIND_THREAD)

    @property
    def review_ids(self) -> frozenset[int]:
        """Ids of the reviews this delta carries (always context)."""
        return frozenset(i.id for i in self.context if i.kind == KIND_REVIEW)

    @property
    def empty(self) -> bool:
        """Not moved, no amendments and no context; unbound runs alone do not count."""
        return not self.head_moved and not self.amendments and not self.context


@dataclass(frozen=True)
class TextResult:
    """The steer text and what it means for "consumed".

    ``text``: the body handed to the runtime (no opening line).  ``findings``: characters and
    escapes the sanitizer removed.  ``excluded``: unbound runs and runs of dropped or clipped
    amendments (never receipted).  ``state_clipped`` / ``head_clipped``: the clip reached a state
    item / the head item, so the snapshot of that part is not advanced.
    """

    text: str
    findings: int = 0
    excluded: frozenset[int] = field(default_factory=frozenset)
    state_clipped: bool = False
    head_clipped: bool = False
