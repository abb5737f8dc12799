"""Simulator state for a pull request's reviews and the line comments posted with them: what the
head-reviewed skip and ``fullsend review`` read and write (docs/architecture.md "GitHub access").
A submitted review touches its pull record (docs/architecture.md "Listing gate")."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fullsend.simulator.actions import StateBase
from fullsend.simulator.shapes import json_copy, node_id

FIRST_REVIEW_ID = 2_000_000_000


class ReviewsState(StateBase):
    """Reviews per pull request and their line comments (a mixin of ``ItemsState``)."""

    _pulls: dict[int, dict[str, Any]]
    _reviews: dict[int, list[dict[str, Any]]]  # ItemsState.__init__ makes these
    _review_comments: dict[int, list[dict[str, Any]]]

    def add_review(
        self,
        number: int,
        login: str,
        state: str,
        body: str = "",
        user_type: str | None = None,
        commit_id: str = "",
        submitted_at: datetime | str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """Add a review on PR ``number`` (``KeyError`` if not a PR).  ``commit_id`` defaults to the
        current head, ``submitted_at`` to now (absent for ``PENDING``, as on GitHub)."""
        with self._lock:
            pr = self._pulls[number]
            kind = user_type or ("Bot" if login.lower().endswith("[bot]") else "User")
            rid = int(extra.pop("id", 0) or max([FIRST_REVIEW_ID, *self._review_ids()]) + 1)
            review = {
                "id": rid,
                "node_id": node_id("PRR", rid),
                "user": self._user(login, kind),
                "body": body,
                "state": state,
                "html_url": f"{pr['html_url']}#pullrequestreview-{rid}",
                "pull_request_url": pr["url"],
                "_links": {
                    "html": {"href": f"{pr['html_url']}#pullrequestreview-{rid}"},
                    "pull_request": {"href": pr["url"]},
                },
                "commit_id": commit_id or pr["head"]["sha"],
                "author_association": "NONE" if kind == "Bot" else "MEMBER",
            }
            if state != "PENDING":
                review["submitted_at"] = self._ts(submitted_at, self.now())
            review.update(extra)
            self._reviews.setdefault(number, []).append(review)
            if state != "PENDING":  # a submitted review touches the pull record (docs/architecture.md "Listing gate")
                pr["updated_at"] = review["submitted_at"]
            return json_copy(review)

    def add_review_comments(self, review_id: int, comments: list[dict[str, Any]]) -> None:
        """Keep the line comments posted with review ``review_id`` (``path``, ``line``, ``side``, ``body``, …)."""
        with self._lock:
            self._review_comments.setdefault(review_id, []).extend(json_copy(comments))
            self.touch_review_comments(review_id, len(comments))

    def touch_review_comments(self, review_id: int, added: int) -> None:
        """The pull record of review ``review_id``'s pull request after ``added`` line comments:
        ``review_comments`` counts them and ``updated_at`` becomes now (no-op for an unknown review)."""
        with self._lock:
            for number, reviews in self._reviews.items():
                if any(r["id"] == review_id for r in reviews) and added:
                    pr = self._pulls[number]
                    pr["review_comments"] = int(pr.get("review_comments", 0)) + added
                    pr["updated_at"] = self.now()

    def review_comments(self, review_id: int) -> list[dict[str, Any]]:
        """Copies of the line comments posted with review ``review_id``, in request order."""
        with self._lock:
            return json_copy(self._review_comments.get(review_id, []))

    def _review_ids(self) -> list[int]:
        return [r["id"] for rs in self._reviews.values() for r in rs]

    def reviews(self, number: int) -> list[dict[str, Any]] | None:
        """Copies of the reviews on PR ``number`` in submission order; ``None`` if not a PR."""
        with self._lock:
            if number not in self._pulls:
                return None
            return json_copy(self._reviews.get(number, []))
