"""The scripted agent's Codex mode (``exec --json … [resume <thread_id>] -``; docs/architecture.md "Codex").

Selected by ``fullsend.simulator.agent.main`` when ``exec`` is its first argument.  It reads
its whole stdin (the prompt, or the steer envelope for a resume), logs it like the Claude mode,
prints ``thread.started`` (the resumed id, or a fresh one), ``turn.started``, works for
``SCRIPTED_AGENT_TURN_S`` seconds, then ``item.completed`` (an agent message) and
``turn.completed`` with usage, and exits 0.

Knobs besides the common ones: ``SCRIPTED_CODEX_FIRST_EXIT`` (the first process exits with it
at once, before any event), ``SCRIPTED_CODEX_RESUME_EXIT`` (a resume does the same),
``SCRIPTED_CODEX_RESUME_TURN_S`` (seconds of work of a resume; default ``SCRIPTED_AGENT_TURN_S``),
``SCRIPTED_CODEX_LINGER_S`` (seconds to stay alive after ``turn.completed``; the first process
only: ``SCRIPTED_CODEX_FIRST_LINGER_S``),
``SCRIPTED_AGENT_RESULT`` (a JSON object written instead of ``turn.completed``, e.g.
``{"type": "turn.failed", "error": {"message": "…"}}``; ``{}`` writes no terminal event, as codex
does for an interrupted turn), ``SCRIPTED_CODEX_FIRST_RESULT`` (the same, for the first process only),
``SCRIPTED_CODEX_FIRST_EVENTS`` / ``SCRIPTED_CODEX_RESUME_EVENTS`` (a JSON array written right
after ``turn.started`` of the first process / of a resume: an object as one JSON line, a string
as a raw line; by default one ``reasoning`` item; ``SCRIPTED_CODEX_EVENTS_AFTER_S`` seconds
after it, then the turn's work),
``SCRIPTED_CODEX_RESUME_THREAD_ID`` (the thread a resume reports instead of the
one it was asked for; ``new`` is a fresh id, as a codex that found no rollout starts a new
thread), ``SCRIPTED_CODEX_TERMINAL_FLAG`` (a file created once the terminal line is out),
``SCRIPTED_CODEX_EVENTS_FLAG`` (a file created once those events are out: the turn can be
resumed), ``SCRIPTED_CODEX_ON_TERM`` (a JSON object the process writes when it is sent SIGTERM, then exits
143: a line that arrives while the action's stop is still in progress).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import uuid
from pathlib import Path

from fullsend.simulator.agent.main import _log, _Out

USAGE = {
    "input_tokens": 100,
    "cached_input_tokens": 40,
    "cache_write_input_tokens": 0,
    "output_tokens": 12,
    "reasoning_output_tokens": 2,
}


#: What a turn writes first by default, as a real one does once the model answered: a reasoning item.
FIRST_ITEM = {"type": "item.completed", "item": {"id": "item_r", "type": "reasoning", "text": "Reading the task."}}


class CodexScript:
    """Codex ``exec --json`` behaviour (see the module docstring)."""

    def __init__(self, out: _Out, argv: list[str]) -> None:
        self.out = out
        self.resume_id = argv[argv.index("resume") + 1] if "resume" in argv[:-1] else ""
        turn_s = os.environ.get("SCRIPTED_AGENT_TURN_S", "2.0")
        if self.resume_id:
            turn_s = os.environ.get("SCRIPTED_CODEX_RESUME_TURN_S", turn_s)
        self.turn_s = float(turn_s)

    def _knob(self, first: str, resume: str = "", default: str = "") -> str:
        """The first process's knob ``first``, a resume's ``resume`` (each falling back to ``default``)."""
        name = resume if self.resume_id else first
        return os.environ.get(name, default) if name else default

    def _thread_id(self) -> str:
        reported = os.environ.get("SCRIPTED_CODEX_RESUME_THREAD_ID", "") if self.resume_id else ""
        if reported == "new":
            return str(uuid.uuid4())
        return reported or self.resume_id or str(uuid.uuid4())

    def _extra_events(self) -> None:
        default = json.dumps([FIRST_ITEM])
        for entry in json.loads(self._knob("SCRIPTED_CODEX_FIRST_EVENTS", "SCRIPTED_CODEX_RESUME_EVENTS", default)):
            if isinstance(entry, str):
                sys.stdout.write(entry + "\n")
                sys.stdout.flush()
            else:
                self.out.emit(entry)

    def run(self) -> int:
        forced = os.environ.get("SCRIPTED_CODEX_RESUME_EXIT" if self.resume_id else "SCRIPTED_CODEX_FIRST_EXIT")
        prompt = sys.stdin.buffer.read().decode("utf-8", errors="replace")
        if forced:
            return int(forced)
        _log(prompt)
        on_term = os.environ.get("SCRIPTED_CODEX_ON_TERM", "")
        if on_term:

            def last_word(_sig: int, _frame: object) -> None:
                self.out.emit(json.loads(on_term))
                os._exit(143)

            signal.signal(signal.SIGTERM, last_word)
        self.out.emit({"type": "thread.started", "thread_id": self._thread_id()})
        self.out.emit({"type": "turn.started"})
        threading.Event().wait(float(os.environ.get("SCRIPTED_CODEX_EVENTS_AFTER_S", "0")))
        self._extra_events()
        events_flag = os.environ.get("SCRIPTED_CODEX_EVENTS_FLAG")
        if events_flag:
            Path(events_flag).touch()
        threading.Event().wait(self.turn_s)
        self.out.emit({"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": "done"}})
        terminal: dict[str, object] = {"type": "turn.completed", "usage": USAGE}
        patch = self._knob("SCRIPTED_CODEX_FIRST_RESULT") or os.environ.get("SCRIPTED_AGENT_RESULT")
        terminal = json.loads(patch) if patch else terminal
        if terminal:
            self.out.emit(terminal)
        flag = os.environ.get("SCRIPTED_CODEX_TERMINAL_FLAG")
        if flag:
            Path(flag).touch()
        linger = self._knob("SCRIPTED_CODEX_FIRST_LINGER_S", "", os.environ.get("SCRIPTED_CODEX_LINGER_S", "0"))
        threading.Event().wait(float(linger))
        return int(os.environ.get("SCRIPTED_AGENT_EXIT_CODE", "0"))
