"""What one run that worked spent, as its terminal status comment records it (docs/architecture.md "Report").

The terminal status comment ends with a human line and a figures marker, the contract between the
action and ``fullsend report``::

    Agent: claude · claude-sonnet-4-5 · 12.2 min · $0.1234 · 1,200 tokens in, 340 out
    <!-- fullsend:run-figures stage=review runtime=claude agent_s=734.2 cost_usd=0.123400 \
input_tokens=1200 output_tokens=340 -->

(one line; shown wrapped here).
The marker's grammar is exact (single spaces, the keys in this order, lower-case stage and
runtime); anything else parses to ``None``.  The figures are informational: no decision of the
action reads them, and ``fullsend report`` only adds them up.  Pure: standard library and ``fullsend.core``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from fullsend.core.identity import Identity, from_rest, same_identity
from fullsend.core.model import Comment
from fullsend.core.receipt.marker import Marker, parse_marker
from fullsend.core.receipt.status_comment import is_terminal, status_run_id

#: ``stage`` and ``runtime`` values the marker can carry; a stage outside this shape gets no marker.
_NAME = r"[a-z0-9][a-z0-9_-]{0,63}"
FIGURES_RE = re.compile(
    rf"<!-- fullsend:run-figures stage=({_NAME}) runtime=({_NAME}) agent_s=(\d{{1,9}}\.\d) "
    r"cost_usd=(\d{1,9}\.\d{6}) input_tokens=(\d{1,15}) output_tokens=(\d{1,15}) -->"
)
_NAME_RE = re.compile(_NAME)


@dataclass(frozen=True)
class RunFigures:
    """One run's spend: ``agent_s`` seconds from the start comment to the terminal status,
    ``cost_usd`` as the runtime reported it (US dollars), tokens summed over iterations."""

    stage: str
    runtime: str
    agent_s: float = 0.0
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    model: str = ""

    @property
    def agent_minutes(self) -> float:
        return self.agent_s / 60.0


def figures_marker(figures: RunFigures) -> str:
    """The figures marker line, or ``""`` when ``stage`` or ``runtime`` is outside its grammar
    or a figure is negative, not finite or too large to write."""
    values = (figures.agent_s, figures.cost_usd, figures.input_tokens, figures.output_tokens)
    if not (_NAME_RE.fullmatch(figures.stage) and _NAME_RE.fullmatch(figures.runtime)):
        return ""
    if not all(0 <= v < 10**9 for v in values):  # also refuses NaN: every comparison is False
        return ""
    line = (
        f"<!-- fullsend:run-figures stage={figures.stage} runtime={figures.runtime} "
        f"agent_s={figures.agent_s:.1f} cost_usd={figures.cost_usd:.6f} "
        f"input_tokens={figures.input_tokens} output_tokens={figures.output_tokens} -->"
    )
    return line if FIGURES_RE.fullmatch(line) else ""


#: A model name as the line shows it; anything else (a line break, markup) is left out.
_MODEL_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,99}")


def figures_line(figures: RunFigures) -> str:
    """The human line: ``Agent: <runtime> · <model> · 12.2 min · $0.1234 · 1,200 tokens in, 340 out``
    (the model left out when unknown or not a plain model name: the CLI reports it, the agent's
    provider may shape it, and it must not add a line to the comment)."""
    parts = [f"Agent: {figures.runtime}"]
    if _MODEL_RE.fullmatch(figures.model):
        parts.append(figures.model)
    parts += [
        f"{figures.agent_minutes:.1f} min",
        f"${figures.cost_usd:.4f}",
        f"{figures.input_tokens:,} tokens in, {figures.output_tokens:,} out",
    ]
    return " · ".join(parts)


def parse_figures(body: str) -> RunFigures | None:
    """The figures of the first line of ``body`` that is exactly a figures marker, or ``None``."""
    for line in body.splitlines():
        m = FIGURES_RE.fullmatch(line)
        if m is not None:
            return RunFigures(
                stage=m.group(1),
                runtime=m.group(2),
                agent_s=float(m.group(3)),
                cost_usd=float(m.group(4)),
                input_tokens=int(m.group(5)),
                output_tokens=int(m.group(6)),
            )
    return None


def stands_on(run_id: str, figures: RunFigures | None) -> str:
    """What a skip stands on, for its step summary, as the absorbing run's status comment says it:
    ``run 123's work, by its status comment: 12.2 agent minutes, $0.1234, 1,200 tokens in and 340
    out``, or ``run 123's work (its status comment recorded no figures)``."""
    if figures is None:
        return f"run {run_id}'s work (its status comment recorded no figures)"
    return (
        f"run {run_id}'s work, by its status comment: {figures.agent_minutes:.1f} agent minutes, "
        f"${figures.cost_usd:.4f}, {figures.input_tokens:,} tokens in and {figures.output_tokens:,} out"
    )


def absorbing_run(
    comments: Sequence[Comment],
    receipt: Marker,
    author: str = "",
    before: datetime | None = None,
    receipt_url: str = "",
) -> tuple[str, RunFigures | None] | None:
    """``(run id, figures)`` of the run whose terminal status comment, written by an App (by
    ``author`` when given: the role login), copies ``receipt``'s marker; of several, the one that
    links ``receipt_url`` (edited in once the receipt exists: nothing written before it can),
    else the one last written before ``before`` (the receipt's creation), since the real terminal
    status is written after the agent exits and before its receipt.  ``None`` when none does."""
    wanted = (frozenset(receipt.consumed), receipt.head.lower())
    best: tuple[datetime, str, RunFigures | None] | None = None
    for comment in comments:
        run_id = status_run_id(comment.body)
        if run_id is None or not comment.author_is_app or not is_terminal(comment.body):
            continue
        if author and not same_identity(from_rest(comment.author, comment.author_type), Identity(author)):
            continue
        linked = bool(receipt_url) and f"]({receipt_url})" in comment.body
        written = comment.updated_at or comment.created_at or datetime.min.replace(tzinfo=UTC)
        if before is not None and written > before and not linked:
            continue
        if linked:
            written = datetime.max.replace(tzinfo=UTC)
        copy = parse_marker(comment.body)
        if copy is None or (frozenset(copy.consumed), copy.head.lower()) != wanted:
            continue
        if best is None or written >= best[0]:
            best = (written, run_id, parse_figures(comment.body))
    return (best[1], best[2]) if best is not None else None
