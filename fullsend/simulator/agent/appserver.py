"""The scripted agent's ``codex app-server`` mode (docs/architecture.md "Codex").

Selected by ``fullsend.simulator.agent.main`` when ``app-server`` is its first argument.  It
answers JSON-RPC lines on stdin as our model of the real app-server does (the real-CLI tests are
the oracle): ``initialize``; ``thread/start`` (a fresh thread, ``thread/started``); ``turn/start``
starts a turn, or joins the active one; ``turn/steer`` joins the active turn when it names it,
and is refused with ``no active turn to steer`` otherwise.  A turn emits ``turn/started``, one
``userMessage`` item per input it takes (its ``clientId`` is the request's
``clientUserMessageId``), works ``SCRIPTED_AGENT_TURN_S`` seconds (input that joins it is taken
at the end of that step, then answered with half a step more), then an ``agentMessage`` item,
``thread/tokenUsage/updated`` and ``turn/completed``.  At EOF it exits at once, a running turn
cut off without its ``turn/completed`` (as the real app-server does), with
``SCRIPTED_AGENT_EXIT_CODE`` (default 0).

``SCRIPTED_AGENT_RESULT`` is a JSON object merged into every completed ``turn`` (e.g.
``{"status": "failed", "error": {"message": "…", "codexErrorInfo": "usageLimitExceeded"}}``).
``SCRIPTED_APP_SERVER_SUBAGENT=1``: at the start of each turn a sub-agent thread reports a whole
turn of its own on the same connection (``turn/started``, a ``userMessage`` without
``clientId``, ``turn/completed``), as Codex's multi-agent tools do.
``SCRIPTED_APP_SERVER_SPAWN=<seconds>:<status>``: the first turn spawns a sub-agent as the pinned
Codex reports it (a ``collabAgentToolCall`` spawn item naming the new thread ``pendingInit``) and
completes without waiting for it; the sub-agent's own turn (its ``rootTurnId`` the spawning turn)
runs ``<seconds>`` and completes with ``<status>`` (``completed``, ``failed``, ``interrupted``),
unless the input closes first: then it dies with the server, as a real sub-agent does.
``SCRIPTED_APP_SERVER_DECLINE=<command>``: the first turn reports that command ``declined`` (a
``commandExecution`` item); ``SCRIPTED_APP_SERVER_APPROVAL=<command>``: the first turn asks the
client to approve it (``item/commandExecution/requestApproval``) and waits for the answer.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import uuid
from typing import Any

from fullsend.simulator.agent.main import _EOF, _log, _Out, _read_stdin


def _obj(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class AppServerScript:
    """``codex app-server`` behaviour (see the module docstring)."""

    def __init__(self, out: _Out) -> None:
        self.out = out
        self.inbox: queue.Queue[object] = queue.Queue()
        self.turn_s = float(os.environ.get("SCRIPTED_AGENT_TURN_S", "2.0"))
        self.patch = json.loads(os.environ.get("SCRIPTED_AGENT_RESULT") or "{}")
        self.thread_id = ""
        self.turn_id = ""
        self.joined: list[dict[str, Any]] = []  # inputs that joined the running turn
        self.tokens = 0
        self.eof = False
        self.spawned = False

    def run(self) -> int:
        threading.Thread(target=_read_stdin, args=(self.inbox,), daemon=True).start()
        while not self.eof:
            item = self.inbox.get()
            if item is _EOF:
                break
            self._request(item)
        return int(os.environ.get("SCRIPTED_AGENT_EXIT_CODE", "0"))

    def _request(self, obj: object) -> None:
        """Answer one line between turns (a ``turn/start`` runs its whole turn here)."""
        assert isinstance(obj, dict)
        method, rid = obj.get("method"), obj.get("id")
        params = _obj(obj.get("params"))
        if method == "initialize":
            self.out.emit({"id": rid, "result": {"userAgent": "scripted/0", "platformOs": "linux"}})
        elif method == "thread/start":
            self.thread_id = str(uuid.uuid4())
            thread = {"id": self.thread_id, "status": {"type": "idle"}}
            model = params.get("model") or "scripted-model"
            self.out.emit(
                {
                    "id": rid,
                    "result": {
                        "thread": thread,
                        "model": model,
                        "modelProvider": "fake",
                        "approvalPolicy": "never",
                        "sandbox": {"type": "dangerFullAccess"},
                    },
                }
            )
            self.out.emit({"method": "thread/started", "params": {"thread": thread}})
        elif method == "turn/start":
            self._turn(rid, params)
        elif method == "turn/steer":
            self.out.emit({"id": rid, "error": {"code": -32600, "message": "no active turn to steer"}})
        elif rid is not None:
            self.out.emit({"id": rid, "error": {"code": -32601, "message": f"scripted: no method {method}"}})

    def _turn(self, rid: object, params: dict[str, Any]) -> None:
        self.turn_id = str(uuid.uuid4())
        turn: dict[str, Any] = {"id": self.turn_id, "items": [], "status": "inProgress", "error": None}
        self.out.emit({"id": rid, "result": {"turn": turn}})
        self.out.emit({"method": "turn/started", "params": {"threadId": self.thread_id, "turn": turn}})
        self._take(params)
        if os.environ.get("SCRIPTED_APP_SERVER_SUBAGENT") == "1":
            self._sub_agent_turn()
        spawn = os.environ.get("SCRIPTED_APP_SERVER_SPAWN", "")
        if not self.spawned:
            self.spawned = True
            if spawn:
                self._spawn(*spawn.split(":", 1))
            self._refusals()
        self._work(self.turn_s)
        if self.joined:
            for joined in self.joined:
                self._take(joined)
            self.joined = []
            self._work(self.turn_s / 2)
        self._finish(turn)

    def _sub_agent_turn(self) -> None:
        """Another thread's whole turn, reported on this connection (a sub-agent)."""
        thread, turn = str(uuid.uuid4()), {"id": str(uuid.uuid4()), "items": [], "status": "inProgress"}
        item = {
            "type": "userMessage",
            "id": str(uuid.uuid4()),
            "clientId": None,
            "content": [{"type": "text", "text": "sub-agent task"}],
        }
        self.out.emit({"method": "turn/started", "params": {"threadId": thread, "turn": turn}})
        self.out.emit({"method": "item/started", "params": {"item": item, "threadId": thread, "turnId": turn["id"]}})
        self.out.emit(
            {"method": "turn/completed", "params": {"threadId": thread, "turn": {**turn, "status": "completed"}}}
        )

    def _refusals(self) -> None:
        """A declined command item, and an approval request answered before the turn goes on."""
        where = {"threadId": self.thread_id, "turnId": self.turn_id}
        declined = os.environ.get("SCRIPTED_APP_SERVER_DECLINE", "")
        if declined:
            item = {"type": "commandExecution", "id": f"call_{uuid.uuid4().hex[:12]}", "command": declined}
            self.out.emit({"method": "item/started", "params": {"item": {**item, "status": "inProgress"}, **where}})
            self.out.emit({"method": "item/completed", "params": {"item": {**item, "status": "declined"}, **where}})
        asked = os.environ.get("SCRIPTED_APP_SERVER_APPROVAL", "")
        if asked:
            params = {**where, "itemId": f"call_{uuid.uuid4().hex[:12]}", "command": asked, "startedAtMs": 0}
            self.out.emit({"id": "approval-1", "method": "item/commandExecution/requestApproval", "params": params})
            while not (isinstance(answer := self.inbox.get(), dict) and answer.get("id") == "approval-1"):
                if answer is _EOF:
                    raise SystemExit(0)

    def _spawn(self, seconds: str, status: str) -> None:
        """The spawn item (started, then completed naming the sub-agent ``pendingInit``), and the
        sub-agent's own turn in the background."""
        child = str(uuid.uuid4())
        item: dict[str, Any] = {
            "type": "collabAgentToolCall",
            "id": f"call_{uuid.uuid4().hex[:12]}",
            "tool": "spawnAgent",
            "status": "inProgress",
            "senderThreadId": self.thread_id,
            "receiverThreadIds": [],
            "prompt": "Check the docs (sub-agent-marker).",
            "agentsStates": {},
        }
        where = {"threadId": self.thread_id, "turnId": self.turn_id}
        self.out.emit({"method": "item/started", "params": {"item": item, **where}})
        done = {**item, "status": "completed", "receiverThreadIds": [child]}
        done["agentsStates"] = {child: {"status": "pendingInit", "message": None}}
        self.out.emit({"method": "item/completed", "params": {"item": done, **where}})
        root = self.turn_id
        threading.Thread(target=self._child_turn, args=(child, root, float(seconds), status), daemon=True).start()

    def _child_turn(self, child: str, root: str, seconds: float, status: str) -> None:
        turn: dict[str, Any] = {"id": str(uuid.uuid4()), "rootTurnId": root, "items": [], "status": "inProgress"}
        self.out.emit({"method": "thread/status/changed", "params": {"threadId": child, "status": {"type": "active"}}})
        self.out.emit({"method": "turn/started", "params": {"threadId": child, "turn": turn}})
        threading.Event().wait(seconds)
        self.out.emit({"method": "turn/completed", "params": {"threadId": child, "turn": {**turn, "status": status}}})
        self.out.emit({"method": "thread/status/changed", "params": {"threadId": child, "status": {"type": "idle"}}})

    def _take(self, params: dict[str, Any]) -> None:
        """Record one input in the conversation: a ``userMessage`` item with its ``clientId``."""
        content = params.get("input")
        content = content if isinstance(content, list) else []
        text = "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict) and c.get("type") == "text")
        _log(text)
        self.tokens += 10
        item = {
            "type": "userMessage",
            "id": str(uuid.uuid4()),
            "clientId": params.get("clientUserMessageId"),
            "content": content,
        }
        self.out.emit(
            {"method": "item/started", "params": {"item": item, "threadId": self.thread_id, "turnId": self.turn_id}}
        )
        self.out.emit(
            {"method": "item/completed", "params": {"item": item, "threadId": self.thread_id, "turnId": self.turn_id}}
        )

    def _work(self, seconds: float) -> None:
        """Work ``seconds``, answering what arrives meanwhile (a steer or a start joins the turn)."""
        done = threading.Event()
        timer = threading.Timer(seconds, done.set)
        timer.start()
        while not done.is_set():
            try:
                obj = self.inbox.get(timeout=0.01)
            except queue.Empty:
                continue
            if obj is _EOF:
                raise SystemExit(int(os.environ.get("SCRIPTED_AGENT_EXIT_CODE", "0")))
            assert isinstance(obj, dict)
            self._during_turn(obj)
        timer.cancel()

    def _during_turn(self, obj: dict[str, Any]) -> None:
        method, rid = obj.get("method"), obj.get("id")
        params = _obj(obj.get("params"))
        named = params.get("expectedTurnId")
        if method == "turn/steer" and named == self.turn_id:
            self.joined.append(params)
            self.out.emit({"id": rid, "result": {"turnId": self.turn_id}})
        elif method == "turn/steer":
            self.out.emit({"id": rid, "error": {"code": -32600, "message": f"expected turn {named} is not active"}})
        elif method == "turn/start":
            self.joined.append(params)
            self.out.emit({"id": rid, "result": {"turn": {"id": self.turn_id, "items": [], "status": "inProgress"}}})
        elif rid is not None and method is not None:
            self.out.emit({"id": rid, "error": {"code": -32601, "message": f"scripted: no method {method}"}})

    def _finish(self, turn: dict[str, Any]) -> None:
        message = {"type": "agentMessage", "id": f"msg_{uuid.uuid4().hex[:12]}", "text": "done"}
        self.out.emit(
            {
                "method": "item/completed",
                "params": {"item": message, "threadId": self.thread_id, "turnId": self.turn_id},
            }
        )
        usage = {
            "inputTokens": 100 + self.tokens,
            "cachedInputTokens": 40,
            "cacheWriteInputTokens": 0,
            "outputTokens": 12,
            "reasoningOutputTokens": 2,
        }
        self.out.emit(
            {
                "method": "thread/tokenUsage/updated",
                "params": {
                    "threadId": self.thread_id,
                    "turnId": self.turn_id,
                    "tokenUsage": {"total": usage, "last": usage},
                },
            }
        )
        completed = {**turn, "status": "completed", "items": [message], **self.patch}
        self.out.emit({"method": "turn/completed", "params": {"threadId": self.thread_id, "turn": completed}})
        self.turn_id = ""
