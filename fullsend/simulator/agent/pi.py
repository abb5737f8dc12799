"""The scripted agent's pi rpc mode (``--mode rpc``; docs/architecture.md "pi", the pi 1.x rpc contract).

Selected by ``fullsend.simulator.agent.main`` when ``--mode rpc`` is on its argv.  Each
``prompt`` command read on stdin is answered with a ``response``: ``success:false`` when its
message contains ``SCRIPTED_AGENT_REJECT`` or when it arrives while the agent is streaming
without ``streamingBehavior``; otherwise ``success:true`` with ``data.disposition`` ``started``
(idle: it starts a cycle) or ``queued`` (streaming: a steer).  A delivered prompt is written as
a user ``message_start``/``message_end`` with its text, as pi does: the opening prompt when its
cycle starts, a queued steer when the next turn takes it.  An accepted prompt while idle starts
an ``agent_start … agent_settled`` cycle of ``SCRIPTED_AGENT_TURN_S`` seconds; each queued steer
is answered as one more turn before ``agent_end``.  Every other command gets a successful
response and is otherwise ignored.  It exits 0 when stdin closes and no cycle is running.

Terminal-state knobs: ``SCRIPTED_AGENT_RESULT`` (a JSON object merged into the last
assistant message of every cycle, e.g. ``{"stopReason": "aborted", "content": []}``) and
``SCRIPTED_PI_SETTLED`` (a JSON object merged into every ``agent_settled``);
``SCRIPTED_PI_SILENT_AFTER_STEER=1``: the turn that takes a steer writes no assistant message
(the cycle settles with the steer unanswered).
"""

from __future__ import annotations

import json
import os
import queue
import threading
from typing import Any

from fullsend.simulator.agent.main import _EOF, _log, _Out, _read_stdin


def _knob(name: str) -> dict[str, Any]:
    raw = os.environ.get(name, "")
    return json.loads(raw) if raw else {}


class PiScript:
    """pi rpc behaviour (see the module docstring)."""

    def __init__(self, out: _Out) -> None:
        self.out = out
        self.inbox: queue.Queue[object] = queue.Queue()
        self.turn_s = float(os.environ.get("SCRIPTED_AGENT_TURN_S", "2.0"))
        self.reject = os.environ.get("SCRIPTED_AGENT_REJECT", "")
        self.result_patch = _knob("SCRIPTED_AGENT_RESULT")
        self.settled_patch = _knob("SCRIPTED_PI_SETTLED")
        self.eof = False
        self.turns = 0

    def run(self) -> int:
        threading.Thread(target=_read_stdin, args=(self.inbox,), daemon=True).start()
        while not self.eof:
            item = self.inbox.get()
            if item is _EOF:
                break
            assert isinstance(item, dict)
            if self._accept(item, streaming=False):
                self._cycle(str(item.get("message", "")))
        return int(os.environ.get("SCRIPTED_AGENT_EXIT_CODE", "0"))

    def _respond(self, cmd: dict[str, Any], success: bool, error: str = "", disposition: str = "") -> None:
        resp: dict[str, Any] = {"type": "response", "command": cmd.get("type", ""), "success": success}
        if "id" in cmd:
            resp = {"id": cmd["id"], **resp}
        if error:
            resp["error"] = error
        if disposition:
            resp["data"] = {"disposition": disposition}
        self.out.emit(resp)

    def _accept(self, cmd: dict[str, Any], streaming: bool) -> bool:
        if cmd.get("type") != "prompt":
            self._respond(cmd, True)
            return False
        message = str(cmd.get("message", ""))
        if self.reject and self.reject in message:
            self._respond(cmd, False, "prompt rejected by the scripted agent")
            return False
        if streaming and cmd.get("streamingBehavior") not in ("steer", "followUp"):
            self._respond(cmd, False, "Agent is already processing")
            return False
        self._respond(cmd, True, disposition="queued" if streaming else "started")
        return True

    def _deliver(self, text: str) -> None:
        """pi writes a delivered prompt as a user message; the log records what the model got."""
        _log(text)
        message = {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0}
        self.out.emit({"type": "message_start", "message": message})
        self.out.emit({"type": "message_end", "message": message})

    def _work(self, queued: list[str]) -> None:
        done = threading.Event()
        timer = threading.Timer(self.turn_s, done.set)
        timer.start()
        while not done.is_set():
            try:
                item = self.inbox.get(timeout=0.01)
            except queue.Empty:
                continue
            if item is _EOF:
                self.eof = True
                done.wait()
            elif isinstance(item, dict) and self._accept(item, streaming=True):
                queued.append(str(item.get("message", "")))
                self.out.emit({"type": "queue_update", "steering": list(queued), "followUp": []})
        timer.cancel()

    def _turn(self, queued: list[str], steered: bool = False) -> None:
        self.turns += 1
        self.out.emit({"type": "turn_start"})
        self._work(queued)
        if steered and os.environ.get("SCRIPTED_PI_SILENT_AFTER_STEER") == "1":
            self.out.emit({"type": "turn_end", "toolResults": []})
            return
        message = {
            "role": "assistant",
            "stopReason": "stop",
            "content": [{"type": "text", "text": f"turn {self.turns} done"}],
            "usage": {"input": 10, "output": 2, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0.001}},
        }
        if not queued:  # the cycle's last turn
            message.update(self.result_patch)
        self.out.emit({"type": "message_end", "message": message})
        self.out.emit({"type": "turn_end", "message": message, "toolResults": []})

    def _cycle(self, first: str) -> None:
        self.out.emit({"type": "agent_start"})
        self._deliver(first)
        queued: list[str] = []
        self._turn(queued)
        while queued:
            steer = queued.pop(0)
            self.out.emit({"type": "queue_update", "steering": list(queued), "followUp": []})
            self._deliver(steer)
            self._turn(queued, steered=True)
        self.out.emit({"type": "agent_end", "messages": [], "willRetry": False})
        self.out.emit({"type": "agent_settled", "aborted": False, **self.settled_patch})
