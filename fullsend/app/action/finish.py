"""The end of a run: its outcome, outputs and the step summary (docs/architecture.md "Outputs and step summary").

The receipt is decided, posted and recorded on the outcome by ``fullsend.app.action.receipt``
(docs/architecture.md "Receipt writer"); outputs and summary carry ``receipt_url``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2

from fullsend.adapters.gha import write_outputs, write_summary
from fullsend.app.action.outputs import USAGE_OUTPUTS, ActionOutcome, output_entries
from fullsend.app.timeline import Timeline
from fullsend.core.agent_end import AgentEnd
from fullsend.core.final_word import RULE_TOOL_DENIED, ToolDenial, denial_lines
from fullsend.core.receipt.left_over import left_over
from fullsend.core.receipt.marker import Marker
from fullsend.core.text.inert import inert
from fullsend.errors import ExitCode

if TYPE_CHECKING:  # annotations only: the fast skip never loads the ports
    from fullsend.app.action.plan import RunPlan
    from fullsend.core.receipt.skips import Skip
    from fullsend.ports import AgentRunResult, Log

_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(str(Path(__file__).resolve().parents[2] / "templates")),
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    keep_trailing_newline=True,
)


@dataclass
class AgentUsage:
    """What the agent iterations cost, summed over iterations: ``cost_usd`` (US dollars, as the
    runtime reported it), tokens, ``turns``; ``session_id`` and ``model`` of the last iteration
    that reported them.  ``ran`` is False when no agent ran (a skip)."""

    ran: bool = False
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    turns: int = 0
    session_id: str = ""
    model: str = ""

    def add(self, result: AgentRunResult, model_input: str = "") -> None:
        """Count one iteration's ``AgentRunResult``; ``model_input`` stands in for an unreported model."""
        self.ran = True
        self.cost_usd += result.total_cost_usd
        self.input_tokens += result.input_tokens
        self.output_tokens += result.output_tokens
        self.turns += result.turns
        self.session_id = result.session_id or self.session_id
        self.model = result.model or model_input or self.model


@dataclass(frozen=True)
class LeftFacts:
    """What the shipped iteration left behind: the watcher's own ``(run id, rule id)`` list,
    the run ids its steers delivered, and those of them the agent acknowledged."""

    watcher: tuple[tuple[int, str], ...] = ()
    delivered: tuple[int, ...] = ()
    acknowledged: tuple[int, ...] = ()


@dataclass
class RunOutcome:
    """The run's result as outputs and summary report it."""

    outcome: ActionOutcome
    exit_code: ExitCode
    skip_reason: str = ""
    steers: int = 0
    marker: Marker = field(default_factory=Marker)
    receipt_url: str = ""
    receipt_posted: bool = False
    receipt_unknown: bool = False  # the receipt's post got no answer: it may exist (docs/rules.md#receipt-unknown)
    head_sha: str = ""
    settle_reason: str = ""
    error: str = ""
    left: LeftFacts = field(default_factory=LeftFacts)
    usage: AgentUsage = field(default_factory=AgentUsage)
    duration_s: float = 0.0  # wall time from the action's start to its outputs
    skip_receipt_url: str = ""  # the receipt a ``receipt`` skip rests on (summary only)
    skip_stands_on: str = ""  # whose work that receipt stands on and what it spent (summary only)
    agent_end: AgentEnd | None = None  # the shipped iteration's end; None when no agent ran
    error_rule: str = ""  # the rule id closing the ``::error::`` line (docs/rules.md#agent-error and its family)
    final_message: str = ""  # the shipped iteration's answer, masked, inert and bounded (``final_message_value``)
    denials: tuple[ToolDenial, ...] = ()  # refused tool calls of every iteration, masked (docs/rules.md#tool-denied)
    agent_isolation: str = ""  # own-uid | shared-uid once a child ran (docs/rules.md#token-in-reach)

    @property
    def consumed_run_ids(self) -> str:
        """Exactly what the receipt claims; empty when no receipt was posted."""
        return ",".join(str(i) for i in self.marker.consumed) if self.receipt_posted else ""

    def left_over(self) -> list[str]:
        """The step summary's **Left to the queued run**: one ``follow-up run <id> [<rule id>]`` line
        per accepted run the posted receipt does not name (docs/architecture.md "The receipt's promise")."""
        receipted = self.marker.consumed if self.receipt_posted else ()
        maybe = self.marker.consumed if self.receipt_unknown else ()
        pairs = left_over(self.left.watcher, self.left.delivered, self.left.acknowledged, receipted, maybe)
        return [f"follow-up run {run_id} [{why}]" for run_id, why in pairs]


def outputs_of(result: RunOutcome) -> dict[str, str]:
    """The ``GITHUB_OUTPUT`` entries, in the order of ``action.yml`` (``outputs.OUTPUT_NAMES``)."""
    return output_entries(
        {
            "outcome": result.outcome.value,
            "skip_reason": result.skip_reason,
            "steers": str(result.steers),
            "consumed_run_ids": result.consumed_run_ids,
            "receipt_url": result.receipt_url,
            "head_sha": result.head_sha,
            **usage_outputs(result.usage),
            "duration_s": f"{result.duration_s:.1f}",
            "final_message": result.final_message,
            "agent_isolation": result.agent_isolation,
        }
    )


def usage_outputs(usage: AgentUsage) -> dict[str, str]:
    """``cost_usd`` (6 decimals), ``input_tokens``, ``output_tokens``, ``turns``, ``session_id``,
    ``model``; all empty when no agent ran."""
    if not usage.ran:
        return dict.fromkeys(USAGE_OUTPUTS, "")
    return {
        "cost_usd": f"{usage.cost_usd:.6f}",
        "input_tokens": str(usage.input_tokens),
        "output_tokens": str(usage.output_tokens),
        "turns": str(usage.turns),
        "session_id": usage.session_id,
        "model": usage.model,
    }


def render_summary(result: RunOutcome, stage: str, item_link: str, timeline: Timeline) -> str:
    """The step summary markdown (jinja2 template ``summary/summary.md.j2``)."""
    rows = [
        {"at": e.at.strftime("%H:%M:%S"), "text": _cell(e.text), "rule_id": e.rule_id}
        for e in timeline.events
        if e.kind in ("judge", "steer", "ack", "withdrawn", "settle", "skip", "receipt", "agent", "notice")
    ]
    labels = {
        ActionOutcome.SUCCEEDED: "✅ succeeded",
        ActionOutcome.FAILED: "❌ failed",
        ActionOutcome.SKIPPED: "⏭️ skipped",
    }
    return _ENV.get_template("summary/summary.md.j2").render(
        stage=stage,
        outcome=result.outcome,
        outcome_label=labels.get(result.outcome, result.outcome),
        skip_reason=result.skip_reason,
        item_link=item_link,
        steers=result.steers,
        consumed=", ".join(str(i) for i in result.marker.consumed) if result.receipt_posted else "",
        head_sha=result.head_sha,
        receipt_url=result.receipt_url,
        receipt_posted=result.receipt_posted,
        receipt_unknown=result.receipt_unknown,
        settle_reason=result.settle_reason,
        error=_cell(result.error),
        error_rule=result.error_rule,
        timeline=rows,
        left=[_cell(x) for x in result.left_over()],
        usage=result.usage,
        usage_cells={k: _cell(v) for k, v in usage_outputs(result.usage).items()},
        duration_s=f"{result.duration_s:.0f}",
        skip_receipt_url=result.skip_receipt_url,
        skip_stands_on=_cell(result.skip_stands_on),
        final_lines=quoted_lines(result.final_message),
        denied=denial_lines(result.denials),
        tool_denied=RULE_TOOL_DENIED,
    )


def quoted_lines(text: str) -> list[str]:
    """``text`` (already inert, ``final_message_value``) as the lines of a markdown block quote:
    every line starts with ``>``, so nothing in it can open a block that outlives the quote."""
    return [f"> {line}".rstrip() for line in text.split("\n")] if text else []


def _cell(text: str) -> str:
    return inert(text)


def publish(
    result: RunOutcome, output_path: str, summary_path: str, summary: str, warn: Callable[[str, str], None]
) -> None:
    """Write outputs and the summary; a write failure is warned, never fatal."""
    try:
        write_outputs(output_path, outputs_of(result))
    except OSError as exc:
        warn("warning", f"Could not write the step outputs: {exc.strerror}")
    try:
        write_summary(summary_path, summary)
    except OSError as exc:
        warn("warning", f"Could not write the step summary: {exc.strerror}")


def item_url(plan: RunPlan) -> str:
    """The work item's web URL: ``<server>/<owner>/<repo>/issues/<n>`` (GitHub redirects a PR's)."""
    return f"{plan.ctx.server_url}/{plan.repo.full_name}/issues/{plan.item}"


def skip_outcome(skip: Skip) -> RunOutcome:
    """A pre-flight skip's outcome: exit 0, its short ``skip_reason``, the receipt it rests on and
    whose work it stands on (the lifecycle's and the fast skip's alike)."""
    return RunOutcome(
        ActionOutcome.SKIPPED,
        ExitCode.OK,
        skip_reason=skip.skip_reason,
        skip_receipt_url=skip.receipt_url,
        skip_stands_on=skip.stands_on,
    )


def conclude(plan: RunPlan, outcome: RunOutcome, timeline: Timeline, log: Log) -> int:
    """Write the outputs and the step summary, log the failure and the outcome; returns the exit code."""
    item = f"[{plan.run_name}]({item_url(plan)})"
    summary = render_summary(outcome, plan.inputs.stage, item, timeline)
    publish(outcome, plan.ctx.output_path, plan.ctx.summary_path, summary, log)
    if outcome.outcome is ActionOutcome.FAILED and outcome.error:
        log("error", f"The run failed: {outcome.error}" + (f" [{outcome.error_rule}]" if outcome.error_rule else ""))
    off = "; steering was off: not running in GitHub Actions" if not plan.ctx.actions else ""
    log("info", f"Outcome: {outcome.outcome}" + (f" ({outcome.skip_reason})" if outcome.skip_reason else "") + off)
    return outcome.exit_code
