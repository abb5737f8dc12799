"""What GitHub refuses in ``POST …/pulls/{n}/reviews`` (the handler is ``routes.create_review``).

GitHub's rules the handler keeps: ``event`` ``APPROVE``, ``REQUEST_CHANGES`` or ``COMMENT``
(absent: a ``PENDING`` review); a ``body`` is required for ``REQUEST_CHANGES`` and ``COMMENT``;
each comment needs a ``path``, a ``body`` and a ``line`` of 1 or more (``side`` ``LEFT`` or
``RIGHT``, ``start_line`` below ``line``); ``commit_id`` defaults to the head, and one that was
never a head of the pull request is a 422; so is an ``APPROVE`` or ``REQUEST_CHANGES`` by the pull
request's own author ("Review Can not request changes on your own pull request": one App cannot
request changes on a pull request it opened, https://docs.github.com/en/pull-requests/collaborating-with-pull-requests/reviewing-changes-in-pull-requests/approving-a-pull-request-with-required-reviews
"Pull request authors cannot approve their own pull requests").  The answer is 200 with the
review.  Which lines are in the diff is not modelled.
"""

from __future__ import annotations

from typing import Any

STATES = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED"}


def _comment_problem(i: int, c: Any) -> str | None:
    if not isinstance(c, dict):
        return f"comments[{i}] is not an object"
    if not isinstance(c.get("path"), str) or not c["path"]:
        return f"comments[{i}].path is required"
    if not isinstance(c.get("body"), str) or not c["body"]:
        return f"comments[{i}].body is required"
    line = c.get("line")
    if not isinstance(line, int) or isinstance(line, bool) or line < 1:
        return f"comments[{i}].line must be a line number"
    if c.get("side", "RIGHT") not in ("LEFT", "RIGHT"):
        return f"comments[{i}].side must be LEFT or RIGHT"
    start = c.get("start_line")
    if start is not None and (not isinstance(start, int) or isinstance(start, bool) or not 1 <= start < line):
        return f"comments[{i}].start_line must be below line"
    return None


def review_problem(doc: dict[str, Any]) -> str | None:
    """What GitHub would answer 422 for in this request body, or ``None``."""
    event = doc.get("event")
    if event is not None and event not in STATES:
        return "event must be APPROVE, REQUEST_CHANGES or COMMENT"
    if event in ("REQUEST_CHANGES", "COMMENT") and not (isinstance(doc.get("body"), str) and doc["body"].strip()):
        return f"body is required for {event}"
    comments = doc.get("comments", [])
    if not isinstance(comments, list):
        return "comments must be an array"
    return next((p for i, c in enumerate(comments) if (p := _comment_problem(i, c))), None)


def own_pull_refusal(doc: dict[str, Any], author: dict[str, Any], login: str) -> str:
    """GitHub's refusal when ``login`` approves or requests changes on a pull request it authored
    (``author`` is the pull request's ``user``), else ``""``."""
    if str(author.get("login", "")).lower() != login.lower():
        return ""
    event = doc.get("event")
    if event == "REQUEST_CHANGES":
        return "Review Can not request changes on your own pull request"
    if event == "APPROVE":
        return "Review Can not approve your own pull request"
    return ""
