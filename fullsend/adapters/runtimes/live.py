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
from datetime import datetime
from pathlib import Path
from typing import Any

from fullsend.adapters.runtimes.dialect import LiveDialect
from fullsend.adapters.runtimes.feed import (
    DEFAULT_AGENT_PROMPT,
    FEEDER_PID_NAME,
    MAILBOX_NAME,
    Now,
    SteerFeed,
    _warn_stderr,
)
from fullsend.adapters.runtimes.liverun import CANCEL_GRACE_S, ActiveRun
from fullsend.adapters.runtimes.registry import SessionRegistry
from fullsend.adapters.runtimes.verdict import launch_failed
from fullsend.adapters.runtimes.versions import Version
from fullsend.adapters.sandbox.local import env_with_sandbox_flag, local_sandbox_factory
from fullsend.core.watch.steer import SteerMessage
from fullsend.errors import FullsendError, NoSteerSession, SandboxError
from fullsend.ports import AckListener, AgentParams, AgentRunResult

EXIT_GRACE_S = 2.0  # after the agent exits, how long its output may still drain


SandboxFactory = Callable[[str], Any]


class LiveRuntime:
    """A live runtime (``fullsend.ports.Runtime`` and ``Steerer``) driving one ``LiveDialect``.

    ``sandbox_factory(name)`` creates a ready sandbox (default: ``LocalSandbox`` under
    ``sandbox_root_parent``); ``render(msg) -> str`` builds the envelope text; ``warn`` receives
    warnings; ``clock`` gives ``now()`` (default ``SystemClock``).
    """

    def __init__(
        self,
        dialect: LiveDialect,
        sandbox_root_parent: Path | None = None,
        clock: Now | None = None,
        render: Callable[[SteerMessage], str] | None = None,
        warn: Callable[[str], None] | None = None,
        sandbox_factory: SandboxFactory | None = None,
    ) -> None:
        from fullsend.adapters.clock import SystemClock

        self.dialect = dialect
        self.name = dialect.name
        self._clock: Now = clock or SystemClock()
        self._render = render or _render_steer
        self._warn = warn or _warn_stderr
        self._sandbox_factory = sandbox_factory or local_sandbox_factory(sandbox_root_parent)
        self._feeds: SessionRegistry[SteerFeed] = SessionRegistry()
        self._runs: SessionRegistry[ActiveRun] = SessionRegistry()

    # -- Steerer -----------------------------------------------------------------------------

    def steer(self, sandbox_name: str, msg: SteerMessage) -> None:
        """Append one steer line; accepted, not delivered.

        Raises ``NoSteerSession`` (retry later), ``SteerAfterSettle``, ``DuplicateSteer`` or
        ``SandboxError`` (the write failed; nothing recorded).
        """
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
        the feed's acknowledgements as they happen (``SteerFeed``).
        """
        try:
            sandbox = self._sandbox_factory(params.sandbox_name)
        except FullsendError as exc:
            return launch_failed(str(exc))
        try:
            return self._run_in(sandbox, params, on_turn_end, on_output or (lambda _line: None), on_ack)
        finally:
            try:
                sandbox.delete()
            except FullsendError as exc:
                self._warn(f"The sandbox could not be cleaned up: {exc}")

    def _run_in(
        self,
        sandbox: Any,
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

    def _launch(self, sandbox: Any, params: AgentParams, mailbox: Path, pid_file: Path) -> Any:
        """openshell: the dialect's pinned script (feeder inside it); local: argv with a feeder."""
        env = {**env_with_sandbox_flag(params.env), **self.dialect.launch_env(params)}
        if sandbox.kind == "openshell":
            return sandbox.launch_pinned(self.dialect.script(params), env)
        return sandbox.launch(
            self.dialect.argv(params, mailbox.parent), env, params.workdir, mailbox=mailbox, feeder_pid_file=pid_file
        )

    def _supervise(self, active: ActiveRun, process: Any, timeout_s: float, pumped: threading.Event) -> None:
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

    def _wait_exit(self, active: ActiveRun, process: Any) -> int:
        try:
            return process.wait(timeout_s=EXIT_GRACE_S)
        except subprocess.TimeoutExpired:
            active.stop_quietly()
            return process.wait(timeout_s=EXIT_GRACE_S + CANCEL_GRACE_S)


def _render_steer(msg: SteerMessage) -> str:
    """The envelope renderer (``fullsend.wording.render_steer``), loaded on first use: jinja2 stays
    out of what imports this module without steering (the scripted agent's ``--version`` answer)."""
    from fullsend.wording import render_steer

    return render_steer(msg)
