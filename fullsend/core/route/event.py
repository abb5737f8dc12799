"""The part of a webhook payload the Route decision reads (docs/rules.md, family Route).  Pure.

Each field is what the retired bash Route job read through a workflow expression, with the same
meaning: a value that is missing or of another type reads as the expression would render it
(``""``, or ``False`` for ``is_pull_request``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Actor:
    """A login and its GitHub account ``type`` (``User``, ``Bot``, ``Organization``; ``""`` unknown)."""

    login: str = ""
    type: str = ""

    @property
    def is_app(self) -> bool:
        """A GitHub App (or another bot account): ``type`` is ``Bot``."""
        return self.type == "Bot"


@dataclass(frozen=True)
class RouteEvent:
    """One event as Route sees it.

    ``name`` is ``GITHUB_EVENT_NAME``, ``repository`` ``GITHUB_REPOSITORY`` (``owner/name``);
    ``labels`` the issue's and the pull request's label names (duplicates kept), ``label`` the
    label just added or removed; ``pr_head_repo`` the head repository's ``full_name``;
    ``assignee`` the login just assigned or unassigned; ``number`` the item's number (0 unknown);
    ``pr_head_ref`` the head branch a pull-request payload names (a comment's names none).
    """

    name: str
    repository: str
    action: str = ""
    sender: Actor = Actor()
    is_pull_request: bool = False
    labels: tuple[str, ...] = ()
    issue_author: str = ""
    label: str = ""
    comment_body: str = ""
    comment_author: Actor = Actor()
    comment_association: str = ""
    pr_author: Actor = Actor()
    pr_head_repo: str = ""
    review_state: str = ""
    review_author: str = ""
    assignee: str = ""
    number: int = 0
    pr_head_ref: str = ""

    @property
    def owner(self) -> str:
        """The repository's owner (``github.repository_owner``)."""
        return self.repository.split("/", 1)[0]


def _get(data: object, *path: str) -> object:
    for key in path:
        data = data.get(key) if isinstance(data, Mapping) else None
    return data


def _text(data: object, *path: str) -> str:
    value = _get(data, *path)
    return value if isinstance(value, str) else ""


def _actor(data: object, *path: str) -> Actor:
    return Actor(_text(data, *path, "login"), _text(data, *path, "type"))


def _label_names(data: object, *path: str) -> tuple[str, ...]:
    labels = _get(data, *path)
    if not isinstance(labels, list):
        return ()
    return tuple(name for label in labels if isinstance(name := _get(label, "name"), str))


def route_event(name: str, payload: Mapping[str, Any], repository: str) -> RouteEvent:
    """The :class:`RouteEvent` of ``payload`` (the JSON object at ``GITHUB_EVENT_PATH``) for the
    event ``name`` in ``repository``.  Never raises: what is missing reads as empty."""
    return RouteEvent(
        name=name,
        repository=repository,
        action=_text(payload, "action"),
        sender=_actor(payload, "sender"),
        is_pull_request=_get(payload, "pull_request") is not None or _get(payload, "issue", "pull_request") is not None,
        labels=_label_names(payload, "issue", "labels") + _label_names(payload, "pull_request", "labels"),
        issue_author=_text(payload, "issue", "user", "login"),
        label=_text(payload, "label", "name"),
        comment_body=_text(payload, "comment", "body"),
        comment_author=_actor(payload, "comment", "user"),
        comment_association=_text(payload, "comment", "author_association"),
        pr_author=_actor(payload, "pull_request", "user"),
        pr_head_repo=_text(payload, "pull_request", "head", "repo", "full_name"),
        review_state=_text(payload, "review", "state"),
        review_author=_text(payload, "review", "user", "login"),
        assignee=_text(payload, "assignee", "login"),
        number=_number(payload),
        pr_head_ref=_text(payload, "pull_request", "head", "ref"),
    )


def _number(payload: Mapping[str, Any]) -> int:
    """The item's number: ``issue.number``, else ``pull_request.number`` (0 when neither is one)."""
    for key in ("issue", "pull_request"):
        value = _get(payload, key, "number")
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return 0
