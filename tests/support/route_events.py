"""Route test helpers: a webhook payload built from the variables the retired bash Route job read
(``ACTION``, ``SENDER``, ``COMMENT_BODY`` …, each what its workflow expression rendered), and the
decision against a fixed table of roles."""

from __future__ import annotations

import json
from typing import Any

from fullsend.core.route.decision import AskRole, Role, RouteDecision, decide
from fullsend.core.route.event import route_event

REPO = "org/repo"
#: The bash tests' collaborators; any other login has no role (GitHub answers 404).
ROLES = {"wendy": "write", "tom": "triage", "ann": "admin", "rita": "read", "author": "read"}
DEFAULTS = {
    "ACTION": "",
    "SENDER": "",
    "SENDER_TYPE": "User",
    "IS_PR": "false",
    "ISSUE_LABELS": "[]",
    "PR_LABELS": "null",
    "ISSUE_AUTHOR": "author",
    "LABEL": "",
    "COMMENT_BODY": "",
    "COMMENT_AUTHOR": "",
    "COMMENT_AUTHOR_TYPE": "User",
    "COMMENT_ASSOCIATION": "MEMBER",
    "PR_AUTHOR": "",
    "PR_AUTHOR_TYPE": "User",
    "PR_HEAD_REPO": "",
    "REVIEW_STATE": "",
    "REVIEW_AUTHOR": "",
}


def _labels(text: str) -> list[dict[str, str]] | None:
    names = json.loads(text)
    return None if names is None else [{"name": n} for n in names]


def payload(event: str, **env: str) -> dict[str, Any]:
    """The payload whose expressions render ``env`` (the bash tests' variables) for ``event``."""
    v = {**DEFAULTS, **env}
    data: dict[str, Any] = {"action": v["ACTION"], "sender": {"login": v["SENDER"], "type": v["SENDER_TYPE"]}}
    if event in ("issues", "issue_comment"):
        data["issue"] = {"number": 7, "user": {"login": v["ISSUE_AUTHOR"]}, "labels": _labels(v["ISSUE_LABELS"]) or []}
        if v["IS_PR"] == "true":
            data["issue"]["pull_request"] = {"url": f"https://api.github.com/repos/{REPO}/pulls/7"}
    if event in ("pull_request_target", "pull_request_review", "pull_request_review_comment"):
        data["pull_request"] = {
            "number": 7,
            "user": {"login": v["PR_AUTHOR"], "type": v["PR_AUTHOR_TYPE"]},
            "labels": _labels(v["PR_LABELS"]) or [],
            "head": {"repo": {"full_name": v["PR_HEAD_REPO"]}},
        }
    if v["LABEL"]:
        data["label"] = {"name": v["LABEL"]}
    if event in ("issue_comment", "pull_request_review_comment"):
        data["comment"] = {
            "body": v["COMMENT_BODY"],
            "author_association": v["COMMENT_ASSOCIATION"],
            "user": {"login": v["COMMENT_AUTHOR"], "type": v["COMMENT_AUTHOR_TYPE"]},
        }
    if event == "pull_request_review":
        data["review"] = {"state": v["REVIEW_STATE"], "user": {"login": v["REVIEW_AUTHOR"]}}
    return data


def decided(
    event: str, payload_: dict[str, Any], roles: dict[str, str] | None = None
) -> tuple[RouteDecision, list[str]]:
    """(decision, the logins whose role it asked for) for ``payload_``."""
    roles = ROLES if roles is None else roles
    routed = route_event(event, payload_, REPO)
    asked: list[str] = []
    decision = decide(routed)
    while isinstance(decision, AskRole):
        assert decision.login not in asked, "asked twice"
        asked.append(decision.login)
        decision = decide(routed, Role(decision.login, roles.get(decision.login, "none")))
    return decision, asked
