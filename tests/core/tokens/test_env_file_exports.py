"""The env file's run facts and
the FULLSEND_STEER_ACTIVE line, rendered and then sourced by a real shell."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime, timedelta, timezone

from fullsend.adapters.sandbox.openshell import workspace_env_text
from fullsend.core.tokens.exports import iteration_line, run_fact_lines, started_at_text

START = datetime(2026, 9, 4, 8, 30, tzinfo=UTC)


def test_147_the_two_run_facts_in_order():
    assert run_fact_lines(started_at_text(START), "abc123") == [
        "export FULLSEND_RUN_STARTED_AT='2026-09-04T08:30:00Z'",
        "export FULLSEND_RUN_HEAD_SHA='abc123'",
    ]


def test_148_an_issue_run_exports_an_empty_head():
    assert "export FULLSEND_RUN_HEAD_SHA=''" in run_fact_lines(started_at_text(START), "")


def test_149_a_non_utc_start_is_written_in_utc():
    plus5 = START.astimezone(timezone(timedelta(hours=5)))
    assert started_at_text(plus5) == "2026-09-04T08:30:00Z"


def test_150_a_hostile_head_is_quoted_and_survives_a_shell():
    line = run_fact_lines("x", "a'; rm -rf /; '")[1]
    assert line == "export FULLSEND_RUN_HEAD_SHA='a'\\''; rm -rf /; '\\'''"
    out = subprocess.run(["sh", "-c", f'{line}; printf %s "$FULLSEND_RUN_HEAD_SHA"'], capture_output=True, text=True)
    assert out.stdout == "a'; rm -rf /; '"


def _source(text: str) -> str:
    script = text + 'printf %s "${FULLSEND_STEER_ACTIVE-unset}"'
    return subprocess.run(["sh", "-c", script], capture_output=True, text=True).stdout


def test_154_an_unwatched_iteration_unsets_a_planted_value():
    planted = "export FULLSEND_STEER_ACTIVE=1\n"  # e.g. from an .env.d file sourced earlier
    assert _source(planted + iteration_line(False) + "\n") == "unset"
    assert _source(workspace_env_text({"FULLSEND_STEER_ACTIVE": ""})) == "unset"


def test_155_a_watched_iteration_exports_it():
    assert _source(iteration_line(True) + "\n") == "1"
    assert _source(workspace_env_text({"FULLSEND_STEER_ACTIVE": "1", "PATH": "/usr/bin:/bin"})) == "1"
