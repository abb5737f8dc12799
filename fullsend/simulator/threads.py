"""Simulator state for a pull request's review threads: the comments of
``GET …/pulls/{n}/comments`` and ``GET …/pulls/comments/{id}`` (the handlers are in
``routes``), and the webhook payload of ``pull_request_review_comment`` (action ``created``)
that a follow-up run's Route job reads.

A thread comment has GitHub's fields the watcher and Route read: ``path``, ``line`` (``null``
once the diff moved on), ``original_line``, ``side``, ``in_reply_to_id`` (absent on a thread's
first comment), ``diff_hunk``, ``commit_id``, ``pull_request_review_id``, ``user``,
``author_association``, ``created_at``/``updated_at``.  Its ids are of their own series.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fullsend.simulator.actions import StateBase
from fullsend.simulator.shapes import json_copy, node_id

FIRST_THREAD_COMMENT_ID = 1_400_000_000


class ThreadsState(StateBase):
    """Review-thread comments, per pull request (a mixin of ``ItemsState``)."""

    _pulls: dict[int, dict[str, Any]]
    _thread_comments: dict[int, dict[str, Any]]  # ItemsState.__init__ makes it

    def _threads(self) -> dict[int, dict[str, Any]]:
        return self._thread_comments

    def add_thread_comment(
        self,
        number: int,
        body: str,
        login: str,
        path: str = "src/app.py",
        line: int | None = 12,
        in_reply_to: int = 0,
        created_at: datetime | str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """Add a comment in a review thread of pull request ``number`` (``KeyError`` if not a PR):
        a reply when ``in_reply_to`` names a thread comment (its ``path`` and lines are the
        thread's, as on GitHub), else a new thread on ``path`` at ``line``."""
        with self._lock:
            pr, threads = self._pulls[number], self._threads()
            first = threads[in_reply_to] if in_reply_to else None
            cid = int(extra.pop("id", 0) or max([FIRST_THREAD_COMMENT_ID, *threads]) + 1)
            created = self._ts(created_at, self.now())
            user = self._user(login)
            comment: dict[str, Any] = {
                "id": cid,
                "node_id": node_id("PRRC", cid),
                "url": f"{self.urls.repo_api}/pulls/comments/{cid}",
                "html_url": f"{pr['html_url']}#discussion_r{cid}",
                "pull_request_url": pr["url"],
                "pull_request_review_id": cid + 7,
                "path": first["path"] if first else path,
                "line": first["line"] if first else line,
                "original_line": first["original_line"] if first else line,
                "side": "RIGHT",
                "diff_hunk": "@@ -1,3 +1,4 @@",
                "commit_id": pr["head"]["sha"],
                "original_commit_id": pr["head"]["sha"],
                "body": body,
                "user": user,
                "author_association": "NONE" if user and user["type"] == "Bot" else "MEMBER",
                "created_at": created,
                "updated_at": created,
                "subject_type": "line",
                "_links": _links(
                    f"{self.urls.repo_api}/pulls/comments/{cid}", f"{pr['html_url']}#discussion_r{cid}", pr
                ),
            }
            if first is not None:
                comment["in_reply_to_id"] = first.get("in_reply_to_id", first["id"])
            comment.update(extra)
            threads[cid] = comment
            comment["_number"] = number
            return _public(comment)

    def thread_comments(self, number: int) -> list[dict[str, Any]] | None:
        """Copies of pull request ``number``'s thread comments, oldest first; ``None`` if not a PR."""
        with self._lock:
            if number not in self._pulls:
                return None
            return [_public(c) for c in self._threads().values() if c["_number"] == number]

    def get_thread_comment(self, comment_id: int) -> dict[str, Any] | None:
        """A copy of one thread comment, or ``None``."""
        with self._lock:
            comment = self._threads().get(comment_id)
            return _public(comment) if comment is not None else None

    def thread_event(self, comment_id: int, sender: str | None = None) -> dict[str, Any]:
        """The ``pull_request_review_comment`` payload (action ``created``) for a thread comment:
        ``comment``, ``pull_request`` and ``sender`` (the comment's author unless given)."""
        comment = self.get_thread_comment(comment_id)
        if comment is None:
            raise KeyError(comment_id)
        with self._lock:
            number = self._threads()[comment_id]["_number"]
            pr = json_copy(self._pulls[number])
        who = self._user(sender) if sender else comment["user"]
        return {"action": "created", "comment": comment, "pull_request": pr, "sender": who}


def _links(url: str, html_url: str, pr: dict[str, Any]) -> dict[str, Any]:
    """A thread comment's ``_links``: itself, its page and its pull request."""
    return {"self": {"href": url}, "html": {"href": html_url}, "pull_request": {"href": pr["url"]}}


def _public(comment: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in json_copy(comment).items() if k != "_number"}
