"""The live feed shared by Claude Code and pi: mailbox, feeder, acks (docs/architecture.md "Live feed").

A steer is one line appended to a mailbox file that a feeder tails into the agent's stdin; it is
delivered only when the runtime echoes that very line, matched by its key (Claude: the text; pi:
the rpc id), never by counting.  ``SteerFeed`` is the per-run state machine; the sandbox commands
are built here as data (``seed_command``, ``append_command``, ``stop_feeder_command``) and run
through an ``exec`` callable, so tests can record them.

Lock order (docs/architecture.md "Threads and time"):
the caller's sandbox lock (outer) → ``SteerFeed._mu`` (inner).  The ``on_ack`` listener is called
after ``_mu`` is released, never under it.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Protocol

from fullsend.adapters.runtimes.acks import DELIVERED, PENDING, QUEUED, REJECTED, Entry, delivered, match
from fullsend.adapters.sandbox.shell import sanitize_output, shell_quote
from fullsend.core.watch.steer import SteerMessage, SteerResult
from fullsend.errors import DuplicateSteer, FullsendError, SandboxError, SteerAfterSettle
from fullsend.ports import AckListener

MAILBOX_NAME = "steer-inbox.ndjson"
FEEDER_PID_NAME = "steer-feeder.pid"
STEER_EXEC_TIMEOUT_S = 15.0
DEFAULT_AGENT_PROMPT = "Run the agent task"

ExecFn = Callable[[str, float], Sequence[object]]
"""Runs a shell command in the sandbox: ``(command, timeout_s) -> (stdout, stderr, exit_code)``."""


class Now(Protocol):
    """The part of ``fullsend.ports.Clock`` the feed needs."""

    def now(self) -> datetime: ...


def seed_command(line: str, mailbox: str) -> str:
    """Truncate the mailbox and write the opening line (must run before the launch)."""
    return f"printf '%s\\n' {shell_quote(line)} > {shell_quote(mailbox)}"


def append_command(line: str, mailbox: str) -> str:
    """Append one steer line to the mailbox (never an upload, never a rewrite)."""
    return f"printf '%s\\n' {shell_quote(line)} >> {shell_quote(mailbox)}"


def stop_feeder_command(pid_path: str) -> str:
    """Terminate the feeder whose pid the launch wrote to ``pid_path``."""
    return f'kill "$(cat {shell_quote(pid_path)})"'


def _run_exec(exec_fn: ExecFn, command: str, what: str) -> None:
    """Run ``command``; raise ``SandboxError("<what>: <err>")`` on exec error or non-zero exit."""
    try:
        _, stderr, code = exec_fn(command, STEER_EXEC_TIMEOUT_S)
    except FullsendError as exc:
        raise SandboxError(f"{what}: {sanitize_output(str(exc))}") from exc
    except OSError as exc:
        raise SandboxError(f"{what}: {sanitize_output(str(exc))}") from exc
    if code != 0:
        raise SandboxError(f"{what}: exit {code}: {sanitize_output(str(stderr))}")


class SteerFeed:
    """Per-run live-feed state, one mutex for every decision.

    ``exec_fn`` runs the seed/append/kill commands in the sandbox; ``stop_feeder_fn`` replaces the
    kill exec when the feeder is not a process with a pid file; ``warn`` receives warnings;
    ``on_ack`` hears each acknowledgement and each withdrawal as it happens (``AckListener``).
    """

    def __init__(
        self,
        exec_fn: ExecFn,
        mailbox: str,
        pid_path: str,
        clock: Now,
        warn: Callable[[str], None] | None = None,
        stop_feeder_fn: Callable[[], None] | None = None,
        on_ack: AckListener | None = None,
        hold_wait_s: float = 0.0,
    ) -> None:
        self._exec, self.mailbox, self.pid_path, self._clock = exec_fn, mailbox, pid_path, clock
        self._warn = warn or _warn_stderr
        self._stop_feeder_fn = stop_feeder_fn
        self._on_ack = on_ack
        self._mu = threading.Lock()
        self._outstanding: list[Entry] = []
        self._in_turn = False
        self._settled = False
        self._closing = False
        self._results: list[SteerResult] = []
        self._held = False  # delegated work runs that would end with the input (``note_hold``)
        self._hold_wait_s = hold_wait_s
        self._hold_timer: threading.Timer | None = None

    def seed(self, line: str, key: str, text: str = "") -> None:
        """Write the opening line (truncating); on success it becomes an outstanding non-steer."""
        _run_exec(self._exec, seed_command(line, self.mailbox), "seeding the steer mailbox")
        with self._mu:
            self._outstanding.append(Entry(key, None, is_steer=False, text=text))

    def append_line(self, msg: SteerMessage, line: str, key: str, text: str = "") -> None:
        """Append one steer; raises ``SteerAfterSettle``, ``DuplicateSteer`` or ``SandboxError``.

        ``text`` is the message as the agent will read it (its identity in a delivery that names
        no key).  The exec runs while holding the feed mutex so a concurrent settle cannot decide
        "nothing pending" against a line in flight; only a definite success records the entry.
        """
        with self._mu:
            if self._settled or self._closing:
                raise SteerAfterSettle("the session began settling before this steer arrived; it was not written")
            if any(e.outstanding and e.key == key for e in self._outstanding):
                raise DuplicateSteer(
                    "an identical steer is still waiting for the agent's acknowledgement; not written twice"
                )
            _run_exec(self._exec, append_command(line, self.mailbox), "writing steer to the mailbox")
            self._outstanding.append(Entry(key, msg, is_steer=True, text=text))

    def send(self, line: str) -> str:
        """Append a line the protocol owes the agent (no entry: it is not a message to acknowledge).

        Returns "" when written, else the error; what the line carried stays outstanding, so the run
        cannot settle on it as delivered.  The write holds the feed mutex, like every other append:
        two appends at once could interleave their bytes in the mailbox.
        """
        with self._mu:
            try:
                _run_exec(self._exec, append_command(line, self.mailbox), "writing to the agent's input")
            except SandboxError as exc:
                return str(exc)
        return ""

    def note_turn_open(self) -> None:
        """The CLI started a turn on its own account or ours: the feed stays open until it ends."""
        with self._mu:
            self._in_turn = True

    def note_echo(self, at: datetime, id: str = "", content: str = "", parts: tuple[str, ...] = ()) -> bool:
        """A delivery of consumed line(s); returns True when the feeder must now be stopped.

        A delivery acknowledges, by identity and exactly once, the entry whose key (``id``) or
        text (``content``) it names; a folded replay that matches none as a whole acknowledges
        each entry one of its ``parts`` (text blocks) names, or each of the queued messages its
        text joins with ``\\n``.  A delivery that matches no outstanding entry is ignored
        entirely (the agent can write the mailbox).  Each delivered steer records
        ``SteerResult(mode="live", delivered_at=at)`` and is then told to ``on_ack``.
        """
        acked: list[SteerResult] = []
        with self._mu:
            entries = delivered(self._outstanding, id, content, parts)
            for entry in entries:
                entry.state, self._in_turn = DELIVERED, True
                if entry.is_steer and entry.msg is not None:
                    acked.append(SteerResult(entry.msg.follow_up_run_id, at, "live"))
            self._results.extend(acked)
            close = bool(entries) and self._mark_closing_locked()
        self._signal(acked, True)
        return close

    def note_queued(self, id: str) -> None:
        """The CLI queued the line with key ``id``: accepted, not yet delivered (pi ``queued``)."""
        with self._mu:
            entry = match(self._outstanding, id, "")
            if entry is not None and entry.state == PENDING:
                entry.state = QUEUED

    def note_nack(self, id: str) -> bool:
        """The CLI refused the line ``id``: retire it without a result.

        A refusal after an acceptance is a conflict: the steer is not delivered (its result is
        withdrawn, ``on_ack`` is told, and a warning says so).  Returns True when the feeder must
        now be stopped.
        """
        withdrawn: list[SteerResult] = []
        with self._mu:
            entry = next((e for e in self._outstanding if id and e.key == id and e.state != REJECTED), None)
            if entry is None:
                return False
            if entry.state == DELIVERED and entry.is_steer and entry.msg is not None:
                run_id = entry.msg.follow_up_run_id
                withdrawn = [r for r in self._results if r.follow_up_run_id == run_id]
                self._results = [r for r in self._results if r.follow_up_run_id != run_id]
                self._warn(
                    f"The agent accepted and then rejected the update from follow-up run {run_id}; "
                    "it counts as not delivered"
                )
            entry.state = REJECTED
            close = self._mark_closing_locked()
        self._signal(withdrawn, False)
        return close

    def _signal(self, results: list[SteerResult], acknowledged: bool) -> None:
        """Tell ``on_ack`` (``_mu`` not held); a listener's failure is a warning, never the reader's."""
        listener = self._on_ack
        if listener is None:
            return
        for result in results:
            try:
                listener(result, acknowledged)
            except Exception as exc:
                self._warn(f"A run callback failed: {type(exc).__name__}: {exc}")

    def turn_open(self) -> bool:
        """True while the turn of an acknowledged message has not ended."""
        with self._mu:
            return self._in_turn

    def note_turn_end(self) -> bool:
        """A turn ended; returns True when the feeder must now be stopped."""
        with self._mu:
            self._in_turn = False
            return self._mark_closing_locked()

    def settle(self) -> bool:
        """No more steers will come; returns True when the feeder must now be stopped."""
        with self._mu:
            self._settled = True
            return self._mark_closing_locked()

    def mark_terminal(self) -> None:
        """Poison the feed at run exit (before unregistering): later appends are refused, and a
        delegated wait still running is called off."""
        with self._mu:
            self._settled = True
            timer, self._hold_timer = self._hold_timer, None
        if timer is not None:
            timer.cancel()

    def note_hold(self, held: bool) -> bool:
        """Whether delegated work runs that would end with the input (``HoldEvent``); returns True
        when the feeder must now be stopped."""
        with self._mu:
            self._held = held
            return self._mark_closing_locked()

    def _mark_closing_locked(self) -> bool:
        if self._closing or not self._settled or self._in_turn:
            return False
        if any(e.outstanding for e in self._outstanding):
            return False
        if self._held:  # only delegated work keeps the input open: wait for it, within the bound
            self._start_hold_wait_locked()
            return False
        self._closing = True
        return True

    def _start_hold_wait_locked(self) -> None:
        if self._hold_timer is not None:
            return
        self._warn(f"Waiting up to {self._hold_wait_s:g} s for work the agent delegated to finish")
        self._hold_timer = threading.Timer(max(0.0, self._hold_wait_s), self._hold_wait_over)
        self._hold_timer.daemon = True
        self._hold_timer.start()

    def _hold_wait_over(self) -> None:
        """The delegated wait ended: close the input whatever still runs (it is judged unfinished)."""
        with self._mu:
            if self._closing or self._hold_timer is None:  # closed meanwhile, or the run is over
                return
            self._held = False
            close = self._mark_closing_locked()
        self.close_if(close)

    def stop_feeder(self) -> None:
        """Stop the feeder, which closes the agent's stdin; raises ``SandboxError`` on failure."""
        if self._stop_feeder_fn is not None:
            self._stop_feeder_fn()
            return
        _run_exec(self._exec, stop_feeder_command(self.pid_path), "stopping the steer feeder")

    def close_if(self, should_close: bool) -> None:
        """Stop the feeder when ``should_close``; a failure is only a warning."""
        if not should_close:
            return
        try:
            self.stop_feeder()
        except FullsendError as exc:
            self._warn(f"The steer feeder could not be stopped, so the run will end at its timeout: {exc}")

    def steer_results(self) -> list[SteerResult]:
        """A copy of the acknowledged steers, in ack order."""
        with self._mu:
            return list(self._results)


def _warn_stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
