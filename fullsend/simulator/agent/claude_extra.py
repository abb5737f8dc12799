"""The scripted Claude agent's extra lines: background tasks and lines a test writes itself
(docs/architecture.md "Claude Code"; the shapes are the pinned Claude Code's).

``SCRIPTED_AGENT_LINES``  JSON ``{"turn": [...], "end": [...]}``: objects written as they are, in
                          every turn before its ``result`` (``turn``), and once stdin is closed and
                          the last turn ended, before the exit (``end``)
``SCRIPTED_AGENT_TASK``   JSON ``{"type": "local_agent", "description": …, "seconds": S}``: the
                          first turn starts one background task (``task_started``) that finishes S
                          seconds later; once stdin is closed the agent waits for it as Claude Code
                          does, at most ``CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS`` (its default when
                          unset, 0: without end), then ends it ``completed`` and runs the
                          task-notification turn, or stops it (``stopped``) at the ceiling
``SCRIPTED_AGENT_SILENT``  ``1``: the turns write no assistant message (a prompt a hook blocked)

This is a test program, not part of the action: it reads its own clock.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any

DEFAULT_CEILING_MS = 600_000  # the pinned CLI's default wait ceiling
Emit = Callable[[dict[str, Any]], None]


def extra_lines(where: str) -> list[dict[str, Any]]:
    """The ``SCRIPTED_AGENT_LINES`` objects for ``where`` (``turn`` or ``end``)."""
    spec = json.loads(os.environ.get("SCRIPTED_AGENT_LINES") or "{}")
    lines = spec.get(where) or []
    return [line for line in lines if isinstance(line, dict)]


def silent() -> bool:
    """True when the turns write no assistant message."""
    return os.environ.get("SCRIPTED_AGENT_SILENT") == "1"


class BackgroundTask:
    """The one background task of ``SCRIPTED_AGENT_TASK`` (or none)."""

    def __init__(self, emit: Emit, session_id: str) -> None:
        spec = json.loads(os.environ.get("SCRIPTED_AGENT_TASK") or "null")
        self.spec: dict[str, Any] | None = spec if isinstance(spec, dict) else None
        self._emit, self._session = emit, session_id
        self._started = 0.0
        self._done = threading.Event()

    def start(self) -> None:
        """Start it (once): ``task_started``, then it finishes by itself after its seconds."""
        if self.spec is None or self._started:
            return
        self._started = time.monotonic()
        self._emit(self._line("task_started", is_backgrounded=True))
        timer = threading.Timer(float(self.spec.get("seconds", 1)), self._done.set)
        timer.daemon = True
        timer.start()

    def wind_down(self) -> bool:
        """After stdin closed: wait for it within the ceiling; returns True when it completed (a
        task-notification turn is due), False when it was stopped or there is none."""
        if self.spec is None or not self._started:
            return False
        ceiling_ms = int(os.environ.get("CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS") or DEFAULT_CEILING_MS)
        completed = self._done.wait(ceiling_ms / 1000 if ceiling_ms > 0 else None)
        self._emit(self._line("task_notification", status="completed" if completed else "stopped"))
        self._emit({"type": "system", "subtype": "background_tasks_changed", "tasks": [], "session_id": self._session})
        return completed

    def _line(self, subtype: str, **fields: Any) -> dict[str, Any]:
        assert self.spec is not None
        return {
            "type": "system",
            "subtype": subtype,
            "task_id": "scripted-task-1",
            "task_type": self.spec.get("type", "local_agent"),
            "description": self.spec.get("description", "scripted task"),
            "session_id": self._session,
            **fields,
        }
