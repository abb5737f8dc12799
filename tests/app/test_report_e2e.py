"""``fullsend report`` over what the real action wrote: one steered run, its receipt, the queued
run's skip, then the report's counts (docs/architecture.md "Report")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import jsonschema
import pytest

from fullsend.core.report.figures import parse_figures
from fullsend.core.scalars import format_time
from fullsend.simulator.fixtures import add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import run_entrypoint, runner_env

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "report.schema.json").read_text(encoding="utf-8"))
READER_TOKEN = "report-reader-token"


@pytest.fixture
def sim():
    with GitHubSimulator() as simulator:
        yield simulator


def report(sim: GitHubSimulator, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m fullsend report org/repo *args`` with a read-only token of a person."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GH_", "GITHUB_"))}
    env = {**base, "GH_TOKEN": READER_TOKEN, "GITHUB_API_URL": sim.api_url}
    return subprocess.run(
        [sys.executable, "-m", "fullsend", "report", "org/repo", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_report_counts_the_steered_run_and_the_skip_it_saved(sim, tmp_path):
    fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
    sim.add_token(READER_TOKEN, "octocat", "User", read_only=True)
    added = {}
    sim.on_request(
        sim.match("GET", r"/actions/workflows/fullsend\.yml/runs"),
        lambda s: added.update(run=add_comment_follow_up(s, "/fs-review please re-check the migration")[1]),
    )
    first = tmp_path / "first"
    first.mkdir()
    run = run_entrypoint(runner_env(first, sim, fix), first)
    assert run.exit_code == 0 and run.outputs["steers"] == "1", run.stdout + run.stderr
    follow_up = added["run"]["id"]
    queued = tmp_path / "queued"
    queued.mkdir()
    skip = run_entrypoint(runner_env(queued, sim, fix, run_id=follow_up), queued)
    assert skip.outputs["outcome"] == "skipped", skip.stdout + skip.stderr
    sim.update_workflow_run(follow_up, status="completed", conclusion="success")  # as GitHub records the skip
    assert f"| Saved by standing on | run {fix.my_run_id}'s work, by its status comment: 0." in skip.summary
    assert f"Saved by standing on run {fix.my_run_id}'s work, by its status comment: " in skip.stdout

    (terminal,) = [c for c in sim.comments(fix.pr) if "<!-- fullsend:status:terminal -->" in c["body"]]
    spent = parse_figures(terminal["body"])
    assert spent is not None and spent.stage == "review" and spent.runtime == "claude"
    assert spent.cost_usd == pytest.approx(float(run.outputs["cost_usd"]))
    assert spent.input_tokens == int(run.outputs["input_tokens"]) and spent.agent_s > 0

    proc = report(sim, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, SCHEMA)
    (row,) = doc["stages"]
    assert row["stage"] == "review"
    assert (row["runs_worked"], row["runs_steered"], row["updates_absorbed"], row["runs_skipped"]) == (1, 1, 1, 1)
    assert row["skips_without_figures"] == 0
    assert row["cost_usd_saved"] == row["cost_usd_spent"] == pytest.approx(spent.cost_usd, abs=1e-4)
    assert row["agent_minutes_saved"] == row["agent_minutes_spent"] == pytest.approx(spent.agent_minutes, abs=0.1)
    assert doc["receipts_refused"] == {"receipt-refused-edited": 0, "receipt-refused-author": 0}
    assert doc["complete"] is True and doc["total"]["runs_skipped"] == 1

    text = report(sim)
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("What steering saved in org/repo from ")
    assert any(line.split()[:5] == ["review", "1", "1", "1", "1"] for line in text.stdout.splitlines())
