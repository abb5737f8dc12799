"""Shared parts of the real-CLI conformance suites (issue 16): each drives a pinned CLI against a
local scripted model server into one terminal state, and asserts the class, the acks, the
outputs and "no receipt" wherever the end is not outright success."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fullsend.core.agent_end import AgentEnd
from fullsend.core.receipt.marker import should_post_receipt
from fullsend.core.watch.steer import SteerMessage
from fullsend.ports import AgentRunResult
from tests.adapters.runtimes.real.real_cli import RunInThread, wait_until
from tests.doubles.model_server import ModelError, Reply, ToolCall, assistant_turns_done

FIRST = SteerMessage(4301, "Also cover the error path (conf-marker-first).", event="issue_comment", actor="octocat")
SECOND = SteerMessage(4302, "And update the changelog (conf-marker-second).", event="issue_comment", actor="octocat")
LATE = SteerMessage(
    4303, "One more thing after you finished (conf-marker-late).", event="issue_comment", actor="octocat"
)
BAD_REQUEST = ModelError(400, "invalid_request_error", "scripted: this request is invalid", code="invalid_request")


def receipt_allowed(result: AgentRunResult) -> bool:
    """Whether the action would post a receipt after this iteration, everything else clean."""
    return should_post_receipt(
        run_failed=result.is_error,
        cancelled=False,
        skipped=False,
        post_script_withheld=False,
        transcript_error=False,
        agent_end=result.end,
    )


def assert_failed(result: AgentRunResult, end: AgentEnd, says: str) -> None:
    """The iteration ended in ``end``, its error says ``says``, and no receipt may follow."""
    assert (result.end, result.is_error) == (end, True), (result.end, result.error)
    assert says in result.error, result.error
    assert not receipt_allowed(result)


def assert_succeeded(result: AgentRunResult, steers: list[int]) -> None:
    """Outright success with exactly ``steers`` acknowledged, once each, live or resumed."""
    assert (result.end, result.is_error, result.exit_code) == (AgentEnd.SUCCESS, False, 0), result.error
    assert [s.follow_up_run_id for s in result.steers] == steers
    assert receipt_allowed(result)


Script = Callable[[dict[str, Any]], Reply]


def _agent_calls(answer: Script) -> Script:
    """``answer`` for the agent's own model calls; a side call without tools (a title) gets text."""
    return lambda body: answer(body) if body.get("tools") else Reply(text="Scripted title")


def done(text: str = "All done.") -> Script:
    """A model that answers every call with final text (no tool call)."""
    return _agent_calls(lambda body: Reply(text=text))


def busy_then_done(work_command: str) -> Script:
    """First call of the conversation: one bash tool call running ``work_command``; then text."""
    return _agent_calls(
        lambda body: (
            Reply(text="Working.", tool=ToolCall("bash", work_command))
            if assistant_turns_done(body) == 0
            else Reply(text="All done.")
        )
    )


def slow_answer_first(delay_s: float) -> Script:
    """The first answer is held back ``delay_s`` (the turn waits on its model); later ones are not."""
    return _agent_calls(
        lambda body: Reply(text="All done.", delay_s=delay_s if assistant_turns_done(body) == 0 else 0.0)
    )


def keeps_calling_a_tool() -> Script:
    """A model that never stops calling a tool (a turn limit is the only way out)."""
    return _agent_calls(lambda body: Reply(text="Again.", tool=ToolCall("bash", "true")))


def stops_at(stop: str) -> Script:
    """A model whose answers end with the stop reason ``stop`` (e.g. ``max_tokens``)."""
    return _agent_calls(lambda body: Reply(text="Cut off", stop=stop))


def fails(error: ModelError = BAD_REQUEST) -> Script:
    """A model whose every call fails with ``error``."""
    return lambda body: Reply(error=error)


@dataclass
class Steering:
    """Drive one steered run: steer at the right moments, then settle; returns the result."""

    runtime: Any
    run: RunInThread

    def steer(self, *msgs: SteerMessage) -> None:
        for msg in msgs:
            self.runtime.steer(self.run.params.sandbox_name, msg)

    def after_first_turn(self, what: str = "the first turn ended") -> None:
        wait_until(lambda: len(self.run.turn_ends) >= 1, what, self.run)

    def finish(self) -> AgentRunResult:
        self.runtime.settle(self.run.params.sandbox_name)
        return self.run.join()


def agent_pid(shell_parent: int, program: bytes) -> int:
    """The agent CLI's process: the nearest ancestor (from ``shell_parent``, the parent of one of its
    tool shells) whose command line has a word ending in ``program``."""
    pid = shell_parent
    while pid > 1:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if any(word.endswith(program) for word in argv[:2]):
            return pid
        pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    raise AssertionError(f"no {program!r} process above the tool's shell")
