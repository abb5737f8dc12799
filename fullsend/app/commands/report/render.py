"""``fullsend report``'s two forms: a table for a person and one JSON document (``docs/report.schema.json``)."""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from datetime import datetime
from typing import Any

from fullsend.core.report.tally import StageTally, Tally
from fullsend.core.scalars import format_time

SCHEMA_VERSION = 1
#: The numeric columns of a stage row, in the table's order.
COUNTS = tuple(f.name for f in fields(StageTally) if f.name != "stage")


def totals(report: Tally) -> StageTally:
    """Every stage's counts added up, as a row named ``total``."""
    total = StageTally("total")
    for row in report.stages.values():
        for name in COUNTS:
            setattr(total, name, getattr(total, name) + getattr(row, name))
    return total


def _rounded(row: StageTally) -> dict[str, Any]:
    """A row's fields, minutes to 0.1 and US dollars to 0.0001."""
    out = asdict(row)
    for name, value in out.items():
        if isinstance(value, float):
            out[name] = round(value, 4 if name.startswith("cost_") else 1)
    return out


def report_document(
    repo: str, since: datetime, until: datetime, receipt_login: str, report: Tally, notes: list[str]
) -> dict[str, Any]:
    """The ``--json`` document (``docs/report.schema.json``, schema version 1)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "repository": repo,
        "since": format_time(since),
        "until": format_time(until),
        "receipt_login": receipt_login,
        "stages": [_rounded(report.stages[name]) for name in sorted(report.stages)],
        "total": _rounded(totals(report)),
        "receipts_refused": dict(report.refused),
        "receipts_edit_unknown": report.edit_unknown,
        "absorbed_not_skipped": dict(report.not_skipped),
        "complete": not notes,
        "notes": list(notes),
    }


def render_json(document: dict[str, Any]) -> str:
    """The document as indented JSON and a newline."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


_HEADERS = ("stage", "worked", "steered", "absorbed", "skipped", "min spent", "$ spent", "min saved", "$ saved")


def _cells(row: dict[str, Any]) -> tuple[str, ...]:
    return (
        row["stage"],
        str(row["runs_worked"]),
        str(row["runs_steered"]),
        str(row["updates_absorbed"]),
        str(row["runs_skipped"]),
        f"{row['agent_minutes_spent']:.1f}",
        f"{row['cost_usd_spent']:.4f}",
        f"{row['agent_minutes_saved']:.1f}",
        f"{row['cost_usd_saved']:.4f}",
    )


def render_text(document: dict[str, Any]) -> str:
    """The table a person reads: one row per stage and a total, then the guard counts and notes."""
    rows = [_HEADERS] + [_cells(r) for r in document["stages"]] + [_cells(document["total"])]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEADERS))]
    lines = [
        f"What steering saved in {document['repository']} from {document['since']} to {document['until']}:",
        "",
    ]
    lines += [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True)))
        for r in rows
    ]
    lines += ["", f"Receipts counted: those by {document['receipt_login']}, never edited. Refused:"]
    lines += [f"  {rule}: {n}" for rule, n in document["receipts_refused"].items()]
    if document["receipts_edit_unknown"]:
        lines.append(
            f"  not counted either way: {document['receipts_edit_unknown']} whose edits only REST's timestamps tell"
        )
    lines.append("Absorbed runs not counted as skips:")
    lines += [f"  {why}: {n}" for why, n in document["absorbed_not_skipped"].items()]
    if document["total"]["skips_without_figures"]:
        lines.append(
            f"{document['total']['skips_without_figures']} skips rest on runs that recorded no figures: "
            "their savings are not counted."
        )
    lines += [f"Note: {n}" for n in document["notes"]]
    return "\n".join(lines) + "\n"
