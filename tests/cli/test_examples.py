"""The shipped workflows in ``examples/`` (docs/architecture.md
"Shim and dispatch workflow"): the run-name contract, the one ``dispatch`` job,
the Route job (one step: this action with ``command: route``) and the stage jobs' concurrency,
permissions and pins."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from fullsend.core.route.decision import STAGES as ROUTE_STAGES
from fullsend.core.route.triggers import shim_triggers

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SHIM = EXAMPLES / "fullsend.yml"
DISPATCH = EXAMPLES / "reusable-dispatch.yml"
STAGES = {
    "triage": "Triage",
    "code": "Code",
    "review": "Review",
    "fix": "Fix",
    "retro": "Retro",
    "prioritize": "Prioritize",
}
PR_FIRST = {"review", "fix", "retro"}
ISSUE_ITEM = "${{ github.event.issue.number || github.event.pull_request.number }}"
PR_ITEM = "${{ github.event.pull_request.number || github.event.issue.number }}"
# WIRE: the work-item half, then " comment:<id>" on issue_comment, " review_comment:<id>" on a
# review-thread comment (docs/adopting.md "The run-name contract").
RUN_NAME = (
    "${{ github.repository }}#"
    + ISSUE_ITEM
    + "${{ github.event_name == 'issue_comment' && ' comment:' || github.event_name == 'pull_request_review_comment'"
    + " && ' review_comment:' || '' }}${{ github.event.comment.id }}"
)


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as a boolean
    return data


# --- the shim ----------------------------------------------------------------------------------


def test_shim_run_name_contract() -> None:
    assert load(SHIM)["run-name"] == RUN_NAME


def test_shim_triggers_and_single_dispatch_job() -> None:
    shim = load(SHIM)
    # every stage is on in reusable-dispatch.yml: the events on which Route selects any stage
    assert shim["on"] == {event: {"types": list(types)} for event, types in shim_triggers(ROUTE_STAGES).items()}
    assert "unlabeled" not in shim["on"]["pull_request_target"]["types"]  # Route selects nothing on it
    assert shim["permissions"] == {}
    assert list(shim["jobs"]) == ["dispatch"]
    dispatch = shim["jobs"]["dispatch"]
    assert dispatch["uses"] == "./.github/workflows/reusable-dispatch.yml"
    assert "concurrency" not in dispatch and "concurrency" not in shim  # the group cannot sit on the shim


# --- the dispatch workflow ---------------------------------------------------------------------


def test_dispatch_jobs_and_names() -> None:
    flow = load(DISPATCH)
    assert "workflow_call" in flow["on"] and flow["permissions"] == {}
    assert {key: job["name"] for key, job in flow["jobs"].items()} == {"route": "Route", **STAGES}
    assert flow["jobs"]["route"]["outputs"]["stage"] == "${{ steps.route.outputs.stage }}"


@pytest.mark.parametrize("stage", list(STAGES))
def test_stage_job_contract(stage: str) -> None:
    job = load(DISPATCH)["jobs"][stage]
    item = PR_ITEM if stage in PR_FIRST else ISSUE_ITEM
    shared = stage in ("review", "fix")  # one group per pull request, every pending run kept
    assert job["concurrency"] == {
        "group": f"fullsend-{'pr' if shared else stage}-${{{{ github.repository }}}}-{item}",
        "cancel-in-progress": False,
        **({"queue": "max"} if shared else {}),
    }
    assert job["needs"] == "route" and job["if"] == f"needs.route.outputs.stage == '{stage}'"
    assert isinstance(job["timeout-minutes"], int) and job["timeout-minutes"] <= 60
    assert job["permissions"]["actions"] == "read" and job["permissions"]["contents"] == "read"
    assert set(job["permissions"]) <= {"actions", "contents", "id-token", "issues", "pull-requests"}
    *checkouts, action, shown = job["steps"]
    if stage in ("review", "fix"):  # the base branch's settings at the root, the head in pull-request/
        base, head = checkouts
        assert base["with"]["sparse-checkout"].split() == [".fullsend", ".claude", ".codex", ".pi"]
        assert head["with"]["path"] == "pull-request" and head["with"]["fetch-depth"] == 0
        assert base["with"]["persist-credentials"] is False and head["with"]["persist-credentials"] is False
    else:
        assert [c["with"] for c in checkouts] == [{"persist-credentials": False}]
    assert action["uses"] == "./" and action["with"]["stage"] == stage
    assert action["id"] == "steer" and action["with"]["agent_cli"] == "${{ vars.FULLSEND_AGENT_CLI }}"
    # a poll interval without editing the harness (the adopter-path plays set the variable)
    assert action["with"]["poll_interval_seconds"] == "${{ vars.FULLSEND_POLL_INTERVAL_SECONDS }}"
    assert shown["name"] == "Show the outputs" and shown["if"] == "always()"
    assert shown["env"] == {
        k.upper(): f"${{{{ steps.steer.outputs.{k} }}}}"
        for k in ("outcome", "skip_reason", "steers", "consumed_run_ids", "receipt_url", "head_sha")
    }


def test_route_job_is_one_step_of_this_action_with_command_route() -> None:
    """The Route decision is ``fullsend route`` (tests/core/route holds its table, every row of the
    retired bash tests among them); the job only checks out the action and runs it."""
    route = load(DISPATCH)["jobs"]["route"]
    assert route["permissions"] == {"contents": "read", "pull-requests": "read"}
    assert isinstance(route["timeout-minutes"], int)
    checkout, decide = route["steps"]
    assert checkout["uses"].startswith("actions/checkout@") and checkout["with"] == {"persist-credentials": False}
    assert decide == {
        "name": "Authorize and select the stage",
        "id": "route",
        "uses": "./",
        "with": {"command": "route"},
    }


def test_no_expression_in_run_scripts() -> None:
    """Event data reaches a script through env only (no template injection)."""
    for job in load(DISPATCH)["jobs"].values():
        for step in job.get("steps", []):
            assert "${{" not in step.get("run", "")


def test_the_route_step_runs_fullsend_route_as_the_runner_would(tmp_path: Path) -> None:
    """The step's ``with:`` as ``INPUT_*`` variables, the image's entrypoint, an event that needs no
    role: the decision and its outputs (the HTTP role read is tests/cli/test_route_command.py)."""
    step = load(DISPATCH)["jobs"]["route"]["steps"][1]
    event, output = tmp_path / "event.json", tmp_path / "output"
    event.write_text('{"action": "labeled", "label": {"name": "ready-for-triage"}, "issue": {"number": 7}}')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "GH_"))}
    env.update({f"INPUT_{k.upper()}": v for k, v in step["with"].items()})
    env.update(
        {
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": "issues",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_REPOSITORY": "org/repo",
            "GITHUB_OUTPUT": str(output),
            "INPUT_GITHUB_TOKEN": "t",
        }
    )
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES.parent / "entrypoint.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "Route: event issues/labeled -> stage 'triage'",
        "Route: the label ready-for-triage selects triage [route-label]",
    ]
    assert re.search(r"^stage<<(ghadelimiter_\w+)\ntriage\n\1$", output.read_text(), re.M)


def test_example_harness_is_lint_clean() -> None:
    from fullsend.app.commands.lint import lint_harness_file

    assert lint_harness_file(EXAMPLES / "harness" / "review.yaml") == []
