"""The Codex run loop (docs/architecture.md "Codex"): turns, resumes, verdict, lost session.

The verdict is that of the last *meaningful* process: a guard refusal (exit 97/98) is final and
never retried; a resume that never reported its thread costs the steer, not the run; a resume
that reported another thread loses the session; a turn whose terminal line was read is judged by
that line, even when a late stop then ended its process; only a turn with no terminal line can
have been stopped for a steer, and it is superseded by its resume; any other failed turn is
final, whatever later turns do (docs/runtimes.md "Which end counts").
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from fullsend.adapters.runtimes.codex.exec.queue import CodexSteerQueue, ThreadLost, codex_turn_timeout
from fullsend.adapters.runtimes.codex.exec.stream import NO_TERMINAL_LINE, CodexSteerAggregator
from fullsend.adapters.runtimes.codex.refusals import denial_judge
from fullsend.adapters.runtimes.events import ResultEvent
from fullsend.adapters.runtimes.feed import DEFAULT_AGENT_PROMPT
from fullsend.adapters.runtimes.verdict import CANCELLED, NO_TURN, error_text, process_verdict, tool_refused
from fullsend.adapters.sandbox.shell import sanitize_output
from fullsend.core.agent_end import RULE_SESSION_LOST, AgentEnd, EndVerdict
from fullsend.core.final_word import ToolDenial, distinct_denials
from fullsend.core.watch.steer import SteerMessage
from fullsend.errors import ExitCode, SandboxError
from fullsend.ports import AgentParams, AgentRunResult

#: A codex process refused by a guard: the verdict, never retried.
GUARD_EXIT_CODES = (ExitCode.CODEX_GUARD_REFUSED, ExitCode.CODEX_CONFIG_TAMPERED)
STOPPED_FOR_STEER_NOTE = "The codex turn was stopped on purpose so a steer could be delivered; resuming it."
SESSION_LOST_NOTE = (
    "The sandbox did not come back after the interrupt, so the session is lost; the queued run will redo the work."
)
THREAD_LOST_NOTE = (
    "Codex resumed another thread than the run's, so the session is lost; the queued run will redo the work."
)
STOPPED_FOR_STEER = EndVerdict(AgentEnd.INTERRUPTED, "", "the codex turn was interrupted for a steer")
CODEX_TIMED_OUT = EndVerdict(AgentEnd.LIMIT_REACHED, "", "codex did not finish within its timeout and was stopped")


@dataclass(frozen=True)
class CodexTurn:
    """What the next process runs: its stdin text and the thread it resumes ("" = first)."""

    prompt: str
    resume_thread_id: str = ""


@dataclass
class CodexOutcome:
    """How one codex process ended."""

    exit_code: int
    thread_id: str = ""
    result: ResultEvent | None = None
    launch_error: str = ""
    fault: EndVerdict | None = None  # an end the action found itself (a sub-agent left unfinished)
    denials: tuple[ToolDenial, ...] = ()  # tool calls codex refused in the process


@dataclass
class _Verdict:
    exit_code: int = -1
    end: EndVerdict = NO_TURN


@dataclass
class CodexRunState:
    """Per-run state shared by the loop, ``steer`` and ``cancel``."""

    sandbox: Any
    queue: CodexSteerQueue
    cancelled: threading.Event = field(default_factory=threading.Event)
    timed_out: bool = False


class TurnRunner(Protocol):
    """What the loop needs from ``CodexExecRuntime``."""

    @property
    def clock(self) -> Any: ...

    def run_turn(
        self,
        active: CodexRunState,
        params: AgentParams,
        turn: CodexTurn,
        budget_s: float,
        aggregator: CodexSteerAggregator,
        on_output: Callable[[str], None],
    ) -> CodexOutcome: ...

    def render(self, msg: SteerMessage) -> str: ...

    def monotonic(self) -> float: ...

    def call(self, fn: Callable[[Any], None], arg: Any) -> None: ...


def opening_turn(params: AgentParams) -> CodexTurn:
    """The zero turn: the opening prompt, no resume."""
    return CodexTurn(params.prompt or DEFAULT_AGENT_PROMPT)


def next_codex_turn(
    queue: CodexSteerQueue,
    cancelled: threading.Event,
    render: Callable[[SteerMessage], str],
    now: Callable[[], datetime],
) -> CodexTurn | None:
    """The next resume turn, or None when the loop should end (``next_codex_turn``).

    Pending steers are drained before the settled check; a cancelled run takes nothing (the
    steer stays for the queued run); with no thread ever started the steer is put back.
    """
    while True:
        if cancelled.is_set():
            return None
        taken = queue.take_pending()
        if taken is not None:
            msg, failures = taken
            if not queue.thread_id:
                queue.requeue_front(msg, failures)
                return None
            queue.stake_delivery(msg, failures, now())
            return CodexTurn(render(msg), queue.thread_id)
        if queue.is_settled():
            return None
        if not queue.wait_for_work(cancelled):
            return None


class CodexLoop:
    """One ``CodexExecRuntime.run``: owns the aggregator and the verdict."""

    def __init__(
        self,
        runtime: TurnRunner,
        active: CodexRunState,
        params: AgentParams,
        on_turn_end: Callable[[datetime], None],
        on_output: Callable[[str], None],
    ) -> None:
        self.rt, self.active, self.params = runtime, active, params
        self.on_turn_end, self.on_output = on_turn_end, on_output
        self.aggregator = CodexSteerAggregator()
        self.verdict: _Verdict = _Verdict()
        self.failed = False  # a turn failed not of the action's doing: its verdict stays
        self.final_message = ""  # the latest process's answer that had one
        self.denials: tuple[ToolDenial, ...] = ()  # refused tool calls over every process
        self.deadline = runtime.monotonic() + params.timeout_s

    def run(self) -> AgentRunResult:
        """Run turns until done; return the run's result."""
        queue = self.active.queue
        turn: CodexTurn | None = opening_turn(self.params)
        while turn is not None:
            try:
                budget = codex_turn_timeout(
                    self.params.timeout_s, self.deadline, self.rt.monotonic(), self.active.cancelled.is_set()
                )
            except SandboxError:
                self.active.timed_out = self.active.timed_out or not self.active.cancelled.is_set()
                break
            queue.begin_turn()
            out = self.rt.run_turn(self.active, self.params, turn, budget, self.aggregator, self.on_output)
            queue.end_turn()
            if out.result is not None and out.result.final_message:
                self.final_message = out.result.final_message
            if turn.resume_thread_id:
                queue.confirm_delivery(queue.own_thread_reported())
            stopped = queue.take_stopped_for_steer()
            if queue.lost_err() is not None:
                return self._lost()  # checked first: a lost session is never announced as resuming
            if stopped and (out.result is None or out.result.subtype == NO_TERMINAL_LINE):
                self.on_output(STOPPED_FOR_STEER_NOTE)
            self._judge(turn, out, stopped)
            if out.exit_code in GUARD_EXIT_CODES or not self.params.steerable or self._cut_short():
                break
            if not queue.thread_id:
                break  # crashed before thread.started: nothing to resume
            self.aggregator.process_ended()
            self.rt.call(self.on_turn_end, self.rt.clock.now())
            turn = next_codex_turn(queue, self.active.cancelled, self.rt.render, self.rt.clock.now)
        return self._result()

    def _cut_short(self) -> bool:
        return self.active.cancelled.is_set() or self.active.timed_out

    def _judge(self, turn: CodexTurn, out: CodexOutcome, stopped: bool) -> None:
        self.denials += out.denials
        if not self.failed:
            self._judge_turn(turn, out, stopped)
            found = out.fault or self._refused(out.denials)
            if found is not None and (self.verdict.end.succeeded or self.verdict.end is STOPPED_FOR_STEER):
                self.verdict = _Verdict(out.exit_code, found)  # a sub-agent ended with it, or a tool refused
            self.failed = not self.verdict.end.succeeded and self.verdict.end is not STOPPED_FOR_STEER

    def _refused(self, denials: tuple[ToolDenial, ...]) -> EndVerdict | None:
        """``tool-refused`` for the refusals no ``expected_denials`` line covers, else None."""
        unexpected = denial_judge(self.params.expected_denials)(denials) if denials else ()
        return tool_refused(unexpected) if unexpected else None

    def _judge_turn(self, turn: CodexTurn, out: CodexOutcome, stopped: bool) -> None:
        result = out.result
        if out.exit_code in GUARD_EXIT_CODES:
            refused = EndVerdict(AgentEnd.AGENT_ERROR, "", f"codex refused to run (exit {out.exit_code})")
            self.verdict = _Verdict(out.exit_code, refused)
        elif turn.resume_thread_id and not out.thread_id:
            return  # a failed resume costs the steer, not the run
        elif stopped and result is not None and result.subtype == NO_TERMINAL_LINE:
            self.verdict = _Verdict(out.exit_code, STOPPED_FOR_STEER)  # no terminal line: the stop ended it
        elif stopped and result is not None and result.verdict is not None:
            # A terminal line was read before the stop: it ended the turn, not the stop.
            self.verdict = _Verdict(0 if result.verdict.succeeded else out.exit_code, result.verdict)
        else:
            self.verdict = _outcome_verdict(out)

    def _lost(self) -> AgentRunResult:
        lost = self.active.queue.lost_err()
        self.on_output(THREAD_LOST_NOTE if isinstance(lost, ThreadLost) else SESSION_LOST_NOTE)
        return AgentRunResult(
            exit_code=-1,
            turns=self.aggregator.turns,
            steers=[],
            is_error=True,
            error=f"steer session lost: {lost}",
            session_lost=True,
            end=AgentEnd.INTERRUPTED,
            end_rule=RULE_SESSION_LOST,
            input_tokens=self.aggregator.input_tokens,
            output_tokens=self.aggregator.output_tokens,
        )

    def _result(self) -> AgentRunResult:
        v = self.verdict
        end = v.end
        if self.active.cancelled.is_set():
            end = CANCELLED
        elif self.active.timed_out:
            end = CODEX_TIMED_OUT
        return AgentRunResult(
            exit_code=v.exit_code,
            turns=self.aggregator.turns,
            steers=self.active.queue.steer_results(),
            is_error=not end.succeeded,
            error=error_text(end),
            timed_out=self.active.timed_out,
            cancelled=self.active.cancelled.is_set(),
            input_tokens=self.aggregator.input_tokens,
            output_tokens=self.aggregator.output_tokens,
            total_cost_usd=self.aggregator.cost_usd,
            session_id=self.active.queue.thread_id,
            end=end.end,
            end_rule=end.rule_id,
            final_message=self.final_message,
            denials=distinct_denials(self.denials),
        )


def _outcome_verdict(out: CodexOutcome) -> _Verdict:
    """One finished process's verdict: a launch failure is an agent error; otherwise ``process_verdict``."""
    if out.launch_error:
        return _Verdict(
            out.exit_code,
            EndVerdict(AgentEnd.AGENT_ERROR, "", "codex could not be started", sanitize_output(out.launch_error)),
        )
    verdict = process_verdict(cancelled=False, timed_out=False, exit_code=out.exit_code, last=out.result)
    return _Verdict(out.exit_code, verdict)
