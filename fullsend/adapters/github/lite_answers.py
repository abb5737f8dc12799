"""The fast skip's GraphQL answers, checked as strictly as the pydantic records check them
(docs/architecture.md "Fast skip").

Each function mirrors one of ``fullsend.adapters.github.graphql`` (``GraphQLClient.query``'s
envelope checks, ``viewer_login``, ``receipt_page``) on the standard library: a field missing,
``null`` where the record allows none, of another JSON type, an id out of GitHub's range or a
time that is not RFC 3339 raises ``Undecided``, and what is accepted reads the same
(``tests/adapters/github/test_lite.py`` mutates a page field by field to hold them equal).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from fullsend.adapters.github.lite import LiteAnswer, Undecided
from fullsend.core.model import Comment
from fullsend.core.scalars import decimal_id, parse_time
from fullsend.core.text.sanitize import runner_safe

GITHUB_ID_MAX = 2**53 - 1  # as fullsend.adapters.github.wire
_DATABASE_ID = re.compile(r"[0-9]{1,16}")


def envelope_data(answer: LiteAnswer, label: str) -> dict[str, Any]:
    """The ``data`` object of a GraphQL answer; ``Undecided`` for anything but a clean 200."""
    if answer.status != 200:
        raise Undecided(f"{label}: HTTP {answer.status}")
    try:
        raw = json.loads(answer.text)
    except ValueError:
        raise Undecided(f"{label}: the answer was not JSON") from None
    if not isinstance(raw, dict):
        raise Undecided(f"{label}: the answer is not an object")
    errors, data = raw.get("errors"), raw.get("data")
    if errors is not None:
        if not isinstance(errors, list) or not all(_graphql_error(e) for e in errors):
            raise Undecided(f"{label}: malformed errors")
        if errors:
            raise Undecided(f"{label}: the query answered errors")
    if not isinstance(data, dict):
        raise Undecided(f"{label}: no data")
    return data


def _graphql_error(error: Any) -> bool:
    return isinstance(error, dict) and isinstance(error.get("message", ""), str) and _optional(error.get("type"), str)


def _optional(value: Any, kind: type) -> bool:
    return value is None or type(value) is kind


def _field(obj: Any, key: str, label: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise Undecided(f"{label}: {key} is missing")
    return obj[key]


def viewer_login(data: Mapping[str, Any], label: str) -> str:
    """``data.viewer.login`` (a non-empty string); ``Undecided`` otherwise."""
    login = _field(_field(data, "viewer", label), "login", label)
    if type(login) is not str or not login:
        raise Undecided(f"{label}: viewer.login is not a login")
    return login


def receipt_page(data: Mapping[str, Any], label: str) -> tuple[str, list[Comment], str]:
    """One page of the receipt view: ``(viewer login, comments, next cursor or "")``, as
    ``fullsend.adapters.github.graphql.receipt_page`` reads it.  Raises ``Undecided``."""
    login = viewer_login(data, label)
    repository = _field(data, "repository", label)
    item = _field(repository, "issueOrPullRequest", label) if repository is not None else None
    if item is None:
        raise Undecided(f"{label}: the repository or the item is not visible to this token")
    page = _field(item, "comments", label)
    info, nodes = _field(page, "pageInfo", label), _field(page, "nodes", label)
    more, cursor = _field(info, "hasNextPage", label), _field(info, "endCursor", label)
    if type(more) is not bool or not _optional(cursor, str) or not isinstance(nodes, list):
        raise Undecided(f"{label}: malformed page")
    comments = [_comment(node, label) for node in nodes]
    if more and not cursor:
        raise Undecided(f"{label}: a next page without a cursor")
    return login, comments, (cursor or "") if more else ""


def _comment(node: Any, label: str) -> Comment:
    keys = ("fullDatabaseId", "body", "createdAt", "updatedAt", "lastEditedAt", "url", "author")
    raw_id, body, created, updated, edited, url, author = (_field(node, k, label) for k in keys)
    if type(raw_id) is not str or not _DATABASE_ID.fullmatch(raw_id) or not 1 <= decimal_id(raw_id) <= GITHUB_ID_MAX:
        raise Undecided(f"{label}: a comment id is malformed")
    if type(body) is not str or type(url) is not str or not all(_time(t) for t in (created, updated)):
        raise Undecided(f"{label}: a comment is malformed")
    if edited is not None and not _time(edited):
        raise Undecided(f"{label}: a comment's lastEditedAt is malformed")
    login, kind = _author(author, label)
    return Comment(
        id=decimal_id(raw_id),
        body=runner_safe(body),
        author=login,
        author_type=kind,
        created_at=parse_time(created),
        updated_at=parse_time(updated),
        created_at_raw=created,
        updated_at_raw=updated,
        html_url=url,
        edited=edited is not None,
    )


def _time(value: Any) -> bool:
    return type(value) is str and parse_time(value) is not None


def _author(author: Any, label: str) -> tuple[str, str]:
    """As ``graphql._author``: REST's spelling of the author; unknown ⇒ ``("", "")``."""
    if author is None:
        return "", ""
    if not isinstance(author, dict):
        raise Undecided(f"{label}: a comment's author is malformed")
    typename, login = author.get("__typename"), author.get("login")
    if not (_optional(typename, str) and _optional(login, str)):
        raise Undecided(f"{label}: a comment's author is malformed")
    if not login or not typename:
        return "", ""
    if typename == "Bot":
        return (login if login.lower().endswith("[bot]") else login + "[bot]"), "Bot"
    return login, typename
