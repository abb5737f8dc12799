"""The live-runtime driver shared by Claude Code and pi (docs/architecture.md "Live feed").

``LiveRuntime`` implements ``fullsend.ports.Runtime`` given a ``LiveDialect`` (argv, input
lines and keys, stdout parser, metrics).  One ``run`` is: create the sandbox, seed the mailbox
with the opening line, register the feed, launch the agent with its stdin fed from the mailbox,
react to each parsed event, and on exit copy the acknowledged steers, poison the feed and only
then unregister it.  The steer text reaches the agent only through the mailbox, never its argv.

Registries are per runtime instance: the app must call ``steer``/``settle``/``cancel`` on the
instance that runs the agent.  The caller holds the sandbox lock across ``steer`` and
``settle`` (docs/architecture.md "Threads and time").
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import ClassVar, Unpack

from fullsend.adapters.runtimes.dialect import LiveDialect
from fullsend.adapters.runtimes.feed import DEFAULT_AGENT_PROMPT, FEEDER_PID_NAME, MAILBOX_NAME, Now, SteerFeed
from fullsend.adapters.runtimes.liverun import CANCEL_GRACE_S, ActiveRun
from fullsend.adapters.runtimes.parts import RuntimeOptions, runtime_parts
from fullsend.adapters.runtimes.registry import SessionRegistry
from fullsend.adapters.runtimes.verdict import launch_failed
from fullsend.adapters.sandbox.local import env_with_sandbox_flag
from fullsend.core.cli_versions import Version
from fullsend.core.watch.steer import SteerMessage
from fullsend.errors import FullsendError, NoSteerSession, SandboxError, SteerUnsupported
from fullsend.ports import AckListener, AgentParams, AgentRunResult, Launch, Sandbox, SandboxProcess

EXIT_GRACE_S = 2.0  # after the agent exits, how long its output may still drain


class LiveRuntime:
    """A live runtime (``fullsend.ports.Runtime`` and ``Steerer``) driving one ``LiveDialect``.

    A runtime class names its dialect (``dialect_type``) and nothing else: this one constructor
    builds every live runtime from its dialect and the ``RuntimeOptions`` (``sandbox_factory(name)``
    creates a ready sandbox, default a ``LocalSandbox`` under ``sandbox_root_parent``;
    ``render(msg)`` the envelope text; ``warn`` hears warnings; ``clock`` gives ``now()``).

    A steerable run whose dialect declines steering (``steer_decline_reason``: pi with fallback
    models) runs unsteered: ``steer_gate`` announces the decline once, and ``steer`` raises
    ``SteerUnsupported`` (not ``NoSteerSession``) until the run returns.
    """

    dialect_type: ClassVar[type[LiveDialect]]

    def __init__(self, **options: Unpack[RuntimeOptions]) -> None:
        parts = runtime_parts(options)
        self.dialect = self.dialect_type()
        self.name = self.dialect.name
        self._clock: Now = parts.clock
        self._render = parts.render
        self._warn = parts.warn
        self._sandbox_factory = parts.sandbox_factory
        self._feeds: SessionRegistry[SteerFeed] = SessionRegistry()
        self._runs: SessionRegistry[ActiveRun] = SessionRegistry()
        self._declines: SessionRegistry[str] = SessionRegistry()

    # -- Steerer -----------------------------------------------------------------------------

    def steer(self, sandbox_name: str, msg: SteerMessage) -> None:
        """Append one steer line; accepted, not delivered.

        Raises ``NoSteerSession`` (retry later), ``SteerUnsupported`` (a run whose steering was
        declined), ``SteerAfterSettle``, ``DuplicateSteer`` or ``SandboxError`` (the write failed;
        nothing recorded).
        """
        declined = self._declines.lookup(sandbox_name)
        if declined is not None:
            raise SteerUnsupported(f"{self.name} cannot take steers on this run: {declined}")
        feed, active = self._feeds.lookup(sandbox_name), self._runs.lookup(sandbox_name)
        if feed is None:
            raise NoSteerSession(f"no steerable {self.name} run is registered for sandbox {sandbox_name!r}")
        envelope = self._render(msg)
        parser = active.parser if active is not None else None
        line, key = self.dialect.steer_line(envelope, parser)
        feed.append_line(msg, line, key, text=envelope)
        self.dialect.steer_written(parser, key)

    def settle(self, sandbox_name: str) -> None:
        """No more steers; stops the feeder now if nothing is pending.  Unknown sandbox: no-op.

        Raises ``SandboxError`` when the feeder kill fails (the stream path only warns).
        """
        feed = self._feeds.lookup(sandbox_name)
        if feed is not None and feed.settle():
            feed.stop_feeder()

    def steer_decline_reason(self, params: AgentParams) -> str | None:
        """Live runtimes steer every run unless a dialect says otherwise."""
        return self.dialect.steer_decline_reason(params)

    def steer_gate(self, params: AgentParams) -> bool:
        """True when the run may be steered; a declined steerable run is announced and recorded."""
        if not params.steerable:
            return False
        reason = self.dialect.steer_decline_reason(params)
        if reason is None:
            return True
        self._warn(f"Steering disabled: {reason}")
        self._declines.register(params.sandbox_name, reason)
        return False

    def clear_decline(self, sandbox_name: str) -> None:
        """Forget a recorded decline (done when the run returns)."""
        reason = self._declines.lookup(sandbox_name)
        if reason is not None:
            self._declines.unregister(sandbox_name, reason)

    #: A live steer reaches the running turn: no interrupt to leave time for when settling.
    interrupts_to_steer = False

    def transport_line(self, preference: str, version: Version, agent_args: Sequence[str] = ()) -> str:
        """One transport only: nothing to choose, ``""`` (Codex's runtime chooses and says why)."""
        del preference, version, agent_args
        return ""

    def cancel(self, sandbox_name: str) -> None:
        """Stop the whole sandbox (every process of the group) at once; unknown name: no-op."""
        active = self._runs.lookup(sandbox_name)
        if active is not None:
            active.cancelled = True
            active.stop_quietly()

    # -- Run ---------------------------------------------------------------------------------

    def run(
        self,
        params: AgentParams,
        on_turn_end: Callable[[datetime], None],
        on_output: Callable[[str], None] | None = None,
        on_ack: AckListener | None = None,
    ) -> AgentRunResult:
        """Run one agent iteration to its end and return its ``AgentRunResult``.

        Never raises for agent or sandbox failures: ``exit_code`` is -1 when the agent could
        not start, ``timed_out``/``cancelled`` tell why a run was cut short.  ``on_ack`` hears
        the feed's acknowledgements as they happen (``SteerFeed``).  A steerable run the dialect
        declines runs unsteered (``steer_gate``).
        """
        if params.steerable and not self.steer_gate(params):
            params = replace(params, steerable=False)
        try:
            sandbox = self._sandbox_factory(params.sandbox_name)
        except FullsendError as exc:
            self.clear_decline(params.sandbox_name)
            return launch_failed(str(exc))
        try:
            return self._run_in(sandbox, params, on_turn_end, on_output or (lambda _line: None), on_ack)
        finally:
            self.clear_decline(params.sandbox_name)
            try:
                sandbox.delete()
            except FullsendError as exc:
                self._warn(f"The sandbox could not be cleaned up: {exc}")

    def _run_in(
        self,
        sandbox: Sandbox,
        params: AgentParams,
        on_turn_end: Callable[[datetime], None],
        on_output: Callable[[str], None],
        on_ack: AckListener | None,
    ) -> AgentRunResult:
        cfg = Path(sandbox.root) / self.dialect.config_dir_name
        try:
            sandbox.make_dir(cfg)
        except FullsendError as exc:
            return launch_failed(str(exc))
        mailbox, pid_file = cfg / MAILBOX_NAME, cfg / FEEDER_PID_NAME
        feed = SteerFeed(
            sandbox.exec,
            str(mailbox),
            str(pid_file),
            self._clock,
            self._warn,
            on_ack=on_ack,
            hold_wait_s=params.delegated_wait_s,
        )
        parser = self.dialect.new_parser(self._clock)
        try:
            feed.seed(*self.dialect.opening(params, parser), text=params.prompt or DEFAULT_AGENT_PROMPT)
        except SandboxError as exc:
            return launch_failed(str(exc))
        if not params.steerable:
            feed.settle()  # the feed closes after the opening turn
        active = ActiveRun(sandbox, feed, self._clock, parser, self._warn, unexpected=self.dialect.denial_judge(params))
        self._runs.register(params.sandbox_name, active)
        if params.steerable:
            self._feeds.register(params.sandbox_name, feed)
        try:
            return self._launch_and_pump(active, params, mailbox, pid_file, on_turn_end, on_output)
        finally:
            active.done.set()
            feed.mark_terminal()  # poison BEFORE unregister
            self._feeds.unregister(params.sandbox_name, feed)
            self._runs.unregister(params.sandbox_name, active)

    def _launch_and_pump(
        self,
        active: ActiveRun,
        params: AgentParams,
        mailbox: Path,
        pid_file: Path,
        on_turn_end: Callable[[datetime], None],
        on_output: Callable[[str], None],
    ) -> AgentRunResult:
        failure = self.dialect.prepare(active.sandbox, params)  # Codex: log in with the run's key
        if failure:
            return launch_failed(failure)
        try:
            process = self._launch(active.sandbox, params, mailbox, pid_file)
        except FullsendError as exc:
            return launch_failed(str(exc))
        pumped = threading.Event()
        threading.Thread(
            target=self._supervise,
            args=(active, process, params.timeout_s, pumped),
            name=f"supervise-{params.sandbox_name}",
            daemon=True,
        ).start()
        aggregator = self.dialect.new_aggregator()
        active.pump(process.stdout, aggregator, self.dialect.incomplete, on_turn_end, on_output)
        pumped.set()
        exit_code = self._wait_exit(active, process)
        return active.result(process, exit_code, aggregator)

    def _launch(self, sandbox: Sandbox, params: AgentParams, mailbox: Path, pid_file: Path) -> SandboxProcess:
        """The agent's argv fed from the mailbox, and the dialect's pinned script (feeder inside it)
        for a sandbox that runs scripts (OpenShell)."""
        env = {**env_with_sandbox_flag(params.env), **self.dialect.launch_env(params)}
        argv = tuple(self.dialect.argv(params, mailbox.parent))
        script = self.dialect.script(params)
        return sandbox.launch(Launch(argv, env, params.workdir, script, mailbox=mailbox, feeder_pid_file=pid_file))

    def _supervise(self, active: ActiveRun, process: SandboxProcess, timeout_s: float, pumped: threading.Event) -> None:
        """Kill the group at the timeout, or when output does not drain after the agent exits."""
        try:
            process.wait(timeout_s=timeout_s)
        except subprocess.TimeoutExpired:
            if not active.done.is_set():
                active.timed_out = True
                active.stop_quietly()
            return
        if not pumped.wait(EXIT_GRACE_S):
            active.stop_quietly()  # a leftover child still holds the agent's stdout open

    def _wait_exit(self, active: ActiveRun, process: SandboxProcess) -> int:
        try:
            return process.wait(timeout_s=EXIT_GRACE_S)
        except subprocess.TimeoutExpired:
            active.stop_quietly()
            return process.wait(timeout_s=EXIT_GRACE_S + CANCEL_GRACE_S)
