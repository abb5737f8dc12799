"""Webhook payloads (https://docs.github.com/en/webhooks/webhook-events-and-payloads), built from
the simulator's own records: what a workflow run reads as ``github.event``.

Every payload carries ``action``, ``repository`` and ``sender``; besides:

- ``pull_request`` (``opened``, ``synchronize`` …): ``number`` and ``pull_request``;
  ``synchronize`` adds ``before`` and ``after`` (the head before and after the push);
- ``issues`` (``opened`` …): ``issue``;
- ``issue_comment`` ``created``: ``issue`` and ``comment``;
- ``pull_request_review`` ``submitted``: ``review`` and ``pull_request``; the review's ``state`` is
  lower case in a webhook (``changes_requested``, ``approved``, ``commented``), unlike the REST
  answer's ``CHANGES_REQUESTED`` (https://docs.github.com/en/webhooks/webhook-events-and-payloads#pull_request_review).

``pull_request_target`` carries the payload of ``pull_request``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fullsend.simulator.shapes import full_repo_json, user_json

if TYPE_CHECKING:  # pragma: no cover
    from fullsend.simulator.items import ItemsState


def _common(sim: ItemsState, action: str, login: str) -> dict[str, Any]:
    kind = "Bot" if login.lower().endswith("[bot]") else "User"
    return {
        "action": action,
        "repository": full_repo_json(sim.urls, "2020-01-01T00:00:00Z"),
        "sender": user_json(sim.urls, login, kind),
    }


def payload(sim: ItemsState, event: str, data: dict[str, Any]) -> dict[str, Any]:
    """The payload of ``event`` for the ``data`` a ``notify`` call carried (``action``, ``number``,
    ``login`` and the records).  Raises ``KeyError`` for an event not modelled here."""
    out = _common(sim, str(data["action"]), str(data["login"]))
    number = int(data["number"])
    if event in ("pull_request", "pull_request_target"):
        out.update(number=number, pull_request=sim.get_pull(number))
        if data["action"] == "synchronize":
            out.update(before=data["before"], after=data["after"])
        return out
    if event == "issues":
        out.update(issue=sim.get_issue(number))
        return out
    if event == "issue_comment":
        out.update(issue=sim.get_issue(number), comment=data["comment"])
        return out
    if event == "pull_request_review":
        review = {**data["review"], "state": str(data["review"]["state"]).lower()}
        out.update(review=review, pull_request=sim.get_pull(number))
        return out
    raise KeyError(event)
