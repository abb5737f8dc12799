"""The scripted agent's Codex mode (``exec --json … [resume <thread_id>] -``; docs/architecture.md "Codex").

Selected by ``fullsend.simulator.agent.main`` when ``exec`` is its first argument.  It reads
its whole stdin (the prompt, or the steer envelope for a resume), logs it like the Claude mode,
prints ``thread.started`` (the resumed id, or a fresh one), ``turn.started``, works for
``SCRIPTED_AGENT_TURN_S`` seconds, then ``item.completed`` (an agent message) and
``turn.completed`` with usage, and exits 0.

Knobs besides the common ones: ``SCRIPTED_CODEX_FIRST_EXIT`` (the first process exits with it
at once, before any event), ``SCRIPTED_CODEX_RESUME_EXIT`` (a resume does the same),
``SCRIPTED_CODEX_RESUME_TURN_S`` (seconds of work of a resume; default ``SCRIPTED_AGENT_TURN_S``),
``SCRIPTED_CODEX_LINGER_S`` (seconds to stay alive after ``turn.completed``),
``SCRIPTED_AGENT_RESULT`` (a JSON object written instead of ``turn.completed``, e.g.
``{"type": "turn.failed", "error": {"message": "…"}}``; ``{}`` writes no terminal event, as codex
does for an interrupted turn), ``SCRIPTED_CODEX_FIRST_RESULT`` (the same, for the first process only).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import uuid

from fullsend.simulator.agent.main import _log, _Out


class CodexScript:
    """Codex ``exec --json`` behaviour (see the module docstring)."""

    def __init__(self, out: _Out, argv: list[str]) -> None:
        self.out = out
        self.resume_id = argv[argv.index("resume") + 1] if "resume" in argv[:-1] else ""
        turn_s = os.environ.get("SCRIPTED_AGENT_TURN_S", "2.0")
        if self.resume_id:
            turn_s = os.environ.get("SCRIPTED_CODEX_RESUME_TURN_S", turn_s)
        self.turn_s = float(turn_s)

    def run(self) -> int:
        forced = os.environ.get("SCRIPTED_CODEX_RESUME_EXIT" if self.resume_id else "SCRIPTED_CODEX_FIRST_EXIT")
        prompt = sys.stdin.buffer.read().decode("utf-8", errors="replace")
        if forced:
            return int(forced)
        _log(prompt)
        thread_id = self.resume_id or str(uuid.uuid4())
        self.out.emit({"type": "thread.started", "thread_id": thread_id})
        self.out.emit({"type": "turn.started"})
        threading.Event().wait(self.turn_s)
        self.out.emit({"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": "done"}})
        terminal = {
            "type": "turn.completed",
            "usage": {
                "input_tokens": 100,
                "cached_input_tokens": 40,
                "cache_write_input_tokens": 0,
                "output_tokens": 12,
                "reasoning_output_tokens": 2,
            },
        }
        first = "" if self.resume_id else os.environ.get("SCRIPTED_CODEX_FIRST_RESULT", "")
        patch = first or os.environ.get("SCRIPTED_AGENT_RESULT")
        terminal = json.loads(patch) if patch else terminal
        if terminal:
            self.out.emit(terminal)
        threading.Event().wait(float(os.environ.get("SCRIPTED_CODEX_LINGER_S", "0")))
        return int(os.environ.get("SCRIPTED_AGENT_EXIT_CODE", "0"))
