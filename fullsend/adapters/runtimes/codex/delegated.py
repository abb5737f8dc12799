"""Work a Codex agent delegated to sub-agents, and whether it finished (docs/runtimes.md "Codex";
docs/rules.md#delegated-unfinished).

Codex's multi-agent tools (on by default) let the agent spawn sub-agents, each a thread of its
own.  The run's agent reports them in its own collaboration items — ``collabAgentToolCall``
(app-server) or ``collab_tool_call`` (exec): the tool (spawn, send input, wait, close …), the
threads it names (``receiverThreadIds``) and each one's last known state (``agentsStates``:
``pendingInit``, ``running``, ``interrupted``, ``completed``, ``errored``, ``shutdown``,
``notFound``; exec writes them in snake_case).  The app-server also reports each sub-agent's
own turns on the run's connection (``turn/started`` with the ``rootTurnId`` of the run's turn
that led to it, ``turn/completed``), which are more recent than any snapshot the agent saw.

A sub-agent counts as finished only when its last word is ``completed`` (its own last turn
ended ``completed``, or, with no turn of its own seen, the agent's last snapshot of it says so),
and a close after that changes nothing; every other end — still pending or running, a failed or
interrupted turn, ``errored``, ``notFound``, a close before it completed, or a state the action
does not know — is unfinished work (allow-list).  Pure bookkeeping: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Snapshot states (normalised: lower case, no ``_``) from which a sub-agent may still finish.
STILL_WORKING = frozenset({"pendinginit", "running"})
#: The one state that is finished work.
COMPLETED = "completed"
#: States that close a sub-agent: after ``completed`` they change nothing.
CLOSED = frozenset({"shutdown"})
_TASK_MAX_CHARS = 60


def normalised(state: object) -> str:
    """A state as compared here: ``pendingInit`` and ``pending_init`` are both ``pendinginit``."""
    return state.replace("_", "").lower() if isinstance(state, str) else ""


@dataclass
class SubAgent:
    """What is known of one sub-agent thread (states normalised, see :func:`normalised`)."""

    thread_id: str
    task: str = ""  # the spawn prompt, shortened, for the error line
    snapshot: str = "pendinginit"  # the agent's last snapshot of it (agentsStates)
    completed_once: bool = False  # some word of it said completed
    own_turns: set[str] = field(default_factory=set)  # its own turns still running
    own_end: str = ""  # how its last own turn ended ("" none seen)
    seen_own: bool = False  # the app-server reported a turn of its own

    @property
    def word(self) -> str:
        """Its last word: an own turn running, an own turn's end, else the agent's last snapshot."""
        if self.own_turns:
            return "running"
        if self.seen_own and self.own_end:
            return self.own_end
        return self.snapshot

    @property
    def finished(self) -> bool:
        """Ended ``completed`` (a close after that changes nothing)."""
        word = self.word
        return word == COMPLETED or (word in CLOSED and self.completed_once)

    @property
    def working(self) -> bool:
        """May still finish: its own turn runs, or no end of it is known yet."""
        if self.seen_own:
            return bool(self.own_turns) or not self.own_end
        return self.snapshot in STILL_WORKING

    def describe(self) -> str:
        """``sub-agent <id> ("<task>") <word>`` for the error line."""
        task = f' ("{self.task}")' if self.task else ""
        if self.working:
            word = "still starting" if self.word == "pendinginit" else "still running"
        else:
            word = self.word or "in an unknown state"
        return f"sub-agent {self.thread_id}{task} {word}"


@dataclass
class DelegatedWork:
    """The sub-agents of one run (app-server: of the whole connection's tree; exec: of one process)."""

    agents: dict[str, SubAgent] = field(default_factory=dict)
    tree_turns: set[str] = field(default_factory=set)  # turns of the run's thread and its sub-agents

    def note_collab_item(self, item: dict[str, Any]) -> None:
        """One collaboration item (either transport's shape): spawned threads and their states."""
        tool = normalised(item.get("tool"))
        states = item.get("agentsStates", item.get("agents_states"))
        receivers = item.get("receiverThreadIds", item.get("receiver_thread_ids"))
        if tool == "spawnagent" and isinstance(receivers, list):
            prompt = item.get("prompt")
            for thread_id in (r for r in receivers if isinstance(r, str) and r):
                agent = self._agent(thread_id)
                agent.task = agent.task or (prompt[:_TASK_MAX_CHARS] if isinstance(prompt, str) else "")
        for thread_id, state in states.items() if isinstance(states, dict) else ():
            status = state.get("status") if isinstance(state, dict) else None
            if isinstance(thread_id, str) and thread_id:
                self._snapshot(self._agent(thread_id), normalised(status) or "unknown")

    def note_turn_started(self, thread_id: str, turn_id: str, root_turn_id: str, own: bool) -> None:
        """A turn started on ``thread_id``: the run's own (``own``), a known sub-agent's, or one whose
        ``root_turn_id`` is a turn of the tree (a sub-agent the action learns of here)."""
        in_tree = own or thread_id in self.agents or (bool(root_turn_id) and root_turn_id in self.tree_turns)
        if turn_id and in_tree:
            self.tree_turns.add(turn_id)
        if own or not in_tree:
            return
        agent = self._agent(thread_id)
        agent.seen_own = True
        agent.own_turns.add(turn_id or "?")

    def note_turn_completed(self, thread_id: str, turn_id: str, status: str) -> None:
        """A sub-agent's own turn ended with ``status`` (``completed``, ``failed``, ``interrupted`` …)."""
        agent = self.agents.get(thread_id)
        if agent is None:
            return
        agent.seen_own = True
        agent.own_turns.discard(turn_id or "?")
        agent.own_end = normalised(status) or "unknown"
        agent.completed_once = agent.completed_once or agent.own_end == COMPLETED

    def note_thread_ended(self, thread_id: str, why: str) -> None:
        """A sub-agent's thread was closed or failed (``why``): a turn of it still running, or work
        it never started, ends unfinished; after a completed turn it changes nothing."""
        agent = self.agents.get(thread_id)
        if agent is None or (not agent.own_turns and agent.completed_once and agent.word != "running"):
            return
        agent.seen_own = True
        agent.own_turns.clear()
        agent.own_end = normalised(why) or "unknown"

    def is_sub_agent(self, thread_id: object) -> bool:
        return isinstance(thread_id, str) and thread_id in self.agents

    def working(self) -> bool:
        """Some sub-agent may still finish (worth waiting for)."""
        return any(agent.working for agent in self.agents.values())

    def unfinished(self) -> list[str]:
        """One description per sub-agent that did not end ``completed`` (see the module docstring)."""
        return [agent.describe() for agent in self.agents.values() if not agent.finished]

    def _agent(self, thread_id: str) -> SubAgent:
        return self.agents.setdefault(thread_id, SubAgent(thread_id))

    @staticmethod
    def _snapshot(agent: SubAgent, status: str) -> None:
        agent.snapshot = status
        agent.completed_once = agent.completed_once or status == COMPLETED
