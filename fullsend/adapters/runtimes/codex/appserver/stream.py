"""``codex app-server`` output: the parser, its terminal states and the run's metrics
(docs/architecture.md "Codex"; docs/runtimes.md "Codex").

Each stdout line is a JSON-RPC answer to one of the action's requests, a notification, or a
request of the server's own.  The parser turns them into the live driver's events:

- the ``thread/start`` answer → ``InitEvent`` and, to send, the opening ``turn/start``;
- a ``userMessage`` item (``item/started``) → ``UserReplayEvent`` keyed by its ``clientId``
  (the acknowledgement); an accepted ``turn/steer`` → ``queued`` (accepted, not delivered);
- a refused ``turn/steer`` → the same input sent again as ``turn/start``; a refused
  ``turn/start`` → ``rejected``;
- ``turn/completed`` → ``ResultEvent`` classified by :data:`CODEX_APP_SERVER_TERMINAL_STATES`,
  whose ``final_message`` is the turn's last completed ``agentMessage`` that is not ``commentary``
  (its ``phase``: ``final_answer``, ``partial_answer`` or unknown);
- ``thread/tokenUsage/updated`` → ``TokensEvent`` (the thread's running total);
- a request from the server (an approval, a tool call) → an error answer: the run is
  unattended and approvals are off; one about a tool is a refusal (``RefusalEvent``), as is an
  item ``declined`` (``codex/refusals.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fullsend.adapters.runtimes.codex.appserver.delegation import SubAgentWatch
from fullsend.adapters.runtimes.codex.appserver.rpc import (
    INIT_ID,
    THREAD_ID,
    TURN_STEER,
    AppServerSession,
    refusal_line,
)
from fullsend.adapters.runtimes.codex.refusals import item_refusal, request_refusal
from fullsend.adapters.runtimes.events import (
    QUEUED,
    REJECTED,
    AgentEvent,
    InitEvent,
    RefusalEvent,
    ResultEvent,
    SendEvent,
    TextEvent,
    TokensEvent,
    TurnOpenEvent,
    UserReplayEvent,
    as_int,
    as_str,
)
from fullsend.adapters.runtimes.feed import Now
from fullsend.core.agent_end import AgentEnd, EndVerdict, TerminalState, lookup, verdict_of

#: How a ``codex app-server`` turn can end → its class (the protocol's ``TurnStatus`` and
#: ``CodexErrorInfo``, from ``codex app-server generate-json-schema``).
CODEX_APP_SERVER_TERMINAL_STATES: tuple[TerminalState, ...] = (
    TerminalState("turn/completed status=completed", "completed", AgentEnd.SUCCESS, "the agent finished"),
    TerminalState("turn/completed status=failed", "failed", AgentEnd.AGENT_ERROR, "the codex turn failed"),
    TerminalState(
        "turn/completed status=failed codexErrorInfo=contextWindowExceeded",
        "contextWindowExceeded",
        AgentEnd.LIMIT_REACHED,
        "the conversation reached the model's context window",
    ),
    TerminalState(
        "turn/completed status=failed codexErrorInfo=sessionBudgetExceeded",
        "sessionBudgetExceeded",
        AgentEnd.LIMIT_REACHED,
        "codex reached its session budget",
    ),
    TerminalState(
        "turn/completed status=failed codexErrorInfo=usageLimitExceeded",
        "usageLimitExceeded",
        AgentEnd.LIMIT_REACHED,
        "codex reached its usage limit",
    ),
    TerminalState(
        "turn/completed status=interrupted", "interrupted", AgentEnd.INTERRUPTED, "the codex turn was interrupted"
    ),
    TerminalState(
        "turn/completed status=completed after an error with willRetry=false",
        "completed after error",
        AgentEnd.AGENT_ERROR,
        "the codex turn reported an error and still said completed",
    ),
    TerminalState(
        "turn/completed status=completed with a turn.error",
        "completed with turn.error",
        AgentEnd.AGENT_ERROR,
        "the codex turn carried an error and still said completed",
    ),
    TerminalState(
        "an error answer to initialize or thread/start",
        "handshake",
        AgentEnd.AGENT_ERROR,
        "codex app-server could not start a thread",
    ),
    TerminalState(
        "EOF while a turn is active",
        "incomplete",
        AgentEnd.INTERRUPTED,
        "the codex app-server ended before its turn completed",
    ),
)
APP_SERVER_INCOMPLETE = CODEX_APP_SERVER_TERMINAL_STATES[-1]
#: The detail of a final ``error`` notification that carries no message text: still an error.
ERROR_WITHOUT_MESSAGE = "an error notification without a message"
#: The detail of a completed turn whose ``error`` is set but carries no message text.
TURN_ERROR_WITHOUT_MESSAGE = "a turn error without a message"
_LIMITS = frozenset({"contextWindowExceeded", "sessionBudgetExceeded", "usageLimitExceeded"})


def turn_verdict(turn: dict[str, Any], last_error: str = "") -> EndVerdict:
    """The class of one ``turn/completed`` ``turn`` object (an unknown status: protocol-broken).

    ``last_error`` is the message of a final ``error`` notification of the turn (``willRetry`` not
    true): a turn that reported one is not success, even when its status says ``completed``; nor
    is one whose own ``error`` is anything but null or absent.
    """
    status = as_str(turn.get("status"))
    error = _obj(turn.get("error"))
    detail = as_str(error.get("message")) or last_error
    info = error.get("codexErrorInfo")
    kind = info if isinstance(info, str) else next(iter(info), "") if isinstance(info, dict) else ""
    reason = kind if status == "failed" and kind in _LIMITS else status
    if status == "completed" and last_error:
        reason = "completed after error"
    elif status == "completed" and turn.get("error") is not None:
        reason, detail = "completed with turn.error", detail or TURN_ERROR_WITHOUT_MESSAGE
    return verdict_of(
        CODEX_APP_SERVER_TERMINAL_STATES, reason, "" if reason == "completed" else detail, what="turn status"
    )


def _obj(value: object) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def _error_message(obj: dict[str, Any]) -> str:
    error = obj.get("error")
    return as_str(error.get("message")) if isinstance(error, dict) else ""


class AppServerParser:
    """``codex app-server`` stdout → events, over the run's ``session`` (see the module docstring).

    Only the run's own thread's turns end the run's turns, and only its ``userMessage`` items
    acknowledge; another thread's notifications go to ``sub_agents`` (``delegation.py``), which
    tracks the sub-agents the run spawned and holds the input open while one may still work.
    """

    def __init__(self, clock: Now) -> None:
        self.session = AppServerSession()
        self._clock = clock
        self._last_error = ""
        self._final = ""  # the turn's last answer (an agentMessage item that is not commentary)
        self.sub_agents = SubAgentWatch()

    def parse(self, obj: dict[str, Any]) -> list[AgentEvent]:
        """Events for one stdout object (possibly none)."""
        method = obj.get("method")
        if isinstance(method, str) and "id" in obj:
            refused = request_refusal(method, _obj(obj.get("params")), obj.get("id"))
            return [
                SendEvent(refusal_line(obj.get("id"))),
                TextEvent(f"codex asked for {method}; the action answers no requests"),
                *([RefusalEvent((refused,))] if refused is not None else []),
            ]
        if isinstance(method, str):
            params = _obj(obj.get("params"))
            if "threadId" in params and not self.session.is_mine(params.get("threadId")):
                return self.sub_agents.foreign(method, params)
            return [*self._notification(method, params), *self.sub_agents.own(method, params)]
        if "id" in obj:
            return self._answer(obj)
        return []

    def finish(self) -> list[AgentEvent]:
        """At EOF: a sub-agent that did not end ``completed`` is unfinished work (``delegation.py``);
        the driver adds what an open turn owes."""
        return self.sub_agents.finish()

    # -- answers to the action's requests ------------------------------------------------------
    def _answer(self, obj: dict[str, Any]) -> list[AgentEvent]:
        request_id = obj.get("id")
        if request_id in (INIT_ID, THREAD_ID):
            return self._handshake(obj) if "error" in obj or request_id == THREAD_ID else []
        if "error" not in obj:
            sent = self.session.answered(request_id, obj.get("result"))
            return (
                [UserReplayEvent(self._clock.now(), id=sent.key, disposition=QUEUED)]
                if sent is not None and sent.method == TURN_STEER
                else []
            )
        sent, retry = self.session.refused(request_id)
        if retry:
            return [SendEvent(retry)]
        if sent is None:
            return []
        refused: list[AgentEvent] = [
            UserReplayEvent(self._clock.now(), id=sent.key, disposition=REJECTED),
            TextEvent(f"codex refused an input: {_error_message(obj)}"),
        ]
        opening = self.session.opening
        if opening is not None and sent.key == opening.key:  # no turn will ever end: end the run's wait
            return [*refused, self._failed_start(_error_message(obj) or "codex refused the opening turn/start")]
        return refused

    def _handshake(self, obj: dict[str, Any]) -> list[AgentEvent]:
        result = _obj(obj.get("result"))
        thread_id = as_str(_obj(result.get("thread")).get("id"))
        if "error" in obj or not thread_id:
            message = _error_message(obj) or "the thread/start answer names no thread"
            opening = self.session.opening
            retire: list[AgentEvent] = (
                [UserReplayEvent(self._clock.now(), id=opening.key, disposition=REJECTED)]
                if opening is not None
                else []
            )
            return [*retire, self._failed_start(message)]
        model = as_str(result.get("model"))
        line = self.session.thread_started(thread_id, model)
        events: list[AgentEvent] = [InitEvent(model=model, session_id=thread_id)]
        return [*events, SendEvent(line, required=True)] if line else events

    @staticmethod
    def _failed_start(message: str) -> ResultEvent:
        row = lookup(CODEX_APP_SERVER_TERMINAL_STATES, "handshake")
        assert row is not None
        return ResultEvent(
            is_error=True,
            error_message=message,
            subtype="handshake",
            verdict=EndVerdict(row.end, row.reason, row.says, message),
        )

    # -- notifications of the run's thread --------------------------------------------------------
    def _notification(self, method: str, params: dict[str, Any]) -> list[AgentEvent]:
        item = _obj(params.get("item"))
        refused = item_refusal(item) if method == "item/completed" else None
        if refused is not None:
            return [RefusalEvent((refused,))]
        if method == "turn/started":
            self.session.turn_started(as_str(_obj(params.get("turn")).get("id")))
            return [TurnOpenEvent()]
        if method == "item/started" and item.get("type") == "userMessage":
            return self._user_message(item)
        if method == "item/completed" and item.get("type") == "agentMessage" and as_str(item.get("text")).strip():
            if item.get("phase") != "commentary":
                self._final = as_str(item.get("text"))
            return [TextEvent(as_str(item.get("text")))]
        if method == "thread/tokenUsage/updated":
            return self._tokens(params.get("tokenUsage"))
        if method == "error" and params.get("willRetry") is not True:  # any final error: the turn is not success
            self._last_error = _error_message(params) or self._last_error or ERROR_WITHOUT_MESSAGE
        elif method == "turn/completed":
            return self._turn_completed(params)
        return []

    def _user_message(self, item: dict[str, Any]) -> list[AgentEvent]:
        """The acknowledgement: only by the ``clientId`` the action gave the input (never by text)."""
        key = as_str(item.get("clientId"))
        if not key:
            return []
        content = item.get("content")
        content = content if isinstance(content, list) else []
        parts = tuple(as_str(c.get("text")) for c in content if isinstance(c, dict) and c.get("type") == "text")
        self.session.note_ack(key)
        return [UserReplayEvent(self._clock.now(), id=key, content="\n".join(parts), parts=parts)]

    def _tokens(self, usage: object) -> list[AgentEvent]:
        total = usage.get("total") if isinstance(usage, dict) else None
        if not isinstance(total, dict):
            return []
        cached, written = as_int(total.get("cachedInputTokens")), as_int(total.get("cacheWriteInputTokens"))
        reasoning = as_int(total.get("reasoningOutputTokens"))
        return [
            TokensEvent(
                input=max(0, as_int(total.get("inputTokens")) - cached - written),
                output=max(0, as_int(total.get("outputTokens")) - reasoning),
                reasoning=reasoning,
                cache_read=cached,
                cache_write=written,
            )
        ]

    def _turn_completed(self, params: dict[str, Any]) -> list[AgentEvent]:
        turn = _obj(params.get("turn"))
        verdict = turn_verdict(turn, self._last_error)
        self._last_error, final, self._final = "", self._final, ""
        result = ResultEvent(
            num_turns=1,
            is_error=not verdict.succeeded,
            subtype=verdict.reason,
            error_message="" if verdict.succeeded else verdict.detail,
            verdict=verdict,
            final_message=final,
        )
        resend = self.session.turn_completed(as_str(turn.get("id")))
        return [result, *(SendEvent(line) for line in resend)]


@dataclass
class AppServerAggregator:
    """The run's metrics: turns counted, tokens from the thread's latest running total."""

    turns: int = 0
    cost_usd: float = 0.0  # codex reports no price
    _tokens: TokensEvent = field(default_factory=TokensEvent)

    @property
    def input_tokens(self) -> int:
        return self._tokens.input

    @property
    def output_tokens(self) -> int:
        return self._tokens.output

    def add_result(self, r: ResultEvent) -> None:
        self.turns += r.num_turns

    def add_tokens(self, t: TokensEvent) -> None:
        self._tokens = t
