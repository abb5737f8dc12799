"""The scripted agent's pi rpc mode (``--mode rpc``; docs/architecture.md "pi").

Selected by ``fullsend.simulator.agent.main`` when ``--mode rpc`` is on its argv.  Each
``prompt`` command read on stdin is answered with a ``response`` (``success:true``, or
``success:false`` when its message contains ``SCRIPTED_AGENT_REJECT``, or when it arrives while
the agent is streaming without ``streamingBehavior``).  An accepted prompt while idle starts an
``agent_start … agent_settled`` cycle of ``SCRIPTED_AGENT_TURN_S`` seconds; a ``steer`` prompt
during a cycle is acknowledged at once (``queue_update``) and answered as one more turn before
``agent_end``.  Every other command gets a successful response and is otherwise ignored.  It
exits 0 when stdin closes and no cycle is running.
"""

from __future__ import annotations

import os
import queue
import threading
from typing import Any

from fullsend.simulator.agent.main import _EOF, _log, _Out, _read_stdin


class PiScript:
    """pi rpc behaviour (see the module docstring)."""

    def __init__(self, out: _Out) -> None:
        self.out = out
        self.inbox: queue.Queue[object] = queue.Queue()
        self.turn_s = float(os.environ.get("SCRIPTED_AGENT_TURN_S", "2.0"))
        self.reject = os.environ.get("SCRIPTED_AGENT_REJECT", "")
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
                self._cycle([str(item.get("message", ""))])
        return int(os.environ.get("SCRIPTED_AGENT_EXIT_CODE", "0"))

    def _respond(self, cmd: dict[str, Any], success: bool, error: str = "") -> None:
        resp: dict[str, Any] = {"type": "response", "command": cmd.get("type", ""), "success": success}
        if "id" in cmd:
            resp = {"id": cmd["id"], **resp}
        if error:
            resp["error"] = error
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
        _log(message)
        self._respond(cmd, True)
        return True

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
                self.out.emit({"type": "queue_update", "steering": [item.get("message", "")], "followUp": []})
        timer.cancel()

    def _turn(self, queued: list[str]) -> None:
        self.turns += 1
        self.out.emit({"type": "turn_start"})
        self._work(queued)
        message = {"role": "assistant", "stopReason": "stop",
                   "content": [{"type": "text", "text": f"turn {self.turns} done"}],
                   "usage": {"input": 10, "output": 2, "cacheRead": 0, "cacheWrite": 0, "cost": {"total": 0.001}}}
        self.out.emit({"type": "message_end", "message": message})
        self.out.emit({"type": "turn_end", "message": message, "toolResults": []})

    def _cycle(self, first: list[str]) -> None:
        self.out.emit({"type": "agent_start"})
        queued: list[str] = []
        self._turn(queued)
        while queued:
            queued.pop(0)
            self._turn(queued)
        self.out.emit({"type": "agent_end", "messages": [], "willRetry": False})
        self.out.emit({"type": "agent_settled"})
