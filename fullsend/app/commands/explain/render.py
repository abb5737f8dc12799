"""Print an :class:`~fullsend.app.commands.explain.model.Explanation` as text or as one JSON document.

Every line that reports a decision carries its rule id in brackets (``[route-not-success]``,
``[receipt-lists-my-run]``, ``[app-marker]`` …), so a reader can look it up in ``docs/rules.md``.
Forge text (titles, details, instructions) is shown on one line, control characters replaced and
long values cut, so a hostile title cannot forge report lines.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable
from dataclasses import asdict

from fullsend.app.commands.explain.model import (
    NOT_KNOWN,
    PASS,
    CallReport,
    CheckReport,
    CommentReport,
    Explanation,
    ReceiptReport,
    RunEndReport,
    RunReport,
    SkipReport,
)
from fullsend.rules import DOCS_PATH

MAX_SHOWN_CHARS = 200


def render_json(explanation: Explanation) -> str:
    """One JSON document (``dataclasses.asdict``), keys as in ``explain_model``, newline-terminated."""
    return json.dumps(asdict(explanation), indent=2, ensure_ascii=False) + "\n"


def shown(text: str) -> str:
    """``text`` on one line: control and format characters → space, at most 200 characters + ``…``."""
    flat = "".join(" " if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") else ch for ch in text or "")
    return flat if len(flat) <= MAX_SHOWN_CHARS else flat[:MAX_SHOWN_CHARS] + "…"


def render_text(e: Explanation) -> str:
    """The report for a person: the item, the run in flight, its follow-ups, comments, receipts,
    the reads made and what explain cannot see."""
    lines = _header(e)
    lines += _in_flight(e)
    if e.follow_ups:
        lines += ["", "Follow-up runs, as the run in flight's watcher judges them (oldest first):"]
        for run in e.follow_ups:
            lines += _run_lines(run)
    elif e.in_flight is not None:
        lines += ["", "Follow-up runs: none created after the run in flight."]
    if e.item_runs:
        lines += ["", "Shim runs of the item (newest first):"]
        for run in e.item_runs:
            lines += _run_lines(run)
    lines += _comment_lines(e.comments)
    lines += _receipt_lines(e.receipts)
    lines += _run_end_lines(e.run_ends)
    lines += ["", "Logins treated as the runner's own: " + (", ".join(e.self_logins) or "none")]
    lines += _call_lines(e.calls)
    lines += ["", "What explain cannot see:"] + [f"  - {limit}" for limit in e.limits]
    return "\n".join(lines) + "\n"


def _header(e: Explanation) -> list[str]:
    item = e.item
    what = {"pull-request": "pull request", "issue": "issue"}.get(item.kind, "item (its kind could not be read)")
    head = f" · head {item.head_sha}" if item.head_sha else ""
    title = f" {json.dumps(shown(item.title), ensure_ascii=False)}" if item.title else ""
    lines = [f"fullsend explain · {item.repository}#{item.number} · {what}{title}{head}"]
    if e.as_of:
        lines.append(f"As of {e.as_of}: runs, comments and reviews created later are ignored.")
    lines.append(f"Reading as {shown(e.reader)}." if e.reader else "Reading as an unknown login.")
    lines.append(f"Rule ids (in brackets) are explained in {DOCS_PATH}.")
    return lines


def _in_flight(e: Explanation) -> list[str]:
    if e.in_flight is None:
        return ["", e.in_flight_note or "No run of the item is in flight."]
    run = e.in_flight
    lines = [
        "",
        f"Run in flight: {_run_title(run)}",
        f"  Start: Route job {json.dumps(e.route_job)}, stage job {json.dumps(e.stage_job)}; baseline "
        f"{e.baseline or 'unknown'}; run name {e.run_name or '(title binding off)'}",
    ]
    lines += [f"  note: {shown(n)}" for n in e.start_notes]
    return lines + _skip_lines(run)


def _run_title(run: RunReport) -> str:
    who = f" by {shown(run.actor)}" if run.actor else ""
    return (
        f"run {run.run_id} · {shown(run.event) or 'unknown event'}{who} · created {run.created_at or 'unknown'} · "
        f"{shown(run.status) or 'unknown status'} · "
        f"title {json.dumps(shown(run.display_title), ensure_ascii=False)}"
    )


def _run_lines(run: RunReport) -> list[str]:
    lines = [f"  {_run_title(run)}"]
    if run.outcome:
        rule = f" [{run.rule_id}]" if run.rule_id else ""
        detail = f": {shown(run.detail)}" if run.outcome != "accept" else ""
        lines.append(f"    verdict: {run.outcome}{rule}{detail}")
        lines.append("    checks: " + " · ".join(_check(c) for c in run.checks))
    if run.amendments:
        lines.append("    amendments: comment(s) " + ", ".join(str(i) for i in run.amendments))
    lines += [f"    note: {shown(n)}" for n in run.notes]
    return lines + [f"  {line}" for line in _skip_lines(run)]


def _check(c: CheckReport) -> str:
    if c.outcome in (PASS, NOT_KNOWN) or not c.rule_id:
        return f"{c.check} {c.outcome}"
    return f"{c.check} {c.outcome} [{c.rule_id}]"


def _skip_lines(run: RunReport) -> list[str]:
    return [_skip(s) for s in (run.receipt, run.head_reviewed) if s is not None]


def _skip(s: SkipReport) -> str:
    verdict = "would skip" if s.applies else "does not apply"
    return f"  [{s.rule_id}] {verdict}: {shown(s.reason)}"


def _comment_lines(comments: Iterable[CommentReport]) -> list[str]:
    rows = list(comments)
    if not rows:
        return ["", "Comments: none."]
    lines = ["", "Comments (oldest first):"]
    for c in rows:
        edited = f", edited {c.updated_at}" if c.edited else ""
        rule = f" [{c.rule_id}]" if c.rule_id else ""
        head = (
            f"  comment {c.comment_id} by {shown(c.author) or 'unknown'} "
            f"({shown(c.author_type) or 'unknown type'}), "
            f"created {c.created_at or 'unknown'}{edited}: {c.kind}{rule}"
        )
        lines.append(head)
        if c.instruction:
            lines.append(f"    instruction: {json.dumps(shown(c.instruction), ensure_ascii=False)}")
        lines.append(f"    {shown(c.why)}")
    return lines


def _run_end_lines(ends: Iterable[RunEndReport]) -> list[str]:
    """One line per finished run: the rule its failed agent end broke, from its terminal status."""
    rows = list(ends)
    if not rows:
        return []
    lines = ["", "Finished runs, as their terminal status comments end:"]
    for end in rows:
        said = f"the agent's end failed the run [{end.rule_id}]" if end.rule_id else "no failed agent end named"
        who = "" if end.by_app else ", not by an App: only shown"
        lines.append(f"  run {shown(end.run_id)}: {said} (comment {end.comment_id} by {shown(end.author)}{who})")
    return lines


def _receipt_lines(receipts: Iterable[ReceiptReport]) -> list[str]:
    rows = list(receipts)
    if not rows:
        return ["", "Receipts: none on this item."]
    lines = ["", "Receipts (comments whose whole body is a steer receipt):"]
    for r in rows:
        state = "edited, never counts" if r.edited else ("unedited" if r.counts else "not by an App, never counts")
        ids = ", ".join(str(i) for i in r.consumed)
        lines.append(
            f"  comment {r.comment_id} by {shown(r.author)} "
            f"({shown(r.author_type) or 'unknown type'}), {state}: "
            f"lists run(s) {ids}; head {r.head or '(none)'}"
        )
    return lines


def _call_lines(calls: Iterable[CallReport]) -> list[str]:
    lines = ["", "Reads:"]
    for c in calls:
        mark = "ok  " if c.ok else "FAIL"
        detail = f": {shown(c.detail)}" if c.detail else ""
        lines.append(f"  {mark} {c.call}{detail}")
    return lines
