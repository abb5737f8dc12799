"""What became of the receipt's POST (docs/architecture.md "Receipt writer"; docs/rules.md#receipt-unknown).

``post_receipt`` (``fullsend.app.action.skip.receipt``) returns a ``ReceiptPost``; the run's
``RunOutcome`` carries it as it is, and its outputs and summary read it from there.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from fullsend.core.model import Comment


class PostState(Enum):
    """What became of the receipt's POST (docs/rules.md#receipt-unknown)."""

    POSTED = "posted"  # GitHub created it and described it
    POSTED_URL_UNKNOWN = "posted-url-unknown"  # created; the answer, a JSON object, did not describe it
    MAYBE_POSTED = "maybe-posted"  # no positive proof either way: the receipt may exist
    NOT_POSTED = "not-posted"  # nothing was posted (receipts off, a refusal, a rate limit given up on)


@dataclass(frozen=True)
class ReceiptPost:
    """``post_receipt``'s result: the ``state`` and, when ``POSTED``, the created comment."""

    state: PostState
    comment: Comment | None = None

    @property
    def exists(self) -> bool:
        """True when GitHub is known to have created the receipt."""
        return self.state in (PostState.POSTED, PostState.POSTED_URL_UNKNOWN)


NOT_POSTED = ReceiptPost(PostState.NOT_POSTED)
