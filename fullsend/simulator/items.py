"""Simulator state for work items: issues, pull requests, comments, reviews, head moves, compare.

Holds what the watcher and the pre-flight read (docs/architecture.md "GitHub access"): issue, PR
head, comments with raw ``created_at``/``updated_at`` strings (for the receipt's "unedited" test),
reviews with ``commit_id``/``submitted_at``, compare.  Scripting calls are thread-safe and return
copies of the stored JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from fullsend.simulator.actions import ActionsState
from fullsend.simulator.compare import CompareAnswer, comparison_json, resolve_compare
from fullsend.simulator.git_shapes import pull_request_json
from fullsend.simulator.reviews import ReviewsState
from fullsend.simulator.shapes import Urls, fake_sha, json_copy, label_json, node_id, stable_id
from fullsend.simulator.threads import ThreadsState

FIRST_COMMENT_ID = 4_000_000_000
_REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "eyes", "rocket")


class ItemsState(ActionsState, ThreadsState, ReviewsState):
    """Issues, pull requests and what hangs off them (review threads: ``ThreadsState``; reviews:
    ``ReviewsState``)."""

    def __init__(self, urls: Urls, clock: Callable[[], datetime] | None = None) -> None:
        super().__init__(urls, clock)
        self._issues: dict[int, dict[str, Any]] = {}
        self._pulls: dict[int, dict[str, Any]] = {}
        self._comments: dict[int, dict[str, Any]] = {}
        self._top_comment_id = FIRST_COMMENT_ID  # GitHub never gives a deleted comment's id again
        self._comment_item: dict[int, int] = {}
        self._edited_at: dict[int, str] = {}  # GraphQL lastEditedAt: set by an edit of the body
        self._reviews: dict[int, list[dict[str, Any]]] = {}
        self._review_comments: dict[int, list[dict[str, Any]]] = {}  # review id -> its line comments
        self._heads: dict[int, list[dict[str, Any]]] = {}
        self._thread_comments: dict[int, dict[str, Any]] = {}  # ThreadsState
        self._compares: dict[tuple[str, str], CompareAnswer] = {}

    # ----------------------------------------------------------------------------- issues / PRs
    def add_issue(
        self,
        number: int,
        title: str = "",
        body: str = "",
        labels: Iterable[str] = (),
        user: str = "author",
        pull_request: bool = False,
        **extra: Any,
    ) -> dict[str, Any]:
        """Add (or replace) issue ``number``; returns the ``issue`` JSON.

        ``pull_request=True`` adds the ``pull_request`` link object GitHub puts on a PR's issue
        record (``add_pull_request`` does this for you).  ``extra`` overrides any issue field.
        """
        with self._lock:
            now = self.now()
            url = f"{self.urls.repo_api}/issues/{number}"
            web = f"{self.urls.repo_web}/{'pull' if pull_request else 'issues'}/{number}"
            issue: dict[str, Any] = {
                "id": stable_id("issue", number, digits=10),
                "node_id": node_id("I", number),
                "url": url,
                "repository_url": self.urls.repo_api,
                "labels_url": f"{url}/labels{{/name}}",
                "comments_url": f"{url}/comments",
                "events_url": f"{url}/events",
                "html_url": web,
                "number": number,
                "state": "open",
                "state_reason": None,
                "title": title,
                "body": body,
                "user": self._user(user),
                "labels": [label_json(self.urls, n) for n in labels],
                "assignee": None,
                "assignees": [],
                "milestone": None,
                "locked": False,
                "active_lock_reason": None,
                "comments": self._count_comments(number),
                "closed_at": None,
                "created_at": now,
                "updated_at": now,
                "author_association": "MEMBER",
                "timeline_url": f"{url}/timeline",
                "performed_via_github_app": None,
                "reactions": self._reactions(url),
            }
            if pull_request:
                pr_url = f"{self.urls.repo_api}/pulls/{number}"
                issue["pull_request"] = {
                    "url": pr_url,
                    "html_url": web,
                    "diff_url": f"{web}.diff",
                    "patch_url": f"{web}.patch",
                    "merged_at": None,
                }
            issue.update(self._item_fields(extra))
            self._issues[number] = issue
            return json_copy(issue)

    def add_pull_request(
        self,
        number: int,
        head_sha: str,
        title: str = "",
        body: str = "",
        labels: Iterable[str] = (),
        user: str = "author",
        *,
        base_sha: str | None = None,
        head_ref: str = "feature",
        base_ref: str = "main",
        draft: bool = False,
        **extra: Any,
    ) -> dict[str, Any]:
        """Add pull request ``number`` at ``head_sha`` (and its issue record); returns the
        ``pull-request`` JSON.  ``extra`` overrides any pull-request field."""
        labels = tuple(labels)
        with self._lock:
            issue = self.add_issue(number, title, body, labels, user, pull_request=True)
            self._heads[number] = [{"sha": head_sha}]
            owner = self._user(self.urls.owner, "Organization")  # a login in, so a user out (never None)
            self._pulls[number] = pull_request_json(
                self.urls,
                issue,
                owner,  # type: ignore[arg-type]  # the JSON record is a dict[str, Any]
                (head_ref, head_sha),
                (base_ref, base_sha or fake_sha("base", number)),
                draft,
            )
            self._pulls[number].update(self._item_fields(extra))
            return json_copy(self._pulls[number])

    def next_item_number(self) -> int:
        """The number GitHub gives the next issue or pull request: one above the highest."""
        with self._lock:
            return max(self._issues, default=0) + 1

    def update_issue(self, number: int, **fields: Any) -> dict[str, Any]:
        """Change an issue's ``title``, ``body``, ``labels`` (names), ``state`` or any other field;
        a PR's record follows.  ``updated_at`` becomes now unless given.  ``KeyError`` if unknown."""
        with self._lock:
            issue = self._issues[number]
            fields.setdefault("updated_at", self.now())
            if "labels" in fields:
                fields["labels"] = [label_json(self.urls, n) if isinstance(n, str) else n for n in fields["labels"]]
            issue.update(self._item_fields(fields))
            pr = self._pulls.get(number)
            if pr is not None:
                pr.update({k: v for k, v in self._item_fields(fields).items() if k in pr})
            return json_copy(issue)

    def move_head(
        self,
        number: int,
        new_sha: str,
        files: list[dict[str, Any]] | None = None,
        status: str = "ahead",
        ahead_by: int = 1,
        behind_by: int = 0,
    ) -> dict[str, Any]:
        """Push to PR ``number``: its head becomes ``new_sha``.  ``compare/{old}...{new}`` then
        answers ``status``/``ahead_by``/``behind_by`` with ``files`` (partial ``diff-entry`` dicts,
        ``filename`` required; omit ``patch`` for a binary file); a compare across several moves
        adds them up.  Returns the PR JSON.  ``KeyError`` if the PR is unknown."""
        with self._lock:
            pr = self._pulls[number]
            self._heads[number].append(
                {
                    "sha": new_sha,
                    "files": list(files or []),
                    "status": status,
                    "ahead_by": ahead_by,
                    "behind_by": behind_by,
                }
            )
            now = self.now()
            pr["head"]["sha"] = new_sha
            pr["statuses_url"] = pr["_links"]["statuses"]["href"] = f"{self.urls.repo_api}/statuses/{new_sha}"
            pr["updated_at"] = now
            pr["commits"] = int(pr.get("commits", 1)) + max(ahead_by, 0)
            self._issues[number]["updated_at"] = now
            return json_copy(pr)

    def set_compare(self, base: str, head: str, answer: dict[str, Any] | int) -> None:
        """Fix the answer of ``compare/{base}...{head}``: a status code (e.g. 404), or a partial
        ``commit-comparison`` dict (``status``, ``ahead_by``, ``behind_by``, ``files`` …) that the
        simulator completes."""
        with self._lock:
            self._compares[(base, head)] = answer

    def _pr_head(self, number: int) -> str:
        pr = self._pulls.get(number)
        return str(pr["head"]["sha"]) if pr else ""

    def _item_fields(self, fields: dict[str, Any]) -> dict[str, Any]:
        out = dict(fields)
        for key in ("created_at", "updated_at", "closed_at"):
            if key in out:
                out[key] = self._ts(out[key])
        if "user" in out:
            out["user"] = self._user(out["user"])
        return out

    def _reactions(self, url: str) -> dict[str, Any]:
        return {"url": f"{url}/reactions", "total_count": 0, **{k: 0 for k in _REACTIONS}}

    # ----------------------------------------------------------------------------- comments
    def add_comment(
        self,
        number: int,
        body: str,
        login: str,
        user_type: str | None = None,
        created_at: datetime | str | None = None,
        updated_at: datetime | str | None = None,
        last_edited_at: datetime | str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """Add a comment on issue/PR ``number`` (``KeyError`` if the item is unknown).

        ``user_type`` defaults to ``Bot`` for a ``[bot]`` login, else ``User``; an App login
        without the suffix gets it (REST spelling).  ``created_at`` defaults to now and
        ``updated_at`` to ``created_at`` (strings are kept verbatim: the receipt reader compares
        them byte for byte; GitHub often answers an ``updated_at`` a second later on a comment
        nobody edited).  ``last_edited_at`` is GraphQL's ``lastEditedAt`` (default ``null``:
        never edited).  The item's ``comments`` count and ``updated_at`` follow.
        """
        with self._lock:
            issue = self._issues[number]
            kind = user_type or ("Bot" if login.lower().endswith("[bot]") else "User")
            if kind == "Bot" and not login.lower().endswith("[bot]"):
                login += "[bot]"
            created = self._ts(created_at, self.now())
            cid = int(extra.pop("id", 0) or max([self._top_comment_id, *self._comments]) + 1)
            self._top_comment_id = max(self._top_comment_id, cid)
            url = f"{self.urls.repo_api}/issues/comments/{cid}"
            comment = {
                "id": cid,
                "node_id": node_id("IC", cid),
                "url": url,
                "html_url": f"{issue['html_url']}#issuecomment-{cid}",
                "body": body,
                "user": self._user(login, kind),
                "created_at": created,
                "updated_at": self._ts(updated_at, created),
                "issue_url": issue["url"],
                "author_association": "NONE" if kind == "Bot" else "MEMBER",
                "performed_via_github_app": None,
                "reactions": self._reactions(url),
            }
            comment.update(self._item_fields(extra))
            self._comments[cid] = comment
            self._comment_item[cid] = number
            if last_edited_at is not None:
                self._edited_at[cid] = self._ts(last_edited_at) or ""
            self._touch_item(number, created)
            return json_copy(comment)

    def edit_comment(self, comment_id: int, body: str, updated_at: datetime | str | None = None) -> dict[str, Any]:
        """Replace a comment's body; ``updated_at`` becomes ``updated_at`` or now.  ``KeyError`` if unknown."""
        with self._lock:
            comment = self._comments[comment_id]
            comment["body"] = body
            comment["updated_at"] = self._ts(updated_at, self.now())
            self._edited_at[comment_id] = comment["updated_at"]
            return json_copy(comment)

    def last_edited_at(self, comment_id: int) -> str | None:
        """GraphQL's ``lastEditedAt`` of a comment: when its body was last edited, ``None`` if never."""
        with self._lock:
            return self._edited_at.get(comment_id)

    def delete_comment(self, comment_id: int) -> None:
        """Remove a comment (later reads and PATCHes answer 404)."""
        with self._lock:
            self._comments.pop(comment_id, None)
            number = self._comment_item.pop(comment_id, None)
            if number is not None:
                self._touch_item(number, self.now())

    def comments(self, number: int) -> list[dict[str, Any]]:
        """Copies of the comments on item ``number``, oldest first (including the action's posts)."""
        with self._lock:
            ids = sorted(c for c, n in self._comment_item.items() if n == number)
            return [json_copy(self._comments[c]) for c in ids]

    def all_comments(self) -> list[dict[str, Any]]:
        """Copies of every comment of the repository, oldest id first."""
        with self._lock:
            return [json_copy(self._comments[c]) for c in sorted(self._comment_item)]

    def get_comment(self, comment_id: int) -> dict[str, Any] | None:
        """A copy of comment ``comment_id`` or ``None``."""
        with self._lock:
            c = self._comments.get(comment_id)
            return json_copy(c) if c is not None else None

    def _count_comments(self, number: int) -> int:
        return sum(1 for n in self._comment_item.values() if n == number)

    def _touch_item(self, number: int, when: str | None) -> None:
        for record in (self._issues.get(number), self._pulls.get(number)):
            if record is not None:
                record["comments"] = self._count_comments(number)
                record["updated_at"] = when

    def open_pulls_from(self, branch: str) -> list[int]:
        """The numbers of the open pull requests whose head branch is ``branch``."""
        with self._lock:
            return [n for n, pr in self._pulls.items() if pr["state"] == "open" and pr["head"]["ref"] == branch]

    def has_head(self, number: int, sha: str) -> bool:
        """Whether ``sha`` was ever a head of pull request ``number`` (a commit GitHub knows for it)."""
        with self._lock:
            return any(h.get("sha", "").lower() == sha.lower() for h in self._heads.get(number, []))

    # ----------------------------------------------------------------------------- reads
    def get_issue(self, number: int) -> dict[str, Any] | None:
        """A copy of issue ``number`` (also a PR's issue record) or ``None``."""
        with self._lock:
            issue = self._issues.get(number)
            return json_copy(issue) if issue is not None else None

    def get_pull(self, number: int) -> dict[str, Any] | None:
        """A copy of pull request ``number`` or ``None`` (plain issues have none)."""
        with self._lock:
            pr = self._pulls.get(number)
            return json_copy(pr) if pr is not None else None

    def compare_answer(self, base: str, head: str, per_page: int = 250) -> dict[str, Any] | int:
        """The ``commit-comparison`` JSON for ``base...head``, or an HTTP status (404 when unknown)."""
        with self._lock:
            explicit = self._compares.get((base, head))
            if isinstance(explicit, int):
                return explicit
            answer = explicit if explicit is not None else resolve_compare(self._heads.values(), base, head)
            if answer is None:
                return 404
            return comparison_json(self.urls, base, head, answer, self.now(), per_page)
