"""One live run's state and how each parsed event moves it (docs/architecture.md "Live feed").

``ActiveRun`` is what ``LiveRuntime`` keeps per sandbox while an agent runs: the feed, the
stream parser, the turn judged so far, the final answer and the refused tool calls.  ``pump``
reads the agent's stdout to its end, ``handle`` applies one parsed event, and ``result`` turns
what was seen into the run's ``AgentRunResult``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fullsend.adapters.runtimes.dialect import Aggregator, DenialJudge
from fullsend.adapters.runtimes.events import (
    QUEUED,
    AgentEvent,
    FaultEvent,
    HoldEvent,
    InitEvent,
    NoticeEvent,
    RefusalEvent,
    ResultEvent,
    SendEvent,
    TextEvent,
    TokensEvent,
    TurnOpenEvent,
    UserReplayEvent,
    iter_json_lines,
)
from fullsend.adapters.runtimes.feed import Now, SteerFeed, _warn_stderr
from fullsend.adapters.runtimes.verdict import (
    error_text,
    judged_turn,
    launch_failed,
    owed_end,
    process_verdict,
    tool_refused,
    unreadable_output,
)
from fullsend.core.agent_end import EndVerdict, TerminalState
from fullsend.core.final_word import ToolDenial, distinct_denials
from fullsend.errors import FullsendError
from fullsend.ports import AgentRunResult

CANCEL_GRACE_S = 2.0  # SIGTERM → SIGKILL on cancel (the whole cancel must fit in 7 s)

TurnEnd = Callable[[datetime], None]
Output = Callable[[str], None]


@dataclass
class ActiveRun:
    """The state of one running agent; ``clock`` stamps turn ends, ``warn`` hears what failed;
    ``unexpected`` picks the refused calls ``expected_denials`` does not cover (default: all)."""

    sandbox: Any
    feed: SteerFeed
    clock: Now
    parser: Any = None  # the run's StreamParser (its session, for dialects whose lines depend on it)
    warn: Callable[[str], None] = _warn_stderr
    done: threading.Event = field(default_factory=threading.Event)
    timed_out: bool = False
    cancelled: bool = False
    deciding_result: ResultEvent | None = None  # judged_turn over every turn end so far
    session_id: str = ""
    model: str = ""
    send_failed: str = ""  # a required protocol line could not be written: the run cannot go on
    final_message: str = ""  # the latest turn end's answer that had one
    denials: list[ToolDenial] = field(default_factory=list)  # refused tool calls over every turn
    unexpected: DenialJudge = tuple

    def pump(
        self, stdout: Any, aggregator: Aggregator, incomplete: TerminalState, on_turn_end: TurnEnd, on_output: Output
    ) -> None:
        """Read ``stdout`` (JSON lines) to its end; a turn left open gets the dialect's ``incomplete``
        end, and an unreadable line an end that is never a success."""
        unreadable = list[str]()
        for obj in iter_json_lines(stdout, on_unreadable=unreadable.append):
            for event in self.parser.parse(obj):
                self.handle(event, aggregator, on_turn_end, on_output)
        for event in self.parser.finish():
            self.handle(event, aggregator, on_turn_end, on_output)
        if self.feed.turn_open():
            owed = ResultEvent(
                is_error=True,
                error_message=incomplete.says,
                subtype=incomplete.reason,
                verdict=EndVerdict(incomplete.end, incomplete.reason, incomplete.says),
            )
            self.handle(owed, aggregator, on_turn_end, on_output)
        if unreadable:  # a turn end may have been in it: the iteration cannot be judged a success
            self.handle(unreadable_output(unreadable[0]), aggregator, on_turn_end, on_output)

    def handle(self, event: AgentEvent, aggregator: Aggregator, on_turn_end: TurnEnd, on_output: Output) -> None:
        """Apply one parsed event to the feed, the aggregator and this run's state."""
        feed = self.feed
        if isinstance(event, UserReplayEvent):
            if event.rejected:
                feed.close_if(feed.note_nack(event.id))
            elif event.disposition == QUEUED:
                feed.note_queued(event.id)
            else:
                feed.close_if(feed.note_echo(event.at, event.id, event.content, event.parts))
        elif isinstance(event, ResultEvent):
            aggregator.add_result(event)
            self.deciding_result = judged_turn(self.deciding_result, event)
            self.final_message = event.final_message or self.final_message
            self._refused(event.denials)
            self._callback(on_turn_end, self.clock.now())
            feed.close_if(feed.note_turn_end())
        elif isinstance(event, RefusalEvent):
            self._refused(event.denials)
        elif isinstance(event, FaultEvent):
            self.deciding_result = judged_turn(self.deciding_result, owed_end(event.verdict))
        elif isinstance(event, NoticeEvent):
            self.warn(event.text)
        elif isinstance(event, TokensEvent):
            aggregator.add_tokens(event)
        elif isinstance(event, InitEvent):
            self.session_id = self.session_id or event.session_id
            self.model = self.model or event.model
        elif isinstance(event, TextEvent):
            self._callback(on_output, event.text)
        elif isinstance(event, SendEvent):
            self._send(event)
        elif isinstance(event, TurnOpenEvent):
            feed.note_turn_open()
        elif isinstance(event, HoldEvent):
            feed.close_if(feed.note_hold(event.held))

    def _refused(self, denials: tuple[ToolDenial, ...]) -> None:
        """Keep refused calls for the summary; one ``expected_denials`` does not cover fails the
        iteration (docs/rules.md#tool-refused)."""
        self.denials.extend(denials)
        unexpected = self.unexpected(denials) if denials else ()
        if unexpected:
            self.deciding_result = judged_turn(self.deciding_result, owed_end(tool_refused(unexpected)))

    def stop_quietly(self) -> None:
        """Stop the whole sandbox; a failure is warned, never raised."""
        try:
            self.sandbox.stop(timeout_s=CANCEL_GRACE_S + 1.5)
        except FullsendError as exc:
            self.warn(f"Stopping the sandbox failed: {exc}")

    def result(self, process: Any, exit_code: int, agg: Aggregator) -> AgentRunResult:
        """The run's ``AgentRunResult`` from what was seen and how the process ended."""
        if self.send_failed:
            return launch_failed(self.send_failed)
        verdict = process_verdict(
            cancelled=self.cancelled,
            timed_out=self.timed_out,
            exit_code=exit_code,
            last=self.deciding_result,
            stderr_tail=process.stderr_tail() if exit_code else "",
        )
        return AgentRunResult(
            exit_code=exit_code,
            turns=agg.turns,
            steers=self.feed.steer_results(),
            is_error=not verdict.succeeded,
            error=error_text(verdict),
            timed_out=self.timed_out,
            cancelled=self.cancelled,
            input_tokens=agg.input_tokens,
            output_tokens=agg.output_tokens,
            total_cost_usd=agg.cost_usd,
            session_id=self.session_id,
            model=self.model,
            end=verdict.end,
            final_message=self.final_message,
            denials=distinct_denials(self.denials),
            end_rule=verdict.rule_id,
        )

    def _send(self, event: SendEvent) -> None:
        failure = self.feed.send(event.line)
        if not failure:
            return
        if event.required:  # the agent would wait forever for it: stop the run now
            self.send_failed = failure
            self.stop_quietly()
        else:
            self.warn(f"A protocol line could not be written to the agent: {failure}")

    def _callback(self, fn: Callable[[Any], None], arg: Any) -> None:
        try:
            fn(arg)
        except Exception as exc:  # a caller's bug must not kill the stream reader
            self.warn(f"A run callback failed: {type(exc).__name__}: {exc}")
