"""The fast skip's REST answers, checked as strictly as the pydantic records check them
(docs/architecture.md "Fast skip").

The head-reviewed skip (docs/rules.md#head-reviewed) reads this run, the pull request and its
reviews.  Each shape below mirrors one model of ``fullsend.adapters.github.wire``
(``WorkflowRun``, ``PullRequest``, ``Review``) field by field: required or not, ``null``
allowed or not, the JSON type without coercion, ids in GitHub's range, RFC 3339 times.  A
defect raises ``Undecided`` where the forge raises ``MalformedResponse``;
what is
accepted reads as ``fullsend.adapters.github.records`` reads it.  Standard library and core only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fullsend.adapters.github.lite import LiteAnswer, Undecided
from fullsend.core.model import Review, WorkflowRun
from fullsend.core.scalars import parse_time

GITHUB_ID_MAX = 2**53 - 1  # as fullsend.adapters.github.wire
PER_PAGE = 100  # as fullsend.adapters.github.forge: a full page may have a next one

# A shape: field → (kind, required, nullable).  A kind is a scalar name or a nested shape; a
# one-item list is a JSON array of that kind.
Shape = Mapping[str, tuple[Any, bool, bool]]
USER: Shape = {"login": ("str", False, True), "type": ("str", False, True)}
REPOSITORY: Shape = {"url": ("str", False, True)}
PR_BASE: Shape = {"repo": (REPOSITORY, False, True)}
PR_MINIMAL: Shape = {"number": ("id", True, False), "base": (PR_BASE, False, True)}
REFERENCED: Shape = {"path": ("str", True, False), "ref": ("str", False, True), "sha": ("str", False, True)}
RUN: Shape = {
    "id": ("id", True, False),
    "path": ("str", True, False),
    "event": ("str", True, False),
    "status": ("str", True, True),
    "conclusion": ("str", True, True),
    "created_at": ("time", True, False),
    "updated_at": ("time", True, False),
    "display_title": ("str", False, True),
    "head_sha": ("str", True, False),
    "html_url": ("str", True, False),
    "pull_requests": ([PR_MINIMAL], True, True),
    "run_attempt": ("count", False, True),
    "name": ("str", False, True),
    "actor": (USER, False, True),
    "triggering_actor": (USER, False, True),
    "referenced_workflows": ([REFERENCED], False, True),
}
HEAD: Shape = {"sha": ("str", True, False)}
PULL: Shape = {"number": ("id", True, False), "head": (HEAD, True, False), "html_url": ("str", True, False)}
REVIEW: Shape = {
    "id": ("id", True, False),
    "user": (USER, True, True),
    "state": ("str", True, False),
    "commit_id": ("str", True, True),
    "body": ("str", False, True),
    "submitted_at": ("time", False, True),
}


def rest_data(answer: LiteAnswer, label: str) -> Any:
    """The JSON of a REST answer; ``Undecided`` for anything but a 200 with a JSON body."""
    if answer.status != 200:
        raise Undecided(f"{label}: HTTP {answer.status}")
    try:
        return json.loads(answer.text)
    except ValueError:
        raise Undecided(f"{label}: the answer was not JSON") from None


def check(value: Any, shape: Shape, label: str) -> dict[str, Any]:
    """``value`` as an object of ``shape`` (extra fields ignored); ``Undecided`` naming the field."""
    if not isinstance(value, dict):
        raise Undecided(f"{label}: not an object")
    for name, (kind, required, nullable) in shape.items():
        if name not in value:
            if required:
                raise Undecided(f"{label}: {name} is missing")
            continue
        item = value[name]
        if item is None:
            if not nullable:
                raise Undecided(f"{label}: {name} is null")
            continue
        _check_kind(item, kind, f"{label}.{name}")
    return value


def _check_kind(item: Any, kind: Any, label: str) -> None:
    if isinstance(kind, list):
        if not isinstance(item, list):
            raise Undecided(f"{label}: not an array")
        for n, element in enumerate(item):
            _check_kind(element, kind[0], f"{label}[{n}]")
    elif isinstance(kind, Mapping):
        check(item, kind, label)
    elif not _scalar(item, kind):
        raise Undecided(f"{label}: not a {kind}")


def _scalar(item: Any, kind: str) -> bool:
    if kind == "str":
        return type(item) is str
    if kind == "time":
        return type(item) is str and parse_time(item) is not None
    low = 0 if kind == "count" else 1
    return type(item) is int and low <= item <= GITHUB_ID_MAX


def run_created(data: Any, label: str) -> WorkflowRun:
    """A run as the head-reviewed check reads it: its id and times (``records.run_record``'s values)."""
    run = check(data, RUN, label)
    return WorkflowRun(
        id=run["id"],
        path=run["path"],
        event=run["event"],
        created_at=parse_time(run["created_at"]),
        updated_at=parse_time(run["updated_at"]),
        head_sha=run["head_sha"],
        html_url=run["html_url"],
        run_attempt=run.get("run_attempt") or 0,
    )


def pull_head(data: Any, label: str) -> str:
    """``.head.sha`` of a checked pull request."""
    return str(check(data, PULL, label)["head"]["sha"])


def reviews(data: Any, label: str) -> list[Review]:
    """One page of reviews, each checked; ``Undecided`` for a full page (the forge would read on).
    Authors and states read as ``records.review_record`` reads them; bodies are not read."""
    if not isinstance(data, list):
        raise Undecided(f"{label}: not an array")
    if len(data) >= PER_PAGE:
        raise Undecided(f"{label}: a full page (more reviews are the full path's)")
    found = []
    for n, raw in enumerate(data):
        review = check(raw, REVIEW, f"{label}[{n}]")
        user = review.get("user") or {}
        login, kind = user.get("login"), user.get("type")
        found.append(
            Review(
                id=review["id"],
                author=login if login and kind else "",
                author_type=kind if login and kind else "",
                state=review["state"],
                submitted_at=parse_time(review["submitted_at"]) if review.get("submitted_at") else None,
                commit_id=review["commit_id"] or "",
            )
        )
    return found
