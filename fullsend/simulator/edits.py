"""The edit history of comments in the GitHub simulator (docs/architecture.md "The simulator").

GitHub keeps every version of a comment's body and serves them through GraphQL's
``userContentEdits`` connection on the comment (``IssueComment`` implements ``Comment``): newest
first, each ``UserContentEdit`` with ``editedAt`` (when that version was written, to the second)
and ``diff`` (that version's whole body), and, once the body has been edited, the version it was
created with as the oldest node (``includesCreatedEdit`` true).  :class:`EditHistory` records the
same on every edit through ``edit_comment`` (a REST ``PATCH`` or a scripting call), stamped by the
simulator's clock, so a test reads what a person scrolling the comment's "edited" menu would see:
every version of the status comment and when it was written (docs/architecture.md "Status
comments").
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fullsend.simulator.items import ItemsState
from fullsend.simulator.shapes import node_id

#: GraphQL's largest page; the simulator answers the newest this many versions.
MAX_EDITS = 100


class EditHistory(ItemsState):
    """``ItemsState`` whose comment edits are kept, version by version."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._versions: dict[int, list[tuple[str, str]]] = {}  # comment id -> (editedAt, body), oldest first

    def edit_comment(self, comment_id: int, body: str, updated_at: datetime | str | None = None) -> dict[str, Any]:
        """``ItemsState.edit_comment``, keeping the new version (and, on the first edit, the one
        the comment was created with).  ``KeyError`` if the comment is unknown."""
        with self._lock:
            before = self.get_comment(comment_id)
            edited = super().edit_comment(comment_id, body, updated_at)
            versions = self._versions.setdefault(comment_id, [])
            if not versions and before is not None:
                versions.append((str(before["created_at"]), str(before["body"])))
            versions.append((str(edited["updated_at"]), body))
            return edited

    def content_edits(self, comment_id: int) -> list[tuple[str, str]]:
        """Every kept version of comment ``comment_id`` as ``(editedAt, body)``, oldest first
        (``[]`` for a comment never edited through the simulator)."""
        with self._lock:
            return list(self._versions.get(comment_id, ()))

    def content_edits_json(self, comment_id: int) -> dict[str, Any]:
        """The GraphQL fields ``includesCreatedEdit`` and ``userContentEdits`` of a comment:
        ``totalCount``, ``pageInfo`` and the newest :data:`MAX_EDITS` ``nodes``, newest first."""
        versions = self.content_edits(comment_id)
        newest = [(n, v) for n, v in reversed(list(enumerate(versions)))][:MAX_EDITS]
        nodes = [
            {
                "id": node_id("UCE", comment_id * 1000 + n),
                "createdAt": at,
                "updatedAt": at,
                "editedAt": at,
                "deletedAt": None,
                "diff": body,
            }
            for n, (at, body) in newest
        ]
        page = {"hasNextPage": len(versions) > MAX_EDITS, "endCursor": f"cursor:{len(nodes)}" if nodes else None}
        return {
            "includesCreatedEdit": bool(versions),
            "userContentEdits": {"totalCount": len(versions), "pageInfo": page, "nodes": nodes},
        }
