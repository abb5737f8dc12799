"""``POST /repos/{o}/{r}/issues``: open an issue (https://docs.github.com/en/rest/issues/issues#create-an-issue).

The body names ``title`` (required), ``body`` and ``labels`` (names).  A missing title is GitHub's
422 ``Validation Failed``.  The answer is 201 with the issue, authored by the token's identity, and
the listeners hear ``issues`` ``opened`` (``fullsend.simulator.events``).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from fullsend.simulator.replies import Call, Reply, error, validation_failed

if TYPE_CHECKING:  # pragma: no cover
    from fullsend.simulator.items import ItemsState


def create_issue(sim: ItemsState, call: Call, m: re.Match[str]) -> Reply:
    """Open the issue (module docstring)."""
    try:
        doc: Any = json.loads(call.body or b"{}")
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        return error(400, "Problems parsing JSON")
    if not isinstance(doc.get("title"), str) or not doc["title"].strip():
        return validation_failed(
            "Validation Failed", [{"resource": "Issue", "field": "title", "code": "missing_field"}]
        )
    labels = [str(name) for name in doc.get("labels") or [] if isinstance(name, str)]
    number = sim.next_item_number()
    issue = sim.add_issue(number, doc["title"], str(doc.get("body") or ""), labels, call.login)
    sim.notify("issues", action="opened", number=number, login=call.login)
    return Reply(201, sim.get_issue(number) or issue, {"Location": issue["url"]})
