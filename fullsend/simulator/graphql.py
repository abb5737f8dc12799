"""The GraphQL endpoint of the GitHub simulator: the two queries the action sends.

* ``viewer { login }`` (docs/architecture.md "Receipt reader"): an App's login comes back WITHOUT
  ``[bot]``, as on GitHub;
* the receipt view (``fullsend.adapters.github.graphql.RECEIPT_VIEW_QUERY``):
  ``viewer`` plus ``repository(owner, name).issueOrPullRequest(number).comments(first: 100,
  after)`` with ``fullDatabaseId`` (a BigInt, sent as a string), ``createdAt``, ``updatedAt``,
  ``lastEditedAt`` (``null`` until someone edits the body: a PATCH, or ``add_comment(...,
  last_edited_at=…)``), ``url`` and ``author { __typename login }`` (``null`` for a deleted user);
  when the query names ``userContentEdits``, each comment also carries ``includesCreatedEdit`` and
  ``userContentEdits`` (its versions, newest first: ``fullsend.simulator.edits``).

Anything else answers an ``errors`` list, as GitHub does for a query its schema lacks.  The
queries are recognised by the fields they name, not parsed: the simulator serves the action.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from fullsend.simulator.routes import Call, Reply

if TYPE_CHECKING:  # pragma: no cover
    from fullsend.simulator.edits import EditHistory

PAGE_SIZE = 100
_DOCS = "https://docs.github.com/graphql"


def answer(sim: EditHistory, call: Call) -> Reply:
    """Answer one GraphQL POST (HTTP 200 with ``data`` or ``errors``; 400 for a body that is not JSON)."""
    try:
        payload = json.loads(call.body or b"null")
        query, variables = payload.get("query"), payload.get("variables") or {}
    except (ValueError, AttributeError):
        return Reply(400, {"message": "Problems parsing JSON", "documentation_url": _DOCS})
    if not isinstance(query, str) or not isinstance(variables, dict):
        return Reply(200, {"errors": [{"message": "A query attribute must be specified and must be a string."}]})
    viewer = {"login": _graphql_login(call.login, call.is_bot)}
    if "issueOrPullRequest" in query:
        repository = _repository(sim, variables, "userContentEdits" in query)
        return Reply(200, {"data": {"viewer": viewer, "repository": repository}})
    if re.search(r"\bviewer\s*\{[^}]*\blogin\b", query):
        return Reply(200, {"data": {"viewer": viewer}})
    return Reply(200, {"errors": [{"message": "The simulator answers only the viewer and the receipt view"}]})


def _graphql_login(login: str, is_bot: bool) -> str:
    return login[: -len("[bot]")] if is_bot and login.lower().endswith("[bot]") else login


def _repository(sim: EditHistory, variables: dict[str, Any], edits: bool) -> dict[str, Any] | None:
    owner, name, number = variables.get("owner"), variables.get("name"), variables.get("number")
    if not (isinstance(owner, str) and isinstance(name, str)) or (owner.lower(), name.lower()) != (
        sim.urls.owner.lower(),
        sim.urls.repo.lower(),
    ):
        return None
    if not isinstance(number, int) or isinstance(number, bool) or sim.get_issue(number) is None:
        return {"issueOrPullRequest": None}
    after = variables.get("after")
    start = int(after.removeprefix("cursor:")) if isinstance(after, str) and after.startswith("cursor:") else 0
    comments = sim.comments(number)
    page = comments[start : start + PAGE_SIZE]
    more = start + PAGE_SIZE < len(comments)
    return {
        "issueOrPullRequest": {
            "comments": {
                "pageInfo": {"hasNextPage": more, "endCursor": f"cursor:{start + len(page)}" if page else None},
                "nodes": [_node(sim, c, edits) for c in page],
            }
        }
    }


def _node(sim: EditHistory, comment: dict[str, Any], edits: bool) -> dict[str, Any]:
    user = comment.get("user")
    author = None
    if isinstance(user, dict):
        is_bot = user.get("type") == "Bot"
        author = {"__typename": "Bot" if is_bot else "User", "login": _graphql_login(str(user.get("login")), is_bot)}
    node = {
        "fullDatabaseId": str(comment["id"]),
        "body": comment.get("body"),
        "createdAt": comment.get("created_at"),
        "updatedAt": comment.get("updated_at"),
        "lastEditedAt": sim.last_edited_at(int(comment["id"])),
        "url": comment.get("html_url"),
        "author": author,
    }
    return {**node, **sim.content_edits_json(int(comment["id"]))} if edits else node
