"""Runs GitHub gives a read-only job token and no secrets: pull requests from forks and Dependabot.

In such a run nothing can be posted under a role token and no receipt can be trusted, so the
action says once that receipts and the status comment are off and does the work
(docs/adopting.md "Forks and Dependabot").  Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DEPENDABOT_LOGIN = "dependabot[bot]"
_PR_EVENTS = ("pull_request", "pull_request_review", "pull_request_review_comment")


def restricted_run(event_name: str, event: Mapping[str, Any], repository: str, actor: str) -> str:
    """Why this run has a read-only job token and no secrets, or "" when it has not.

    ``event`` is the webhook payload, ``repository`` ``GITHUB_REPOSITORY`` and ``actor``
    ``GITHUB_ACTOR``.  A fork: a pull-request event whose head repository differs from
    ``repository``.  Dependabot: ``actor`` is ``dependabot[bot]``.
    """
    if actor == DEPENDABOT_LOGIN:
        return "a Dependabot run"
    if event_name not in _PR_EVENTS:
        return ""
    pr = event.get("pull_request")
    head = pr.get("head") if isinstance(pr, Mapping) else None
    head_repo = head.get("repo") if isinstance(head, Mapping) else None
    name = head_repo.get("full_name") if isinstance(head_repo, Mapping) else None
    if isinstance(name, str) and name and repository and name.lower() != repository.lower():
        return "a pull request from a fork"
    return ""
