"""The ``codex app-server`` JSON-RPC session of one run (docs/architecture.md "Codex").

``codex app-server`` speaks JSON-RPC 2.0 over stdio, one JSON object per line, without the
``"jsonrpc"`` member.  The action is the client: ``initialize`` + ``initialized``, then
``thread/start``; once the thread's id is known, the opening prompt is ``turn/start``.  A steer
while a turn is active is ``turn/steer`` (it names the active turn); a steer between turns, or
one whose ``turn/steer`` came too late, is ``turn/start``, which also joins a turn that is
already running.  Every turn input carries ``clientUserMessageId`` = the line's key, and Codex
echoes it as the ``clientId`` of the ``userMessage`` item it records: that echo, never the
server's answer to the request, is the acknowledgement.

``AppServerSession`` is the state one run's parser (the stdout reader) and ``steer`` (the
watcher's thread) share, behind one mutex.  The method names and parameter names are WIRE.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from fullsend.errors import NoSteerSession

# (WIRE, codex app-server) the methods and notifications the action uses.
INITIALIZE = "initialize"
INITIALIZED = "initialized"
THREAD_START = "thread/start"
TURN_START = "turn/start"
TURN_STEER = "turn/steer"
CLIENT_NAME = "steer-action"
# The runs are unattended: nothing may wait for an approval (the exec transport bypasses the same).
THREAD_POLICY = {"approvalPolicy": "never", "sandbox": "danger-full-access"}
INIT_ID = "init"
THREAD_ID = "thread"
#: JSON-RPC "method not found": the answer to any request the server sends the action.
NO_SUCH_METHOD = -32601


def rpc_line(message: dict[str, Any]) -> str:
    """One JSON-RPC message as one line (compact, non-ASCII kept; no raw newline can occur)."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def text_input(text: str) -> list[dict[str, Any]]:
    """A turn's ``input``: one text item."""
    return [{"type": "text", "text": text}]


def handshake_lines(model: str, version: str) -> list[str]:
    """``initialize``, ``initialized`` and ``thread/start`` (the model when set, no approvals; the
    thread works in the process's working directory, the workspace)."""
    params: dict[str, Any] = dict(THREAD_POLICY)
    if model:
        params["model"] = model
    return [
        rpc_line({"id": INIT_ID, "method": INITIALIZE,
                  "params": {"clientInfo": {"name": CLIENT_NAME, "version": version}}}),
        rpc_line({"method": INITIALIZED}),
        rpc_line({"id": THREAD_ID, "method": THREAD_START, "params": params}),
    ]


def refusal_line(request_id: object) -> str:
    """The answer to a request the server sends (an approval, a tool call): not supported."""
    return rpc_line({"id": request_id, "error": {"code": NO_SUCH_METHOD,
                                                  "message": "steer-action answers no requests"}})


@dataclass
class TurnInput:
    """One input line the action wrote: its key (``clientUserMessageId``), text and method."""

    key: str
    text: str
    method: str
    turn_id: str = ""  # the turn a ``turn/steer`` named
    accepted: bool = False  # the server answered the request with success
    retried: bool = False


@dataclass
class AppServerSession:
    """What one run knows of its thread; shared by the parser and ``steer`` (one mutex)."""

    thread_id: str = ""
    turn_id: str = ""  # the active turn, between turn/started and turn/completed
    model: str = ""
    opening: TurnInput | None = None
    inputs: dict[str, TurnInput] = field(default_factory=dict)  # request id -> input
    acked: set[str] = field(default_factory=set)
    _mu: threading.Lock = field(default_factory=threading.Lock)
    _count: int = 0

    def set_opening(self, key: str, text: str) -> None:
        """Remember the opening prompt; it is sent once the thread exists."""
        with self._mu:
            self.opening = TurnInput(key, text, TURN_START)

    def thread_started(self, thread_id: str, model: str) -> str:
        """Record the thread; returns the opening ``turn/start`` line ("" when none is owed)."""
        with self._mu:
            if self.thread_id or not thread_id:
                return ""
            self.thread_id, self.model = thread_id, model
            opening, self.opening = self.opening, None
            return self._line_locked(opening) if opening is not None else ""

    def steer_line(self, key: str, text: str) -> str:
        """The line for one steer: ``turn/steer`` on the active turn, else ``turn/start``.

        Raises ``NoSteerSession`` (retry later) while the thread does not exist yet.
        """
        with self._mu:
            if not self.thread_id:
                raise NoSteerSession("the codex thread has not started yet")
            method = TURN_STEER if self.turn_id else TURN_START
            return self._line_locked(TurnInput(key, text, method, self.turn_id))

    def retry_as_start(self, request_id: object) -> str:
        """After a refused ``turn/steer``: the same input as ``turn/start`` (once); "" otherwise."""
        with self._mu:
            sent = self.inputs.get(str(request_id))
            if sent is None or sent.method != TURN_STEER or sent.retried:
                return ""
            sent.retried = True
            return self._line_locked(TurnInput(sent.key, sent.text, TURN_START, retried=True))

    def answered(self, request_id: object, accepted: bool) -> TurnInput | None:
        """Record the server's answer to a turn request; returns the input it carried, or None."""
        with self._mu:
            sent = self.inputs.get(str(request_id))
            if sent is not None and accepted:
                sent.accepted = True
            return sent

    def turn_started(self, turn_id: str) -> None:
        with self._mu:
            self.turn_id = turn_id

    def turn_completed(self) -> list[str]:
        """The turn ended; returns ``turn/start`` lines for inputs it accepted by ``turn/steer``
        but never recorded (each re-sent once, so no accepted input is stranded).  Only an input
        the server answered is ever re-sent: a line that was never written stays unsent."""
        with self._mu:
            ended, self.turn_id = self.turn_id, ""
            stranded = [i for i in self.inputs.values() if i.method == TURN_STEER and i.turn_id == ended
                        and i.accepted and not i.retried and i.key not in self.acked]
            for sent in stranded:
                sent.retried = True
            return [self._line_locked(TurnInput(s.key, s.text, TURN_START, retried=True)) for s in stranded]

    def note_ack(self, key: str) -> None:
        with self._mu:
            self.acked.add(key)

    def _line_locked(self, sent: TurnInput) -> str:
        self._count += 1
        request_id = f"turn-{self._count}"
        self.inputs[request_id] = sent
        params: dict[str, Any] = {"threadId": self.thread_id, "input": text_input(sent.text),
                                  "clientUserMessageId": sent.key}
        if sent.method == TURN_STEER:
            params["expectedTurnId"] = sent.turn_id
        return rpc_line({"id": request_id, "method": sent.method, "params": params})
