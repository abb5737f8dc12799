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
        rpc_line(
            {"id": INIT_ID, "method": INITIALIZE, "params": {"clientInfo": {"name": CLIENT_NAME, "version": version}}}
        ),
        rpc_line({"method": INITIALIZED}),
        rpc_line({"id": THREAD_ID, "method": THREAD_START, "params": params}),
    ]


def refusal_line(request_id: object) -> str:
    """The answer to a request the server sends (an approval, a tool call): not supported."""
    return rpc_line(
        {"id": request_id, "error": {"code": NO_SUCH_METHOD, "message": "steer-action answers no requests"}}
    )


@dataclass
class TurnInput:
    """One input line the action chose: its key (``clientUserMessageId``), text and method.

    ``turn_id`` is the turn it was aimed at (``turn/steer``) or joined (a ``turn/start`` answered
    with a running turn); ``written`` is set once the line is in the mailbox; ``resent`` once it
    went out again as ``turn/start``.
    """

    key: str
    text: str
    method: str
    turn_id: str = ""
    written: bool = False
    resent: bool = False


@dataclass
class AppServerSession:
    """What one run knows of its thread; shared by the parser and ``steer`` (one mutex).

    Only the run's own thread counts: Codex reports sub-agent threads on the same connection.
    """

    thread_id: str = ""
    turn_id: str = ""  # the active turn of the run's thread, between turn/started and turn/completed
    started_turns: int = 0
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
            opening = self.opening
            if opening is None:
                return ""
            opening.written = True  # the driver writes it now; its failure ends the run
            return self._line_locked(opening)

    def is_mine(self, thread_id: object) -> bool:
        """True for a notification of the run's own thread (a sub-agent's thread is not)."""
        with self._mu:
            return bool(self.thread_id) and thread_id == self.thread_id

    def steer_line(self, key: str, text: str) -> str:
        """The line for one steer: ``turn/steer`` on the active turn, else ``turn/start``.

        Raises ``NoSteerSession`` (retry later) until the opening turn has started, so an update
        never reaches the agent before its task.
        """
        with self._mu:
            if not self.started_turns:
                raise NoSteerSession("the codex thread has not started its first turn yet")
            method = TURN_STEER if self.turn_id else TURN_START
            return self._line_locked(TurnInput(key, text, method, self.turn_id))

    def written(self, key: str) -> None:
        """The steer line with ``key`` is in the mailbox (a chosen line that failed is never re-sent)."""
        with self._mu:
            for sent in self.inputs.values():
                if sent.key == key:
                    sent.written = True

    def answered(self, request_id: object, result: object) -> TurnInput | None:
        """Record a success answer; a ``turn/start`` answered with a running turn has joined it."""
        with self._mu:
            sent = self.inputs.get(str(request_id))
            if sent is not None:
                sent.written = True  # an answer proves the line reached the server
            turn = result.get("turn") if isinstance(result, dict) else None
            if sent is not None and sent.method == TURN_START and isinstance(turn, dict):
                joined = turn.get("id")
                sent.turn_id = joined if isinstance(joined, str) and joined == self.turn_id else ""
            return sent

    def refused(self, request_id: object) -> tuple[TurnInput | None, str]:
        """After an error answer: (the input, the ``turn/start`` line to send it again with).

        A refused ``turn/steer`` goes out again as ``turn/start``, once; a refused input already
        sent again waits for that line's own answer (line ""); a refused ``turn/start`` is final.
        """
        with self._mu:
            sent = self.inputs.get(str(request_id))
            if sent is None or sent.method != TURN_STEER:
                return sent, ""
            if sent.resent:
                return None, ""
            sent.resent = True
            return sent, self._line_locked(TurnInput(sent.key, sent.text, TURN_START, written=True, resent=True))

    def turn_started(self, turn_id: str) -> None:
        with self._mu:
            self.turn_id = turn_id
            self.started_turns += 1

    def turn_completed(self, turn_id: str) -> list[str]:
        """The run's turn ended; returns ``turn/start`` lines for every written input aimed at or
        joined to it that it never recorded, each sent again once, so no input is stranded."""
        with self._mu:
            if turn_id == self.turn_id:
                self.turn_id = ""
            stranded = [
                i
                for i in self.inputs.values()
                if i.turn_id == turn_id and turn_id and i.written and not i.resent and i.key not in self.acked
            ]
            lines = []
            for sent in stranded:
                sent.resent = True
                lines.append(self._line_locked(TurnInput(sent.key, sent.text, TURN_START, written=True, resent=True)))
            return lines

    def note_ack(self, key: str) -> None:
        with self._mu:
            self.acked.add(key)

    def _line_locked(self, sent: TurnInput) -> str:
        self._count += 1
        request_id = f"turn-{self._count}"
        self.inputs[request_id] = sent
        params: dict[str, Any] = {
            "threadId": self.thread_id,
            "input": text_input(sent.text),
            "clientUserMessageId": sent.key,
        }
        if sent.method == TURN_STEER:
            params["expectedTurnId"] = sent.turn_id
        return rpc_line({"id": request_id, "method": sent.method, "params": params})
