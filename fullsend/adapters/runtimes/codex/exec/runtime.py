"""Codex's exec transport: interrupt and resume (docs/architecture.md "Codex").

Each turn is one ``<agent_cli> exec --json … -C <workdir> … -o <cfg>/last-message.txt
[resume <thread_id>] -`` process with its prompt (or, for a resume, the steer envelope) on
stdin, never on argv.  A steer is queued; a running turn is interrupted by stopping and
starting the whole sandbox (``codex_interrupt``) once the opening turn can be resumed; the loop
then resumes the thread with the steer, which is delivered when the resumed process reports the
run's own thread in ``thread.started``.  A sandbox that does not come back, or a resume that
reports another thread, loses the session: the run fails with ``session_lost`` and nothing is
acked.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.runtimes.codex.exec.interrupt import (
    CODEX_STEER_INTERRUPT_BOUND_S,
    SettlePolicy,
    stop_start_sandbox,
)
from fullsend.adapters.runtimes.codex.exec.loop import CodexLoop, CodexOutcome, CodexRunState, CodexTurn
from fullsend.adapters.runtimes.codex.exec.queue import CodexSteerQueue
from fullsend.adapters.runtimes.codex.exec.stream import CodexSteerAggregator, CodexStreamParser
from fullsend.adapters.runtimes.codex.login import log_in
from fullsend.adapters.runtimes.codex.transport import CODEX_VERSIONS
from fullsend.adapters.runtimes.events import FaultEvent, ResultEvent, TextEvent, iter_json_lines
from fullsend.adapters.runtimes.feed import _warn_stderr
from fullsend.adapters.runtimes.launch import codex_args, codex_command
from fullsend.adapters.runtimes.live import CANCEL_GRACE_S, EXIT_GRACE_S, SandboxFactory
from fullsend.adapters.runtimes.registry import SessionRegistry
from fullsend.adapters.runtimes.verdict import launch_failed
from fullsend.adapters.sandbox.local import env_with_sandbox_flag, local_sandbox_factory
from fullsend.core.watch.steer import SteerMessage
from fullsend.errors import FullsendError, NoSteerSession, SteerAfterSettle
from fullsend.ports import AckListener, AgentParams, AgentRunResult, Clock

CODEX_CONFIG_DIR = "codex-config"
LAST_MESSAGE_FILE = "last-message.txt"


class CodexExecRuntime:
    """Codex over ``codex exec`` (``fullsend.ports.Runtime`` and ``Steerer``); parameters as ``LiveRuntime`` plus
    ``settle_policy`` (interrupt bounds) and ``interrupt(sandbox)`` (default: stop+start+settle).

    ``clock`` is a whole ``fullsend.ports.Clock`` (default ``SystemClock()``): its ``now`` stamps
    turn ends, its ``monotonic`` bounds each turn and the interrupt.
    """

    cli_versions = CODEX_VERSIONS

    name = "codex"

    def __init__(
        self,
        sandbox_root_parent: Path | None = None,
        clock: Clock | None = None,
        render: Callable[[SteerMessage], str] | None = None,
        warn: Callable[[str], None] | None = None,
        sandbox_factory: SandboxFactory | None = None,
        settle_policy: SettlePolicy | None = None,
        interrupt: Callable[[Any], None] | None = None,
    ) -> None:
        self._clock: Clock = clock or SystemClock()
        self._render = render or _render_steer
        self._warn = warn or _warn_stderr
        self._sandbox_factory = sandbox_factory or local_sandbox_factory(sandbox_root_parent)
        self._policy = settle_policy or SettlePolicy()
        self._interrupt = interrupt or self._stop_start
        self._queues: SessionRegistry[CodexSteerQueue] = SessionRegistry()
        self._runs: SessionRegistry[CodexRunState] = SessionRegistry()

    def _stop_start(self, sandbox: Any) -> None:
        stop_start_sandbox(sandbox, self._policy, self._clock.monotonic)

    # -- Steerer -----------------------------------------------------------------------------

    def steer(self, sandbox_name: str, msg: SteerMessage) -> None:
        """Queue a steer and interrupt a running turn (``Steer``).

        Raises ``NoSteerSession``, ``SteerSessionLost`` (terminal; before queueing anything, and
        for the steer whose interrupt lost the sandbox) or ``SteerAfterSettle``.
        """
        queue = self._queues.lookup(sandbox_name)
        if queue is None:
            raise NoSteerSession(f"no steerable codex run is registered for sandbox {sandbox_name!r}")
        lost = queue.lost_err()
        if lost is not None:
            raise lost
        if not queue.enqueue(msg):
            raise SteerAfterSettle("the codex session began settling before this steer arrived")
        queue.interrupt_if_turn_running()
        queue.signal()
        lost = queue.lost_err()
        if lost is not None:
            raise lost

    def settle(self, sandbox_name: str) -> None:
        """No more steers; the loop finishes what is queued.  Unknown sandbox: no-op."""
        queue = self._queues.lookup(sandbox_name)
        if queue is not None:
            queue.settle()

    def steer_decline_reason(self, params: AgentParams) -> str | None:
        """Codex steers every run (interrupt and resume)."""
        return None

    def cancel(self, sandbox_name: str) -> None:
        """Stop the whole sandbox now and end the loop; unknown name: no-op."""
        active = self._runs.lookup(sandbox_name)
        if active is not None:
            active.cancelled.set()
            active.queue.signal()
            _stop_quietly(active.sandbox, self._warn)

    # -- Run ---------------------------------------------------------------------------------

    def run(
        self,
        params: AgentParams,
        on_turn_end: Callable[[datetime], None],
        on_output: Callable[[str], None] | None = None,
        on_ack: AckListener | None = None,
    ) -> AgentRunResult:
        """Run the codex loop to its end; never raises for agent or sandbox failures; ``on_ack``
        hears each steer as its resume reports the thread (``CodexSteerQueue.confirm_delivery``)."""
        try:
            sandbox = self._sandbox_factory(params.sandbox_name)
        except FullsendError as exc:
            return launch_failed(str(exc))
        failure = log_in(sandbox, params)  # the run's API key, for every process of the loop
        if failure:
            _delete_quietly(sandbox, self._warn)
            return launch_failed(failure)
        queue = CodexSteerQueue(
            params.sandbox_name, lambda _n: self._interrupt(sandbox), self._clock, self._warn, on_ack=on_ack
        )
        active = CodexRunState(sandbox, queue)
        self._runs.register(params.sandbox_name, active)
        if params.steerable:
            self._queues.register(params.sandbox_name, queue)
        try:
            loop = CodexLoop(self, active, params, on_turn_end, on_output or (lambda _t: None))
            return loop.run()
        finally:
            queue.settle()
            self._queues.unregister(params.sandbox_name, queue)
            self._runs.unregister(params.sandbox_name, active)
            try:
                sandbox.delete()
            except FullsendError as exc:
                self._warn(f"The sandbox could not be cleaned up: {exc}")

    def run_turn(
        self,
        active: CodexRunState,
        params: AgentParams,
        turn: CodexTurn,
        budget_s: float,
        aggregator: CodexSteerAggregator,
        on_output: Callable[[str], None],
    ) -> CodexOutcome:
        """Launch one codex process and read it to its end."""
        cfg = Path(active.sandbox.root) / CODEX_CONFIG_DIR
        try:
            active.sandbox.make_dir(cfg)
        except FullsendError as exc:
            return CodexOutcome(exit_code=-1, launch_error=str(exc))
        flags = (["--model", params.model] if params.model else []) + list(params.extra_args)
        argv = [
            params.agent_cli,
            *codex_args(flags, str(params.workdir), str(cfg / LAST_MESSAGE_FILE), turn.resume_thread_id),
        ]
        try:
            process = self._launch(active.sandbox, params, turn, flags, argv)
        except FullsendError as exc:
            return CodexOutcome(exit_code=-1, launch_error=str(exc))
        drained = threading.Event()
        threading.Thread(target=self._supervise, args=(active, process, budget_s, drained), daemon=True).start()
        queue = active.queue
        parser = CodexStreamParser(
            queue.note_thread_id, queue.note_resumable, queue.note_terminal, queue.note_delegating
        )
        result: ResultEvent | None = None
        stopped_lost = False
        for obj in iter_json_lines(process.stdout, on_unreadable=parser.note_unreadable):
            for event in parser.parse(obj):
                if isinstance(event, TextEvent):
                    self.call(on_output, event.text)
            if not stopped_lost and queue.lost_err() is not None:
                stopped_lost = True  # the process works in a thread that is not the run's: stop it
                _stop_quietly(active.sandbox, self._warn)
        fault = None
        for event in parser.finish():
            if isinstance(event, ResultEvent):
                result = event
                aggregator.add_result(event)
            elif isinstance(event, FaultEvent):
                fault = fault or event.verdict
        drained.set()
        exit_code = self._wait(active, process)
        return CodexOutcome(exit_code, parser.thread_id, result, fault=fault, denials=tuple(parser.denials))

    @staticmethod
    def _launch(sandbox: Any, params: AgentParams, turn: CodexTurn, flags: list[str], argv: list[str]) -> Any:
        """openshell: the pinned ``printf … | codex exec … [resume <id>] -`` script; local: argv + stdin."""
        env = env_with_sandbox_flag(params.env)
        if sandbox.kind == "openshell":
            script = codex_command(
                flags, turn.prompt, turn.resume_thread_id, program=params.agent_cli, last_message_file=LAST_MESSAGE_FILE
            )
            return sandbox.launch_pinned(script, env)
        return sandbox.launch(argv, env, params.workdir, stdin_bytes=turn.prompt.encode("utf-8"))

    def _supervise(self, active: CodexRunState, process: Any, budget_s: float, drained: threading.Event) -> None:
        try:
            process.wait(timeout_s=budget_s)
        except subprocess.TimeoutExpired:
            if not drained.is_set():
                active.timed_out = True
                _stop_quietly(active.sandbox, self._warn)
            return
        if drained.wait(EXIT_GRACE_S):
            return
        # The reader may wait behind a steer's interrupt (its stop ended this process): the output
        # drains once the interrupt is over, so only then is an undrained stdout a stuck child.
        active.queue.wait_interrupt_over(CODEX_STEER_INTERRUPT_BOUND_S)
        if not drained.wait(EXIT_GRACE_S):
            _stop_quietly(active.sandbox, self._warn)

    def _wait(self, active: CodexRunState, process: Any) -> int:
        try:
            return process.wait(timeout_s=EXIT_GRACE_S)
        except subprocess.TimeoutExpired:
            _stop_quietly(active.sandbox, self._warn)
            return process.wait(timeout_s=EXIT_GRACE_S + CANCEL_GRACE_S)

    def render(self, msg: SteerMessage) -> str:
        """The envelope text a resume pipes into codex."""
        return self._render(msg)

    def monotonic(self) -> float:
        """Monotonic seconds of the injected clock (turn budgets)."""
        return self._clock.monotonic()

    @property
    def clock(self) -> Clock:
        return self._clock

    def call(self, fn: Callable[[Any], None], arg: Any) -> None:
        """Call a caller's callback; its failure is a warning, never the reader's death."""
        try:
            fn(arg)
        except Exception as exc:
            self._warn(f"A run callback failed: {type(exc).__name__}: {exc}")


def _delete_quietly(sandbox: Any, warn: Callable[[str], None]) -> None:
    try:
        sandbox.delete()
    except FullsendError as exc:
        warn(f"The sandbox could not be cleaned up: {exc}")


def _stop_quietly(sandbox: Any, warn: Callable[[str], None]) -> None:
    try:
        sandbox.stop(CANCEL_GRACE_S + 1.5)
    except FullsendError as exc:
        warn(f"Stopping the sandbox failed: {exc}")


__all__ = ["CodexExecRuntime", "CodexTurn"]


def _render_steer(msg: SteerMessage) -> str:
    """The envelope renderer (``fullsend.wording.render_steer``), loaded on first use: jinja2 stays
    out of what imports this module without steering (the scripted agent's ``--version`` answer)."""
    from fullsend.wording import render_steer

    return render_steer(msg)
