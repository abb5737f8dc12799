"""``fullsend report`` against the simulator: a repository with a known history, the counts it
must print, and every way the command refuses or fails (docs/architecture.md "Report")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from fullsend.app.commands.report.command import ReportArgumentError, parse_repository, parse_since
from fullsend.core.receipt.marker import build_marker, receipt_body
from fullsend.core.report.figures import RunFigures, figures_line, figures_marker
from fullsend.simulator.fixtures import REF, SHIM_PATH, fix_clock, genuine_receipt
from fullsend.simulator.server import GitHubSimulator

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "report.schema.json").read_text(encoding="utf-8"))
READER = "report-reader-token"
JOB = "github-actions[bot]"
ROLE = "fullsend-ai-review[bot]"
DAY = "2026-09-03"


@pytest.fixture
def sim() -> Iterator[GitHubSimulator]:
    with GitHubSimulator(clock=fix_clock()) as server:
        server.add_token(READER, "octocat", "User", read_only=True)
        yield server


def report(
    sim: GitHubSimulator, *args: str, env: dict[str, str] | None = None, repo: str = "org/repo", unsigned: bool = True
):
    """The report over ``sim``.  These counts are the unsigned form's, under --allow-unsigned-receipts
    (the signed form's proof: test_signed_receipts_are_counted_by_their_proof)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GH_", "GITHUB_"))}
    full = {"GH_TOKEN": READER, "GITHUB_API_URL": sim.api_url, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "fullsend", "report", repo, *(["--allow-unsigned-receipts"] if unsigned else []), *args],
        env={**base, **full},
        capture_output=True,
        text=True,
        timeout=120,
    )


def report_json(sim: GitHubSimulator, *args: str) -> dict[str, Any]:
    proc = report(sim, "--since", "2026-09-01", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, SCHEMA)
    return doc


def at(hour: int, minute: int = 0) -> str:
    return f"{DAY}T{hour:02d}:{minute:02d}:00Z"


def terminal(run_id: int, figures: RunFigures | None, consumed: tuple[int, ...] = (), head: str = "aaa111") -> str:
    lines = [f"<!-- fullsend:agent-status:{run_id} -->", "<!-- fullsend:status:terminal -->"]
    if consumed:
        lines.append(build_marker(consumed, head))
    lines.append("🤖 Finished Review · ✅ Success")
    if figures is not None:
        lines += ["", figures_line(figures), figures_marker(figures)]
    return "\n".join(lines)


def receipt(sim: GitHubSimulator, number: int, ids: tuple[int, ...], when: str, **kw: Any) -> dict[str, Any]:
    return sim.add_comment(number, receipt_body(ids, "aaa111"), kw.pop("login", JOB), created_at=when, **kw)


def history(sim: GitHubSimulator) -> None:
    """Three items, two stages; every kind of receipt and of absorbed run the report tells apart."""
    sim.add_pull_request(7, "aaa111", created_at=at(8))
    sim.add_pull_request(8, "aaa111", created_at=at(8))
    sim.add_issue(9, "An issue", created_at=at(8))
    for run_id, conclusion in ((201, "success"), (202, "success"), (203, "cancelled"), (204, "success")):
        sim.add_workflow_run(id=run_id, status="completed", conclusion=conclusion, created_at=at(10))
    sim.add_workflow_run(id=205, status="queued", created_at=at(11))
    sim.add_workflow_run(id=206, status="completed", conclusion="success", created_at="2026-08-20T10:00:00Z")
    # PR 7, review: run 101 absorbed 201 and 202 (both skipped) and 203 (cancelled by GitHub).
    review = RunFigures("review", "claude", agent_s=900.0, cost_usd=2.0, input_tokens=10, output_tokens=5)
    sim.add_comment(7, terminal(101, review, (201, 202, 203)), ROLE, created_at=at(12))
    receipt(sim, 7, (201, 202, 203), at(12, 1))
    # PR 8, review: run 102 absorbed 204, but 204 was re-run and worked (its own status comment).
    sim.add_comment(8, terminal(102, review, (204,)), ROLE, created_at=at(12))
    receipt(sim, 8, (204,), at(12, 1))
    sim.add_comment(8, "<!-- fullsend:agent-status:204 -->\n🤖 Review · Started", ROLE, created_at=at(13))
    # Issue 9, triage: run 103 absorbed 205 (still queued) and 206 (older than the listing's window).
    triage = RunFigures("triage", "pi", agent_s=60.0, cost_usd=0.5)
    sim.add_comment(9, terminal(103, triage, (205, 206)), ROLE, created_at=at(12))
    receipt(sim, 9, (205, 206), at(12, 1))
    # Refused: an edited receipt, a person's, the agent App's; none of them counts.
    receipt(sim, 7, (201,), at(14), last_edited_at=at(14, 5))
    receipt(sim, 7, (202,), at(14), login="mallory")
    receipt(sim, 9, (205,), at(14), login=ROLE)
    # Text that quotes a receipt is no receipt at all; a run without figures counts nowhere.
    sim.add_comment(7, "> " + receipt_body((201,), "aaa111"), "reviewer", created_at=at(15))
    sim.add_comment(9, terminal(104, None), ROLE, created_at=at(15))


def test_a_known_history_gives_the_expected_counts(sim):
    history(sim)
    doc = report_json(sim)
    rows = {r["stage"]: r for r in doc["stages"]}
    assert set(rows) == {"review", "triage"}
    review, triage = rows["review"], rows["triage"]
    keys = ("runs_worked", "runs_steered", "updates_absorbed", "runs_skipped", "skips_without_figures")
    assert tuple(review[k] for k in keys) == (2, 2, 4, 2, 0)
    assert tuple(triage[k] for k in keys) == (1, 1, 2, 1, 0)
    assert (review["agent_minutes_spent"], review["cost_usd_spent"]) == (30.0, 4.0)
    assert (review["agent_minutes_saved"], review["cost_usd_saved"]) == (30.0, 4.0)
    assert (triage["agent_minutes_saved"], triage["cost_usd_saved"]) == (1.0, 0.5)
    assert doc["receipts_refused"] == {"receipt-refused-edited": 1, "receipt-refused-author": 2}
    assert doc["absorbed_not_skipped"] == {
        "unproven": 0,
        "no-run-record": 0,
        "worked": 1,
        "not-finished": 1,
        "cancelled": 1,
        "other-conclusion": 0,
    }
    assert doc["total"]["runs_skipped"] == 3 and doc["total"]["cost_usd_saved"] == 4.5
    assert doc["complete"] is True and doc["notes"] == []
    assert (doc["repository"], doc["since"], doc["receipt_login"]) == ("org/repo", "2026-09-01T00:00:00Z", JOB)


def test_signed_receipts_are_counted_by_their_proof(sim):
    """Issue 45: the report checks a signed receipt's proof as the queued run does, against the
    simulator's issuer (the one its API's server implies); an unsigned one, without
    --allow-unsigned-receipts, and a forged signed one are refused by rule id."""
    sim.add_pull_request(7, "aaa111", created_at=at(8))
    for run_id in (301, 302, 303):
        sim.add_workflow_run(
            id=run_id,
            path=SHIM_PATH,
            referenced_workflows=[REF],
            status="completed",
            conclusion="success",
            created_at=at(10),
        )
    review = RunFigures("review", "claude", agent_s=600.0, cost_usd=1.0)
    sim.add_comment(7, terminal(101, review, (301,)), ROLE, created_at=at(12))
    signed = genuine_receipt(sim, [301], "aaa111", writer_run_id=101, issued_at=at(12))
    sim.add_comment(7, signed, JOB, created_at=at(12, 1))
    branch = {"workflow_ref": "org/repo/.github/workflows/fullsend.yml@refs/heads/evil"}
    forged = genuine_receipt(sim, [302], "aaa111", writer_run_id=101, issued_at=at(12), identity=branch)
    sim.add_comment(7, forged, JOB, created_at=at(12, 1))
    receipt(sim, 7, (303,), at(12, 1))
    proc = report(sim, "--since", "2026-09-01", "--json", unsigned=False)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, SCHEMA)
    (row,) = doc["stages"]
    assert (row["updates_absorbed"], row["runs_skipped"], row["cost_usd_saved"]) == (1, 1, 1.0)
    assert doc["receipts_refused"] == {
        "receipt-refused-edited": 0,
        "receipt-refused-author": 0,
        "receipt-proof-workflow": 1,
        "receipt-unsigned": 1,
    }


def test_without_graphql_an_unedited_receipt_is_judged_by_rest_and_the_report_says_so(sim):
    sim.add_pull_request(7, "aaa111", created_at=at(8))
    sim.add_workflow_run(id=201, status="completed", conclusion="success", created_at=at(10))
    sim.add_comment(7, terminal(101, RunFigures("review", "claude", 60.0, 1.0), (201,)), ROLE, created_at=at(12))
    receipt(sim, 7, (201,), at(12, 1), updated_at="2026-09-03T12:01:01Z")  # GitHub's one-second bump
    sim.fail("POST", r"/graphql$", 403, times=None, body={"message": "Resource not accessible by integration"})
    doc = report_json(sim)
    assert doc["receipts_edit_unknown"] == 1  # REST alone cannot tell: neither counted nor refused
    assert doc["receipts_refused"]["receipt-refused-edited"] == 0
    assert doc["stages"][0]["runs_skipped"] == 0
    assert doc["complete"] is False
    (note,) = doc["notes"]
    assert note.startswith("#7: GraphQL could not say which comments were edited")


def test_a_receipt_login_other_than_the_default_is_honoured(sim):
    sim.add_pull_request(7, "aaa111", created_at=at(8))
    sim.add_workflow_run(id=201, status="completed", conclusion="success", created_at=at(10))
    sim.add_comment(7, terminal(101, RunFigures("review", "claude", 60.0, 1.0), (201,)), ROLE, created_at=at(12))
    receipt(sim, 7, (201,), at(12, 1), login="ghes-actions[bot]")
    assert report_json(sim)["receipts_refused"]["receipt-refused-author"] == 1
    doc = report_json(sim, "--receipt-login", "ghes-actions[bot]")
    assert doc["receipts_refused"]["receipt-refused-author"] == 0 and doc["total"]["runs_skipped"] == 1


def test_comments_are_read_over_every_page(sim):
    sim.add_issue(9, "busy", created_at=at(8))
    for i in range(230):
        sim.add_comment(9, f"comment {i}", "reviewer", created_at=at(9))
    sim.add_workflow_run(id=201, status="completed", conclusion="success", created_at=at(10))
    sim.add_comment(9, terminal(101, RunFigures("triage", "pi", 60.0, 1.0), (201,)), ROLE, created_at=at(12))
    receipt(sim, 9, (201,), at(12, 1))
    assert report_json(sim)["total"]["runs_skipped"] == 1
    assert sim.request_count("GET", r"/issues/comments$") == 3


@pytest.mark.parametrize(
    ("args", "env", "said"),
    [
        (("not a repo",), {}, "name a repository as owner/repo or by its URL"),
        (("org/repo/extra",), {}, "name a repository as owner/repo or by its URL"),
        (("ftp://example.com/org/repo",), {}, "is not an http(s) URL of a repository"),
        (("org/repo", "--since", "yesterday"), {}, "--since must be a date such as 2026-11-01"),
        (("org/repo", "--since", "2999-01-01"), {}, "is in the future"),
        (("org/repo", "--receipt-login", " "), {}, "--receipt-login must name the job token's login"),
        (("org/repo",), {"GH_TOKEN": ""}, "no GitHub token: set GH_TOKEN or GITHUB_TOKEN"),
        (("org/repo",), {"GITHUB_API_URL": "not a url"}, "GITHUB_API_URL"),
    ],
)
def test_a_bad_argument_is_one_line_and_exit_2(sim, args, env, said):
    proc = report(sim, *args[1:], env=env, repo=args[0])
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith("fullsend report: ") and said in line


def test_a_repository_github_does_not_know_is_exit_2(sim):
    proc = report(sim, "--since", "2026-09-01", repo="org/other")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (
        f"fullsend report: org/other does not exist at {sim.api_url}, or the token cannot see it (GitHub answered 404)\n"
    )


def test_a_failed_read_prints_one_line_and_no_report(sim):
    sim.add_issue(9, "x", created_at=at(8))
    sim.fail("GET", r"/actions/runs$", 403, times=None, body={"message": "Resource not accessible by integration"})
    proc = report(sim, "--since", "2026-09-01")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"fullsend report: a read failed at {sim.api_url}: ") and "403" in line
    assert line.endswith("no report is printed, since its counts would be short")


@pytest.mark.parametrize(
    ("value", "env", "expected"),
    [
        ("org/repo", {}, ("org", "repo", "https://api.github.com")),
        ("https://github.com/org/repo", {}, ("org", "repo", "https://api.github.com")),
        ("https://github.com/org/repo.git", {}, ("org", "repo", "https://api.github.com")),
        ("https://github.com/org/repo/pull/7", {}, ("org", "repo", "https://api.github.com")),
        ("https://ghe.example.com/org/repo", {}, ("org", "repo", "https://ghe.example.com/api/v3")),
        ("https://user:secret@ghe.example.com/org/repo", {}, ("org", "repo", "https://ghe.example.com/api/v3")),
        ("https://github.com:443/org/repo", {}, ("org", "repo", "https://api.github.com")),
        ("https://ghe.example.com:8443/org/repo", {}, ("org", "repo", "https://ghe.example.com:8443/api/v3")),
        (
            "org/repo",
            {"GITHUB_API_URL": "https://ghe.example.com/api/v3/"},
            ("org", "repo", "https://ghe.example.com/api/v3"),
        ),
    ],
)
def test_the_repository_argument_and_the_api_it_reads(value, env, expected):
    repo, api = parse_repository(value, env)
    assert (repo.owner, repo.name, api) == expected


def test_since_takes_a_date_or_a_time_and_defaults_to_thirty_days():
    now = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
    assert parse_since(None, now) == datetime(2026, 11, 3, 12, 0, tzinfo=UTC)
    assert parse_since("2026-11-01", now) == datetime(2026, 11, 1, tzinfo=UTC)
    assert parse_since("2026-11-01T08:30:00+01:00", now) == datetime(2026, 11, 1, 7, 30, tzinfo=UTC)
    with pytest.raises(ReportArgumentError):
        parse_since("2026-13-01", now)


def test_strangers_receipts_spend_no_reads_and_a_receipt_without_its_runs_status_proves_no_skip(sim):
    sim.add_pull_request(7, "aaa111", created_at=at(8))
    sim.add_workflow_run(id=201, status="completed", conclusion="success", created_at=at(10))
    receipt(sim, 7, tuple(range(900_000, 900_050)), at(11), login="mallory")  # 50 ids nobody runs
    receipt(sim, 7, (201,), at(12, 1))  # genuine, but no terminal status copies it
    doc = report_json(sim)
    assert sim.request_count("GET", r"/actions/runs/9000\d\d$") == 0
    assert doc["receipts_refused"]["receipt-refused-author"] == 1
    assert doc["absorbed_not_skipped"]["unproven"] == 1 and doc["total"]["runs_skipped"] == 0


def test_an_unsplittable_url_and_a_prehistoric_since_are_exit_2(sim):
    proc = report(sim, repo="http://[abc/org/repo")
    assert proc.returncode == 2 and "is not an http(s) URL of a repository" in proc.stderr
    assert "unexpected" not in proc.stderr
    proc = report(sim, "--since", "0001-01-01")
    assert proc.returncode == 2 and "before GitHub existed" in proc.stderr


def test_the_table_prints_the_known_historys_counts(sim):
    """The form a person reads: a row per stage and the total, then the refused receipts."""
    history(sim)
    proc = report(sim, "--since", "2026-09-01")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("What steering saved in org/repo from 2026-09-01T00:00:00Z to ")
    assert [line.split() for line in lines[2:6]] == [
        [
            "stage",
            "worked",
            "steered",
            "absorbed",
            "skipped",
            "min",
            "spent",
            "$",
            "spent",
            "min",
            "saved",
            "$",
            "saved",
        ],
        ["review", "2", "2", "4", "2", "30.0", "4.0000", "30.0", "4.0000"],
        ["triage", "1", "1", "2", "1", "1.0", "0.5000", "1.0", "0.5000"],
        ["total", "3", "3", "6", "3", "31.0", "4.5000", "31.0", "4.5000"],
    ]
    assert "  receipt-refused-edited: 1\n  receipt-refused-author: 2\n" in proc.stdout
    assert "  worked: 1\n  not-finished: 1\n  cancelled: 1\n" in proc.stdout
