"""One agent iteration: launch the runtime, run the watcher beside it, collect what was absorbed.

docs/architecture.md "Agent iterations" (carry-over across validation iterations), "Harness" (when a
run is steerable), "Sandbox environment" (env exported to the agent), "Settle" (deadline,
the time kept before it) and "Status comments" (each acknowledgement on the timeline as it happens).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from fullsend.app.timeline import Timeline
from fullsend.app.watch.watcher import Carry, WatchConfig, Watcher
from fullsend.core.agent_end import AgentEnd
from fullsend.core.final_word import RULE_TOOL_DENIED, allow_hint, tool_label
from fullsend.core.receipt.marker import Marker, marker_from
from fullsend.core.scalars import format_time
from fullsend.core.tokens import exports
from fullsend.core.watch.start import StartRefused
from fullsend.core.watch.steer import DeliveredSteer, SteerResult
from fullsend.errors import ForgeError
from fullsend.ports import AgentParams, AgentRunResult, Clock, Forge, Log, Runtime

WATCHER_JOIN_TIMEOUT_S = 35.0
#: How long a cancelled run still waits for the stopped watcher to settle (the whole
#: cancellation fits in 7 s).
CANCELLED_JOIN_TIMEOUT_S = 2.0
_JOIN_STEP_S = 0.05


@dataclass
class IterationResult:
    """What one iteration did: the agent's result, the watcher's deliveries and the consumed marker."""

    agent: AgentRunResult
    delivered: list[DeliveredSteer] = field(default_factory=list)
    marker: Marker = field(default_factory=Marker)
    settle_reason: str = ""
    left: list[tuple[int, str]] = field(default_factory=list)  # (follow-up run id, rule id of why)
    session_lost: bool = False


@dataclass
class IterationSetup:
    """Everything one iteration needs besides the runtime and forge."""

    sandbox_name: str
    agent_cli: str
    prompt: str
    workdir: Path
    env: Mapping[str, str]
    timeout_s: float
    model: str
    fallback_models: tuple[str, ...]
    watch: WatchConfig | None  # None: steering declined for this iteration
    cancelled: threading.Event | None = None  # set on SIGTERM/SIGINT: stop waiting for the watcher
    extra_args: tuple[str, ...] = ()  # the ``agent_args`` input, one argument each
    delegated_wait_s: float = 600.0  # ``delegated_wait_seconds``; capped by ``timeout_s`` at the launch
    expected_denials: tuple[str, ...] = ()  # ``expected_denials``, one pattern each


def run_iteration(
    runtime: Runtime,
    forge: Forge,
    setup: IterationSetup,
    carry: Carry,
    clock: Clock,
    lock: threading.Lock,
    log: Log,
    timeline: Timeline,
    on_output: Callable[[str], None] | None = None,
    register: Callable[[Watcher | None], None] | None = None,
) -> IterationResult:
    """Run the agent once, with a watcher when steering is on and the watcher starts."""
    watcher = _start_watcher(runtime, forge, setup, carry, clock, lock, log, timeline)
    if register:
        register(watcher)
    env = dict(setup.env)
    env["FULLSEND_STEER_ACTIVE"] = "1" if watcher else ""
    if not watcher:
        env.pop("FULLSEND_STEER_ACTIVE")
    params = AgentParams(
        sandbox_name=setup.sandbox_name,
        agent_cli=setup.agent_cli,
        prompt=setup.prompt,
        workdir=setup.workdir,
        env=env,
        steerable=watcher is not None,
        timeout_s=setup.timeout_s,
        model=setup.model,
        fallback_models=setup.fallback_models,
        extra_args=setup.extra_args,
        delegated_wait_s=min(setup.delegated_wait_s, setup.timeout_s),
        expected_denials=setup.expected_denials,
    )
    thread = None
    if watcher:
        thread = threading.Thread(target=watcher.watch, name="fullsend-watcher", daemon=True)
        thread.start()
    timeline.add(clock.now(), "agent", "agent launched" + (" (steerable)" if watcher else ""))
    acks = AckRows(timeline, clock, log)
    try:
        agent = runtime.run(params, watcher.turn_ended if watcher else (lambda at: None), on_output, acks.on_ack)
    finally:
        if watcher and thread:
            watcher.close_turn_ends()
            _join_watcher(clock, thread, setup.cancelled)
    ended = "" if agent.end is AgentEnd.SUCCESS else f": {agent.error or agent.end.value}"
    timeline.add(
        clock.now(),
        "agent",
        f"agent exited with code {agent.exit_code} after {agent.turns} turn(s){ended}",
        rule_id="" if agent.end is AgentEnd.SUCCESS else (agent.end_rule or agent.end.value),
    )
    acks.finish(agent.steers)
    _note_denials(agent, clock, log, timeline)
    return _result(agent, watcher)


class AckRows:
    """The iteration's ``ack`` timeline rows, added as the runtime signals them (``on_ack``, an
    ``fullsend.ports.AckListener``, any thread) so the status comment shows each one within a poll;
    :meth:`finish` reconciles them with the agent's final ``steers``, which alone feed the receipt.
    Each ``ack`` row is also one log line saying when (UTC, to the second) the agent acknowledged
    the message, so the run's log shows it where the step summary is not kept.
    """

    def __init__(self, timeline: Timeline, clock: Clock, log: Log | None = None) -> None:
        self._timeline, self._clock, self._log = timeline, clock, log
        self._lock = threading.Lock()  # held across each add, so an ack and its withdrawal stay in order
        self._shown: Counter[int] = Counter()  # message id -> ack rows not withdrawn
        self._done = False

    def on_ack(self, result: SteerResult, acknowledged: bool) -> None:
        """One ``ack`` row for an acknowledgement, one ``withdrawn`` row for a withdrawal of a shown one."""
        with self._lock:
            if self._done:
                return
            if acknowledged:
                self._shown[result.follow_up_run_id] += 1
                _ack_row(self._timeline, result, self._log)
            elif self._shown[result.follow_up_run_id] > 0:
                self._shown[result.follow_up_run_id] -= 1
                _withdrawn_row(self._timeline, result.follow_up_run_id, self._clock.now())

    def finish(self, steers: Sequence[SteerResult]) -> None:
        """After the run: an ``ack`` row for each of ``steers`` not shown yet, a ``withdrawn`` row
        for each shown acknowledgement they do not list (it no longer counts); later signals are
        ignored."""
        with self._lock:
            self._done = True
            for steer in steers:
                if self._shown[steer.follow_up_run_id] > 0:
                    self._shown[steer.follow_up_run_id] -= 1
                else:
                    _ack_row(self._timeline, steer, self._log)
            for message_id in sorted(self._shown.elements()):
                _withdrawn_row(self._timeline, message_id, self._clock.now())


def _ack_row(timeline: Timeline, steer: SteerResult, log: Log | None) -> None:
    message_id = steer.follow_up_run_id
    timeline.add(steer.delivered_at, "ack", f"acknowledged message {message_id}", run_ids=(message_id,))
    if log is not None:
        log("info", f"The agent acknowledged message {message_id} at {format_time(steer.delivered_at)}")


def _withdrawn_row(timeline: Timeline, message_id: int, at: datetime) -> None:
    timeline.add(
        at, "withdrawn", f"acknowledgement of message {message_id} withdrawn: not absorbed", run_ids=(message_id,)
    )


def _note_denials(agent: AgentRunResult, clock: Clock, log: Log, timeline: Timeline) -> None:
    """One warning and one timeline row per tool the agent was refused (docs/rules.md#tool-denied)."""
    for name in dict.fromkeys(tool_label(d.tool_name) for d in agent.denials):
        same = [d for d in agent.denials if tool_label(d.tool_name) == name]
        times = f" ({len(same)} calls)" if len(same) > 1 else ""
        log("warning", f"The agent was refused the tool {name}{times}; {allow_hint(same[0])} [{RULE_TOOL_DENIED}]")
        timeline.add(clock.now(), "agent", f"the agent was refused the tool {name}{times}", rule_id=RULE_TOOL_DENIED)


def _join_watcher(clock: Clock, thread: threading.Thread, cancelled: threading.Event | None) -> None:
    """Wait through ``clock`` up to ``WATCHER_JOIN_TIMEOUT_S`` for the watcher; once ``cancelled``
    is set, at most ``CANCELLED_JOIN_TIMEOUT_S`` more (a request it is blocked in must not hold
    the cancellation up)."""
    left_s = WATCHER_JOIN_TIMEOUT_S
    while left_s > 0 and not clock.join(thread, min(_JOIN_STEP_S, left_s)):
        left_s -= _JOIN_STEP_S
        if cancelled is not None and cancelled.is_set():
            left_s = min(left_s, CANCELLED_JOIN_TIMEOUT_S)
            cancelled = None


def _result(agent: AgentRunResult, watcher: Watcher | None) -> IterationResult:
    if watcher is None:
        return IterationResult(agent=agent)
    acked = [s.follow_up_run_id for s in agent.steers]
    watched = watcher.result()  # the join may have given up: undecided runs are left too
    return IterationResult(
        agent=agent,
        delivered=list(watched.delivered),
        marker=marker_from(watched.delivered, acked, watched.head),
        settle_reason=watched.settle_reason,
        left=list(watched.left),
        session_lost=watched.session_lost or agent.session_lost,
    )


def _start_watcher(
    runtime: Runtime,
    forge: Forge,
    setup: IterationSetup,
    carry: Carry,
    clock: Clock,
    lock: threading.Lock,
    log: Log,
    timeline: Timeline,
) -> Watcher | None:
    if setup.watch is None:
        return None
    watcher = Watcher(forge, runtime, setup.sandbox_name, lock, clock, setup.watch, log, timeline, carry)
    try:
        watcher.start()
    except (StartRefused, ForgeError) as exc:
        log("warning", f"Steering disabled: {exc} [steering-disabled]")
        timeline.add(clock.now(), "notice", f"steering disabled: {exc}", rule_id="steering-disabled")
        return None
    cfg = setup.watch
    remaining = max(0, cfg.max_steers - carry.steers)
    log(
        "info",
        f"Watching for work-item updates ({remaining} of {cfg.max_steers} steers left, "
        f"polling every {cfg.poll_interval_s:g}s)",
    )
    return watcher


def run_facts_env(started_at: datetime, head_sha: str) -> dict[str, str]:
    """``FULLSEND_RUN_STARTED_AT`` / ``FULLSEND_RUN_HEAD_SHA`` (WIRE)."""
    return {exports.STARTED_AT: exports.started_at_text(started_at), exports.HEAD_SHA: head_sha}
