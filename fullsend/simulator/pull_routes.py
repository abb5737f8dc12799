"""``POST /repos/{o}/{r}/pulls``: open a pull request from a branch of the simulator's git server
(https://docs.github.com/en/rest/pulls/pulls#create-a-pull-request).

The body names ``title``, ``head`` (``branch`` or ``owner:branch``) and ``base`` (required),
``body`` and ``draft`` (optional).  GitHub's refusals the handler keeps: a missing field, or a
``head``/``base`` that is not a branch, is a 422 ``Validation Failed`` naming the field; a head
with the base's commit is a 422 ``No commits between <base> and <head>``.  The answer is 201 with
the pull request, authored by the token's identity, and the listeners hear ``pull_request``
``opened`` (``fullsend.simulator.events``).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from fullsend.simulator.replies import Call, Reply, error, validation_failed

if TYPE_CHECKING:  # pragma: no cover
    from fullsend.simulator.items import ItemsState


def _invalid(field: str) -> Reply:
    return validation_failed("Validation Failed", [{"resource": "PullRequest", "field": field, "code": "invalid"}])


def create_pull(sim: ItemsState, call: Call, m: re.Match[str]) -> Reply:
    """Open the pull request (module docstring); 422 when no git server resolves branches."""
    try:
        doc: Any = json.loads(call.body or b"{}")
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        return error(400, "Problems parsing JSON")
    for key in ("title", "head", "base"):
        if not isinstance(doc.get(key), str) or not doc[key].strip():
            return validation_failed(
                "Validation Failed", [{"resource": "PullRequest", "field": key, "code": "missing_field"}]
            )
    head_ref, base_ref = doc["head"].rpartition(":")[2], doc["base"]
    resolve = sim.branch_resolver
    head = resolve(head_ref) if resolve else None
    base = resolve(base_ref) if resolve else None
    if head is None:
        return _invalid("head")
    if base is None:
        return _invalid("base")
    if head == base:
        return validation_failed(
            "Validation Failed",
            [{"resource": "PullRequest", "code": "custom", "message": f"No commits between {base_ref} and {head_ref}"}],
        )
    number = sim.next_item_number()
    pr = sim.add_pull_request(
        number,
        head,
        title=doc["title"],
        body=str(doc.get("body") or ""),
        user=call.login,
        base_sha=base,
        head_ref=head_ref,
        base_ref=base_ref,
        draft=doc.get("draft") is True,
    )
    sim.notify("pull_request", action="opened", number=number, login=call.login)
    return Reply(201, sim.get_pull(number) or pr, {"Location": pr["url"]})
