"""Helpers for the real-CLI transport tests (issue 5): find the pinned CLIs, build their offline
environment, run a runtime in a thread.

The CLIs come from ``tools/install_agent_clis.sh`` (CI runs it from ``.ci/run``) under
``$FULLSEND_CLI_CACHE`` (default ``~/.cache/fullsend-clis``).  A missing CLI is a test FAILURE
naming that script, never a silent skip.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from fullsend.core.text.envelope import render_envelope
from fullsend.core.watch.steer import SteerMessage
from fullsend.ports import AgentParams, AgentRunResult
from fullsend.wording import default_wording
from tests.support.tools import missing_tool

INSTALL_SCRIPT = "tools/install_agent_clis.sh"
RUN_BOUND_S = 100.0  # a bound against hangs (each test must stay under two minutes), never a speed check
WORDING = default_wording()
STEER_MARKER = "cover-the-error-path-4242"
STEER = SteerMessage(4242, f"Also cover the error path ({STEER_MARKER}).", event="issue_comment", actor="octocat")


def cli_cache() -> Path:
    """Where ``tools/install_agent_clis.sh`` installs the CLIs."""
    return Path(os.environ.get("FULLSEND_CLI_CACHE") or Path.home() / ".cache" / "fullsend-clis")


def cli_bin_dir() -> Path:
    return cli_cache() / "node_modules" / ".bin"


def require_cli(program: str) -> str:
    """The path of an installed pinned CLI; FAILS the test (naming the install script) if absent."""
    path = cli_bin_dir() / program
    if not (path.exists() and os.access(path, os.X_OK)):
        missing_tool(f"the pinned {program} CLI (expected at {path})", f"bash {INSTALL_SCRIPT}")
    return str(path)


def offline_env(home: Path, **extra: str) -> dict[str, str]:
    """A clean environment (as ``env -i``) with the cached CLIs and their Node.js first on PATH."""
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": f"{cli_bin_dir()}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TMPDIR": str(home),
        "NO_COLOR": "1",
    }
    env.update(extra)
    return env


def claude_offline_env(home: Path, base_url: str, **extra: str) -> dict[str, str]:
    """:func:`offline_env` for Claude Code against a scripted Anthropic server at ``base_url``:
    a fake key, and the CLI's non-essential traffic, updates, telemetry and error reports off."""
    return offline_env(
        home,
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="sk-ant-fake",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        **extra,
    )


def record_events(runtime: Any, kind: type) -> list[Any]:
    """Every event of type ``kind`` the runtime's real parser gives, run after run (a spy on
    ``dialect.new_parser``: what the CLI wrote is seen, not assumed)."""
    seen: list[Any] = []
    make = runtime.dialect.new_parser

    def recording(clock: Any) -> Any:
        parser = make(clock)
        parse = parser.parse

        def parse_and_record(obj: dict[str, Any]) -> list[Any]:
            events = parse(obj)
            seen.extend(e for e in events if isinstance(e, kind))
            return events

        parser.parse = parse_and_record
        return parser

    runtime.dialect.new_parser = recording
    return seen


def render(msg: SteerMessage) -> str:
    """The envelope exactly as the app wires it (``render_envelope(m, wording)``)."""
    return render_envelope(msg, WORDING)


@dataclass
class RunInThread:
    """``runtime.run(params, …)`` in a thread; records turn ends and output lines."""

    runtime: Any
    params: AgentParams
    turn_ends: list[datetime] = field(default_factory=list)
    output: list[str] = field(default_factory=list)
    result: AgentRunResult | None = None
    error: BaseException | None = None

    def start(self) -> RunInThread:
        self._thread = threading.Thread(target=self._go, name="real-cli-run", daemon=True)
        self._thread.start()
        return self

    def _go(self) -> None:
        try:
            self.result = self.runtime.run(self.params, self.turn_ends.append, self.output.append)
        except BaseException as exc:  # reported by join()
            self.error = exc

    def alive(self) -> bool:
        return self._thread.is_alive()

    def join(self, timeout_s: float = RUN_BOUND_S) -> AgentRunResult:
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            self.runtime.cancel(self.params.sandbox_name)
            self._thread.join(10.0)
            raise AssertionError(f"the run did not return within {timeout_s:g} s; output: {self.output[-10:]}")
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


def wait_until(predicate: Callable[[], bool], what: str, run: RunInThread, timeout_s: float = 60.0) -> None:
    """Poll ``predicate`` until true; fail early if the run already returned."""
    pause = threading.Event()
    waited = 0.0
    while not predicate():
        if not run.alive():
            raise AssertionError(f"the run ended before {what}: {run.result or run.error}; output: {run.output[-10:]}")
        if waited >= timeout_s:
            raise AssertionError(f"never happened within {timeout_s:g} s: {what}; output: {run.output[-10:]}")
        pause.wait(0.05)
        waited += 0.05
