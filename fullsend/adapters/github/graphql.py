"""GitHub's GraphQL API for the adapter: ``viewer { login }`` and the receipt view.

One client per credential, posting to ``GITHUB_GRAPHQL_URL`` over the forge's connection pool
(``fullsend.adapters.github.client``: the same pool as REST).  Every query goes through
the token's rate-limit policy (``fullsend.adapters.github.ratelimit``); GitHub reports a GraphQL
rate limit as HTTP 200 with an error of type ``RATE_LIMITED``, which counts as a limited answer.
Answers are checked at the seam like REST ones (``fullsend.adapters.github.wire``): ``{"data":
"x"}``, an ``errors`` object instead of a list, a missing field — each is a ``MalformedResponse``.

The receipt view (:data:`RECEIPT_VIEW_QUERY`) reads, in one request per 100 comments, the login
the token acts as and every comment of the item with ``lastEditedAt`` (docs/rules.md
#receipt-lists-my-run: the Project decision on "edited").
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from fullsend.adapters.github.client import Client, SendFailed
from fullsend.adapters.github.ratelimit import Answer, RateLimitPolicy, Transient, WaitBound, send_within_limits
from fullsend.adapters.github.wire import Id, Link, Noted, Time, Wire, parse
from fullsend.core.model import Comment
from fullsend.core.scalars import decimal_id, parse_time
from fullsend.core.text.sanitize import runner_safe
from fullsend.errors import ForgeError, MalformedResponse

if TYPE_CHECKING:  # annotations only: the fast skip never loads the ports
    from fullsend.ports import Clock

RECEIPT_VIEW_QUERY = """
query ReceiptView($owner: String!, $name: String!, $number: Int!, $after: String) {
  viewer { login }
  repository(owner: $owner, name: $name) {
    issueOrPullRequest(number: $number) {
      ... on Issue { comments(first: 100, after: $after) { ...receiptPage } }
      ... on PullRequest { comments(first: 100, after: $after) { ...receiptPage } }
    }
  }
}
fragment receiptPage on IssueCommentConnection {
  pageInfo { hasNextPage endCursor }
  nodes { fullDatabaseId body createdAt updatedAt lastEditedAt url author { __typename login } }
}
""".strip()  # WIRE: GitHub's GraphQL schema names (the receipt view of docs/rules.md#receipt-lists-my-run)
VIEWER_QUERY = "query { viewer { login } }"  # WIRE


class GraphQLError(Wire):
    message: str = ""
    type: str | None = None


class Envelope(Wire):
    data: dict[str, Any] | None = None
    errors: list[GraphQLError] | None = None


class Viewer(Wire):
    login: Annotated[str, Field(min_length=1)]


class ViewerData(Wire):
    viewer: Viewer


class Author(Wire):
    typename: str | None = Field(default=None, alias="__typename")
    login: str | None = None


class CommentNode(Wire):
    fullDatabaseId: Annotated[str, Field(pattern=r"^[0-9]{1,16}$")]
    body: str
    createdAt: Time
    updatedAt: Time
    lastEditedAt: Time | None  # required: an absent one must never read as "never edited"
    url: Link = ""
    author: Author | None


class PageInfo(Wire):
    hasNextPage: bool
    endCursor: str | None


class CommentPage(Wire):
    pageInfo: PageInfo
    nodes: list[CommentNode]


class Item(Wire):
    comments: CommentPage


class Repository(Wire):
    issueOrPullRequest: Item | None


class ReceiptViewData(Wire):
    viewer: Viewer
    repository: Repository | None


class _DatabaseId(Wire):
    id: Id


class GraphQLClient:
    """One credential's GraphQL endpoint.  ``query`` returns the ``data`` object or raises
    ``ForgeError`` (``RateLimited``, ``MalformedResponse``; a query error names its message).
    ``client`` is the forge's HTTP client (its pool shared with REST); alone, it makes its own."""

    def __init__(
        self,
        url: str,
        token: str,
        clock: Clock,
        timeout_s: int,
        policy: RateLimitPolicy,
        client: Client | None = None,
    ) -> None:
        self._url, self._token, self._clock, self._timeout_s, self.policy = url, token, clock, timeout_s, policy
        self._client = client or Client()  # the one HTTP client, its pool shared with REST

    def query(self, name: str, query: str, variables: Mapping[str, Any] | None, bound: WaitBound) -> dict[str, Any]:
        """POST one query; ``name`` labels it in messages (``GraphQL viewer``)."""
        label = f"GraphQL {name}"
        if not self._url:
            raise ForgeError(f"{label}: no GraphQL URL (GITHUB_GRAPHQL_URL is unset)", None, transient=False)

        def send() -> Answer:
            return self._send(label, query, variables)

        answer = send_within_limits(self.policy, self._clock, label, "graphql", bound, send, retry_transient=True)
        if answer.status != 200:
            raise ForgeError(f"{label}: HTTP {answer.status} {_message(answer.text)}".strip(), answer.status)
        try:
            raw = json.loads(answer.text)
        except ValueError:
            raise MalformedResponse(label, "", "the answer was not JSON", 200) from None
        envelope = parse(Envelope, raw, label)
        if envelope.errors:
            raise ForgeError(
                f"{label}: {envelope.errors[0].message or 'an error without a message'}", None, transient=False
            )
        if envelope.data is None:
            raise MalformedResponse(label, "data", "neither data nor errors", 200)
        return envelope.data

    def _send(self, label: str, query: str, variables: Mapping[str, Any] | None) -> Answer:
        data = json.dumps(request_body(query, variables))
        headers = {"Authorization": f"Bearer {self._token}", "Content-Type": "application/json"}
        try:
            resp = self._client.send("POST", self._url, headers, data, self._timeout_s)
        except SendFailed as exc:
            raise Transient(f"{label} failed: {exc}") from None
        if 500 <= resp.status <= 504:
            raise Transient(f"{label}: HTTP {resp.status}", resp.status)
        return _answer(resp.status, resp.headers, resp.text)


def request_body(query: str, variables: Mapping[str, Any] | None) -> dict[str, Any]:
    """The JSON body of one GraphQL request."""
    body: dict[str, Any] = {"query": query}
    if variables:
        body["variables"] = dict(variables)
    return body


def _answer(status: int, headers: Mapping[str, str], text: str) -> Answer:
    if status == 200 and _rate_limited_errors(text):
        return Answer(429, headers, text)  # GitHub's GraphQL primary limit: 200 + RATE_LIMITED
    return Answer(status, headers, text)


def viewer_login(data: Mapping[str, Any], label: str = "GraphQL viewer") -> str:
    """The ``viewer.login`` of a query's ``data``; ``MalformedResponse`` when it is not there."""
    return parse(ViewerData, data, label).viewer.login


def receipt_page(data: Mapping[str, Any], label: str, noted: Noted | None = None) -> tuple[str, list[Comment], str]:
    """One page of the receipt view: ``(viewer login, comments, next cursor or "")``; ``noted``
    hears of each lenient field left out (``wire.parse``).

    Raises ``MalformedResponse`` for a defect, ``NotFoundError``-like ``ForgeError`` when the
    repository or item is not visible (GraphQL answers ``null`` for those).
    """
    view = parse(ReceiptViewData, data, label, noted=noted)
    item = view.repository.issueOrPullRequest if view.repository is not None else None
    if item is None:
        raise ForgeError(f"{label}: the repository or the item is not visible to this token", None, transient=False)
    comments = [_comment(node, label, i) for i, node in enumerate(item.comments.nodes)]
    info = item.comments.pageInfo
    cursor = (info.endCursor or "") if info.hasNextPage else ""
    if info.hasNextPage and not cursor:
        raise MalformedResponse(
            label, "repository.issueOrPullRequest.comments.pageInfo.endCursor", "null with a next page"
        )
    return view.viewer.login, comments, cursor


def _comment(node: CommentNode, label: str, index: int) -> Comment:
    comment_id = decimal_id(node.fullDatabaseId)
    parse(_DatabaseId, {"id": comment_id}, label + f" nodes[{index}].fullDatabaseId")
    author, kind = _author(node.author)
    return Comment(
        id=comment_id,
        body=runner_safe(node.body),
        author=author,
        author_type=kind,
        created_at=parse_time(node.createdAt),
        updated_at=parse_time(node.updatedAt),
        created_at_raw=node.createdAt,
        updated_at_raw=node.updatedAt,
        html_url=node.url,
        edited=node.lastEditedAt is not None,
    )


def _author(author: Author | None) -> tuple[str, str]:
    """GraphQL spells an App ``name`` with ``__typename`` ``Bot``; REST spells it ``name[bot]`` with
    ``type`` ``Bot`` (docs/architecture.md "Receipt reader").  Returns the REST spelling; unknown ⇒ ``("", "")``."""
    if author is None or not author.login or not author.typename:
        return "", ""
    if author.typename == "Bot":
        login = author.login if author.login.lower().endswith("[bot]") else author.login + "[bot]"
        return login, "Bot"
    return author.login, author.typename


def _rate_limited_errors(text: str) -> bool:
    try:
        raw = json.loads(text)
    except ValueError:
        return False
    errors = raw.get("errors") if isinstance(raw, dict) else None
    return isinstance(errors, list) and any(isinstance(e, dict) and e.get("type") == "RATE_LIMITED" for e in errors)


def _message(text: str) -> str:
    try:
        raw = json.loads(text)
    except ValueError:
        return ""
    msg = raw.get("message") if isinstance(raw, dict) else None
    return msg[:200] if isinstance(msg, str) else ""
