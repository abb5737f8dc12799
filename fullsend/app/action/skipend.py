"""The end of a skip decided before the application is loaded, as ``finish.conclude`` writes it
(docs/architecture.md "Fast skip"): the log lines, the step outputs and the step summary the full
lifecycle writes for the same skip (``tests/app/test_fast_skip.py`` holds them equal).
"""

from __future__ import annotations

from datetime import datetime

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.gha import Console, console_log, write_outputs, write_summary
from fullsend.app.action.facts import PreflightFacts
from fullsend.app.action.outputs import ActionOutcome, output_entries
from fullsend.app.action.preflight import announce
from fullsend.context import GitHubContext
from fullsend.core.receipt.skips import SKIP_REASON_OUTPUT, Skip
from fullsend.core.text.inert import inert


def publish_skip(
    console: Console,
    facts: PreflightFacts,
    ctx: GitHubContext,
    skip: Skip,
    lines: list[tuple[str, str]],
    started_at: datetime,
) -> int:
    log = console_log(console)
    for level, text in lines:
        log(level, text)
    announce(skip, facts.run_id_raw, log)
    now = SystemClock().now()
    reason = SKIP_REASON_OUTPUT.get(skip.rule_id, skip.rule_id)
    duration_s = max(0.0, (now - started_at).total_seconds())
    run_name = f"{facts.repository}#{facts.item_number}"  # as RunPlan.run_name and finish.item_url
    item_link = f"[{run_name}]({ctx.server_url}/{facts.repository}/issues/{facts.item_number})"
    try:
        write_outputs(ctx.output_path, skip_outputs(reason, duration_s))
    except OSError as exc:
        log("warning", f"Could not write the step outputs: {exc.strerror}")
    try:
        write_summary(ctx.summary_path, skip_summary(facts.stage, item_link, reason, skip, now, duration_s))
    except OSError as exc:
        log("warning", f"Could not write the step summary: {exc.strerror}")
    log("info", f"Outcome: skipped ({reason})")
    return 0


def skip_outputs(reason: str, duration_s: float) -> dict[str, str]:
    """The ``GITHUB_OUTPUT`` entries of a skip, as ``finish.outputs_of`` writes them (the names
    are ``outputs.OUTPUT_NAMES``; a test holds the two equal)."""
    return output_entries(
        {
            "outcome": ActionOutcome.SKIPPED.value,
            "skip_reason": reason,
            "steers": "0",
            "duration_s": f"{duration_s:.1f}",
        }
    )


def skip_summary(stage: str, item_link: str, reason: str, skip: Skip, at: datetime, duration_s: float) -> str:
    """The step summary of a skip, as ``finish.render_summary`` renders it (a test holds them equal)."""
    because = (
        f"| Skipped because of | the [receipt]({skip.receipt_url}) of the run that absorbed this update |\n"
        if skip.receipt_url
        else ""
    )
    stood = f"| Saved by standing on | {inert(skip.stands_on)} |\n" if skip.stands_on else ""
    return (
        f"## fullsend {stage} · ⏭️ skipped\n\n| | |\n|---|---|\n"
        f"| Outcome | `skipped` (`{reason}`) |\n| Work item | {item_link} |\n| Steers acknowledged | 0 |\n"
        "| Follow-up runs absorbed | none |\n| Head settled on | — |\n| Receipt | none |\n"
        f"{because}{stood}| Duration | {duration_s:.0f} s |\n\n\n### Timeline\n\n"
        "| time (UTC) | what | rule |\n|---|---|---|\n"
        f"| {at.strftime('%H:%M:%S')} | {inert(skip.reason)} | `{skip.rule_id}` |\n\n\n\n\n\n"
    )
