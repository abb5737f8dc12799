"""The scripted agent's log: one JSON line per consumed message, work step or hook run.

``SCRIPTED_AGENT_LOG`` names a file the lines are appended to, or an ``http://`` URL each line is
POSTed to (the adopter-path plays collect the lines in the simulator on loopback).  This module
never talks to GitHub, so it opens its one connection with the standard library rather than the
GitHub client (tests/test_layers.py holds that exception to this sentence).
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from typing import Any


def now_text() -> str:
    """The current UTC time as ``YYYY-MM-DDTHH:MM:SS.ffffffZ``."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def log_record(record: dict[str, Any]) -> None:
    """Write ``{"at": now, **record}`` as one JSON line where ``SCRIPTED_AGENT_LOG`` says; nothing
    when it is unset.  Raises OSError (``urllib.error.URLError`` included) when the target refuses."""
    target = os.environ.get("SCRIPTED_AGENT_LOG")
    if not target:
        return
    line = json.dumps({"at": now_text(), **record}, ensure_ascii=False)
    if target.startswith("http://"):
        import urllib.request  # only the plays post their log: the agent's start stays light

        request = urllib.request.Request(target, data=line.encode(), method="POST")
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=30):
            return
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(line + "\n")
