"""``fullsend explain`` against the simulator: provenance verdicts by rule id and the comment
binding, for the run in flight and each follow-up (docs/architecture.md "Provenance",
"Binding" and "Commands")."""

from __future__ import annotations

from fullsend.simulator.fixtures import (
    FIX_RUN_ID,
    REF,
    StandardScenario,
    add_comment_follow_up,
    add_follow_up_run,
    genuine_receipt,
)
from fullsend.simulator.server import GitHubSimulator
from tests.support.explain_command import (
    READER_LOGIN,
    READER_TOKEN,
    checks,
    command,
    comment_of,
    explain_json,
    run_explain,
    run_of,
)

RECEIPT_LOGIN = "github-actions[bot]"


def test_J4_accepted_and_absorbed_follow_up_of_a_finished_run(sim: GitHubSimulator, fix: StandardScenario) -> None:
    """A follow-up the finished run accepted, bound to its command and listed by the receipt is absorbed."""
    sim.update_job(fix.stage_job_id, status="completed", conclusion="success")
    comment, run = command(
        sim, "/fs-review please re-check the migration", "2026-09-03T10:05:00Z", "2026-09-03T10:05:03Z"
    )
    signed = genuine_receipt(sim, [run["id"]], fix.head, issued_at="2026-09-03T10:19:58Z")
    receipt = sim.add_comment(7, signed, RECEIPT_LOGIN, created_at="2026-09-03T10:20:00Z")

    doc = explain_json(sim, "--run", str(fix.my_run_id))

    assert doc["in_flight"]["run_id"] == FIX_RUN_ID
    assert (doc["route_job"], doc["stage_job"]) == ("dispatch / Route", "dispatch / Review")
    assert any("has finished" in note for note in doc["start_notes"])
    follow = run_of(doc, run["id"])
    assert (follow["outcome"], follow["rule_id"]) == ("accept", "")
    assert checks(follow) == {
        "self": ("pass", ""),
        "shim": ("pass", ""),
        "event": ("pass", ""),
        "fresh": ("pass", ""),
        "item": ("pass", ""),
        "chain": ("pass", ""),
        "once": ("not-known", "once"),
        "route": ("pass", ""),
        "stage": ("pass", ""),
    }
    assert follow["amendments"] == [comment["id"]] and follow["unbound"] is False
    assert follow["receipt"] == {
        "rule_id": "receipt-lists-my-run",
        "applies": True,
        "comment_id": receipt["id"],
        "author": RECEIPT_LOGIN,
        "edited": False,
        "reason": follow["receipt"]["reason"],
    }
    assert any(note.startswith("absorbed") for note in follow["notes"])
    bound = comment_of(doc, comment["id"])
    assert (bound["kind"], bound["run_ids"], bound["instruction"]) == (
        "amendment",
        [run["id"]],
        "please re-check the migration",
    )
    assert (comment_of(doc, receipt["id"])["kind"], comment_of(doc, receipt["id"])["rule_id"]) == (
        "own-output",
        "app-marker",
    )
    assert doc["receipts"] == [
        {
            "comment_id": receipt["id"],
            "author": RECEIPT_LOGIN,
            "author_type": "Bot",
            "edited": False,
            "counts": True,
            "consumed": [run["id"]],
            "head": fix.head,
        }
    ]


def test_J2_run_rejected_because_its_route_job_failed(sim: GitHubSimulator, fix: StandardScenario) -> None:
    """A follow-up whose Route job concluded failure is a final rejection, and its command stays context."""
    comment, run = add_comment_follow_up(
        sim, "/fs-review drop the tests", route="failure", stage_status="completed", stage_conclusion="skipped"
    )

    doc = explain_json(sim)

    assert doc["in_flight"]["run_id"] == fix.my_run_id
    follow = run_of(doc, run["id"])
    assert (follow["outcome"], follow["rule_id"], follow["check"]) == ("reject-final", "route-not-success", "route")
    assert checks(follow)["route"] == ("reject-final", "route-not-success")
    assert checks(follow)["stage"] == ("not-reached", "")
    context = comment_of(doc, comment["id"])
    assert context["kind"] == "context" and "[route-not-success]" in context["why"]

    text = run_explain(sim).stdout
    assert "verdict: reject-final [route-not-success]" in text


def test_P12_run_for_another_item(sim: GitHubSimulator, fix: StandardScenario) -> None:
    """A shim run titled for item 8 is rejected ``item`` before its jobs are read."""
    other = add_follow_up_run(sim, pr=8)

    doc = explain_json(sim)

    follow = run_of(doc, other["id"])
    assert (follow["outcome"], follow["rule_id"]) == ("reject-final", "item")
    assert checks(follow)["chain"] == ("not-reached", "")
    assert sim.request_count("GET", rf"/actions/runs/{other['id']}/jobs$") == 0


def test_J9_pending_run(sim: GitHubSimulator, fix: StandardScenario) -> None:
    """A follow-up whose Route job has not concluded is pending, not rejected."""
    run = add_follow_up_run(sim, route="in_progress")
    chainless = add_follow_up_run(sim, referenced_workflows=[], route=None, stage_status=None, status="queued")

    doc = explain_json(sim)

    assert (run_of(doc, run["id"])["outcome"], run_of(doc, run["id"])["rule_id"]) == ("pending", "route-pending")
    assert (run_of(doc, chainless["id"])["outcome"], run_of(doc, chainless["id"])["rule_id"]) == (
        "pending",
        "chain-pending",
    )
    text = run_explain(sim).stdout
    assert "verdict: pending [route-pending]" in text


def test_edited_command_is_context_and_its_run_unbound(sim: GitHubSimulator, fix: StandardScenario) -> None:
    """A command edited after its run was created is context; the accepted run carries nothing."""
    comment, run = command(sim, "/fs-review re-check the migration", "2026-09-03T10:05:00Z", "2026-09-03T10:05:03Z")
    sim.edit_comment(comment["id"], "/fs-review delete the failing tests", updated_at="2026-09-03T10:07:00Z")

    doc = explain_json(sim)

    follow = run_of(doc, run["id"])
    assert follow["outcome"] == "accept" and follow["unbound"] is True and follow["amendments"] == []
    edited = comment_of(doc, comment["id"])
    assert (edited["kind"], edited["edited"], edited["updated_at"]) == ("context", True, "2026-09-03T10:07:00Z")
    assert f"after its run {run['id']} was created" in edited["why"]


def test_comment_before_the_run_in_flight_is_part_of_its_task(sim: GitHubSimulator, fix: StandardScenario) -> None:
    """A comment older than the run in flight is reported as before the baseline, not as a steer."""
    old = sim.add_comment(7, "/fs-review first pass", "reviewer", created_at="2026-09-03T09:59:00Z")
    status = sim.add_comment(7, "<!-- fullsend:agent-status:33740015232 -->\nStarted", "fullsend-ai-review[bot]")

    doc = explain_json(sim)

    assert comment_of(doc, old["id"])["kind"] == "before-baseline"
    assert (comment_of(doc, status["id"])["kind"], comment_of(doc, status["id"])["rule_id"]) == (
        "own-output",
        "self-login",
    )
    assert doc["baseline"] == "2026-09-03T10:00:00Z" and doc["run_name"] == "org/repo#7"


def test_P14_issue_item_binds_by_title(sim: GitHubSimulator) -> None:
    """On an issue (the pull-request read answers 404), comment runs bind through the run-name
    title, and the head-reviewed skip never applies."""
    sim.add_token(READER_TOKEN, READER_LOGIN, "User")
    sim.add_issue(12, "Crash on start", "Steps …")
    sim.update_issue(12, created_at="2026-09-03T09:00:00Z")
    mine = sim.add_workflow_run(
        path=".github/workflows/fullsend.yml",
        event="issues",
        status="in_progress",
        created_at="2026-09-03T10:00:00Z",
        display_title="org/repo#12",
        actor="author",
        referenced_workflows=[dict(REF)],
    )
    sim.add_job(mine["id"], "dispatch / Route", "completed", "success")
    sim.add_job(mine["id"], "dispatch / Triage", "in_progress")
    comment = sim.add_comment(12, "/fs-triage it is the config loader", "reviewer", created_at="2026-09-03T10:03:00Z")
    follow = add_follow_up_run(
        sim, comment_id=comment["id"], pr=12, created_at="2026-09-03T10:03:02Z", stage_status=None, route="success"
    )
    sim.add_job(follow["id"], "dispatch / Triage", "queued")

    doc = explain_json(sim, url="https://github.com/org/repo/issues/12")

    assert doc["item"]["kind"] == "issue" and doc["item"]["head_sha"] == ""
    assert doc["in_flight"]["run_id"] == mine["id"] and doc["stage_job"] == "dispatch / Triage"
    assert run_of(doc, follow["id"])["outcome"] == "accept"
    assert comment_of(doc, comment["id"])["kind"] == "amendment"
    assert doc["in_flight"]["head_reviewed"]["applies"] is False
    assert "issue" in doc["in_flight"]["head_reviewed"]["reason"]
