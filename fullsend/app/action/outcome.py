"""The run's outcome from its iterations (docs/architecture.md "Outputs and step summary").

Outright success only when the shipped iteration's agent ended ``AgentEnd.SUCCESS`` and every
script passed; what every iteration left goes to the step summary's **Left to the queued run**.
"""

from __future__ import annotations

from collections.abc import Sequence

from fullsend.app.action.finish import LeftFacts, RunOutcome
from fullsend.app.action.outputs import ActionOutcome
from fullsend.app.action.session import IterationResult
from fullsend.core.agent_end import RULE_SESSION_LOST, AgentEnd
from fullsend.errors import ExitCode


def run_outcome(
    result: IterationResult | None,
    validated: bool,
    *,
    cancelled: bool,
    steers: int,
    env_head_sha: str,
    earlier: Sequence[IterationResult],
) -> RunOutcome:
    """The outcome of the shipped iteration ``result`` (``None``: none ran), ``validated`` when
    the validation script passed (or there is none).  ``steers``: acknowledged steers across every
    iteration; ``earlier``: iterations a failed validation replaced; ``env_head_sha`` the head
    when the iteration reported none.  A cancelled run fails, exit 1."""
    head = (result.marker.head if result and result.marker.head else env_head_sha) if result else ""
    left = left_facts([*(r for r in earlier if r is not result), *([result] if result else [])])
    end = result.agent.end if result else None
    if cancelled:
        return RunOutcome(
            ActionOutcome.FAILED,
            ExitCode.FAILED,
            steers=steers,
            head_sha=head,
            error="the run was cancelled",
            left=left,
            agent_end=end,
        )
    if result is None or not validated:
        error = (result.agent.error if result else "") or "the agent run failed"
        rule = end_rule_of(result)
        if result and result.session_lost:
            error = "the agent session was lost during a steer interrupt; the queued run will redo the update"
            rule = RULE_SESSION_LOST
        return RunOutcome(
            ActionOutcome.FAILED,
            ExitCode.FAILED,
            steers=steers,
            head_sha=head,
            error=error,
            left=left,
            settle_reason=result.settle_reason if result else "",
            agent_end=end,
            error_rule=rule,
        )
    return RunOutcome(
        ActionOutcome.SUCCEEDED,
        ExitCode.OK,
        steers=steers,
        marker=result.marker,
        head_sha=head,
        settle_reason=result.settle_reason,
        left=left,
        agent_end=end,
    )


def end_rule_of(result: IterationResult | None) -> str:
    """The rule id closing the run's ``::error::`` line for the agent's end: the rule of an end the
    action found itself (``AgentRunResult.end_rule``), else its class; ``""`` when none failed."""
    if result is None or result.agent.end is AgentEnd.SUCCESS:
        return ""
    return result.agent.end_rule or result.agent.end.value


def left_facts(results: Sequence[IterationResult]) -> LeftFacts:
    """What every iteration left: only the shipped (last) one's acknowledged runs can be receipted."""
    return LeftFacts(
        tuple(pair for r in results for pair in r.left),
        tuple(run_id for r in results for batch in r.delivered for run_id in batch.run_ids),
        tuple(run_id for r in results for run_id in r.marker.consumed),
    )


def agent_ok(result: IterationResult) -> bool:
    """Outright success only: exit 0, no error, not cut short, session kept, end ``SUCCESS``."""
    agent = result.agent
    return (
        agent.exit_code == 0
        and not agent.is_error
        and not agent.timed_out
        and not result.session_lost
        and agent.end is AgentEnd.SUCCESS
    )
