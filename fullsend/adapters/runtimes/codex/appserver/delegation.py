"""The sub-agents of a ``codex app-server`` run, from its notifications (docs/runtimes.md "Codex";
docs/rules.md#delegated-unfinished).

The app-server reports every thread it runs on the one connection: the run's own, and each
sub-agent the agent spawned (Codex's multi-agent tools, on by default).  A sub-agent is known from
the run's ``collabAgentToolCall`` items (the spawn names its thread; each item carries the last
state the agent saw, ``agentsStates``) and from its own ``turn/started``, whose ``rootTurnId`` is
the run's turn that led to it; its own ``turn/completed`` says how its work ended, and
``thread/closed`` or a ``systemError`` status ends it too; a tool it was refused counts as the
run's (``codex/refusals.py``).  Other threads are not the run's work and are ignored.

The parent's turn can complete while a sub-agent still starts or works (openai/codex#36141), and
the sub-agent dies with the app-server when the action closes its input.  So while one may still
be working the parser says so (``HoldEvent``): the feed keeps the input open, for at most
``delegated_wait_seconds`` once nothing else keeps it open; at EOF every sub-agent that did not
end ``completed`` is unfinished work (a ``FaultEvent``, ``delegated-unfinished``).
"""

from __future__ import annotations

from typing import Any

from fullsend.adapters.runtimes.codex.delegated import DelegatedWork
from fullsend.adapters.runtimes.codex.refusals import item_refusal
from fullsend.adapters.runtimes.events import AgentEvent, FaultEvent, HoldEvent, RefusalEvent, as_str
from fullsend.adapters.runtimes.verdict import delegated_unfinished

#: (WIRE, codex app-server) the item type of a collaboration tool call.
COLLAB_ITEM = "collabAgentToolCall"
#: (WIRE) ``thread/status/changed`` status type of a thread that failed.
SYSTEM_ERROR = "systemError"


def _obj(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class SubAgentWatch:
    """The run's sub-agents (``work``) and whether the feed must hold the input open for them."""

    def __init__(self) -> None:
        self.work = DelegatedWork()
        self._held = False

    def own(self, method: str, params: dict[str, Any]) -> list[AgentEvent]:
        """A notification of the run's own thread: its turns and collaboration items."""
        if method == "turn/started":
            turn = _obj(params.get("turn"))
            self.work.note_turn_started(
                as_str(params.get("threadId")), as_str(turn.get("id")), as_str(turn.get("rootTurnId")), own=True
            )
        return self._items(method, params)

    def foreign(self, method: str, params: dict[str, Any]) -> list[AgentEvent]:
        """A notification of another thread: a sub-agent's (or nothing of the run's)."""
        thread_id = as_str(params.get("threadId"))
        turn = _obj(params.get("turn"))
        if method == "turn/started":
            self.work.note_turn_started(thread_id, as_str(turn.get("id")), as_str(turn.get("rootTurnId")), own=False)
        elif not self.work.is_sub_agent(thread_id):
            return []
        elif method == "turn/completed":
            self.work.note_turn_completed(thread_id, as_str(turn.get("id")), as_str(turn.get("status")))
        elif method == "thread/closed":
            self.work.note_thread_ended(thread_id, "closed")
        elif method == "thread/status/changed" and _obj(params.get("status")).get("type") == SYSTEM_ERROR:
            self.work.note_thread_ended(thread_id, SYSTEM_ERROR)
        return self._items(method, params, own=False)

    def finish(self) -> list[AgentEvent]:
        """At EOF: a ``FaultEvent`` naming every sub-agent that did not end ``completed``."""
        unfinished = self.work.unfinished()
        return [FaultEvent(delegated_unfinished("; ".join(unfinished)))] if unfinished else []

    def _items(self, method: str, params: dict[str, Any], own: bool = True) -> list[AgentEvent]:
        item = _obj(params.get("item"))
        if method in ("item/started", "item/completed") and item.get("type") == COLLAB_ITEM:
            self.work.note_collab_item(item)
        refused = None if own or method != "item/completed" else item_refusal(item)  # the run's own: its parser
        return [*self._hold(), *([RefusalEvent((refused,))] if refused is not None else [])]

    def _hold(self) -> list[AgentEvent]:
        """A ``HoldEvent`` when whether a sub-agent may still work changed."""
        held = self.work.working()
        if held == self._held:
            return []
        self._held = held
        return [HoldEvent(held)]
