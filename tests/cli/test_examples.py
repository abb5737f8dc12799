"""The shipped workflows in ``examples/`` (interface.md "Workflows it ships";
spec/receipt-preflight-tokens.md §9.1-§9.3): the run-name contract, the one ``dispatch`` job,
the Route job and the stage jobs' concurrency, permissions and pins — and the Route script
itself, run with bash against a fake ``gh`` for each arm of §9.3."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.tools import missing_tool

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SHIM = EXAMPLES / "fullsend.yml"
DISPATCH = EXAMPLES / "reusable-dispatch.yml"
STAGES = {"triage": "Triage", "code": "Code", "review": "Review", "fix": "Fix", "retro": "Retro", "prioritize": "Prioritize"}
PR_FIRST = {"review", "fix", "retro"}
ISSUE_ITEM = "${{ github.event.issue.number || github.event.pull_request.number }}"
PR_ITEM = "${{ github.event.pull_request.number || github.event.issue.number }}"
# WIRE (§9.1): the work-item half, then " comment:<id>" on issue_comment only.
RUN_NAME = ("${{ github.repository }}#" + ISSUE_ITEM
            + "${{ github.event_name == 'issue_comment' && ' comment:' || '' }}${{ github.event.comment.id }}")


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as a boolean
    return data


# --- the shim ----------------------------------------------------------------------------------


def test_shim_run_name_contract() -> None:
    assert load(SHIM)["run-name"] == RUN_NAME


def test_shim_triggers_and_single_dispatch_job() -> None:
    shim = load(SHIM)
    assert shim["on"] == {
        "issues": {"types": ["opened", "edited", "labeled"]},
        "issue_comment": {"types": ["created"]},
        "pull_request_target": {"types": ["opened", "synchronize", "ready_for_review", "closed", "labeled", "unlabeled"]},
        "pull_request_review": {"types": ["submitted"]},
    }
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
    assert job["concurrency"] == {"group": f"fullsend-{stage}-${{{{ github.repository }}}}-{item}", "cancel-in-progress": False}
    assert job["needs"] == "route" and job["if"] == f"needs.route.outputs.stage == '{stage}'"
    assert isinstance(job["timeout-minutes"], int) and job["timeout-minutes"] <= 60
    assert job["permissions"]["actions"] == "read" and job["permissions"]["contents"] == "read"
    assert set(job["permissions"]) <= {"actions", "contents", "id-token", "issues", "pull-requests"}
    checkout, action, shown = job["steps"]
    assert checkout["with"] == {"persist-credentials": False}
    assert action["uses"] == "./" and action["with"]["stage"] == stage
    assert action["id"] == "steer" and action["with"]["agent_cli"] == "${{ vars.FULLSEND_AGENT_CLI }}"
    assert shown["name"] == "Show the outputs" and shown["if"] == "always()"
    assert shown["env"] == {k.upper(): f"${{{{ steps.steer.outputs.{k} }}}}"
                            for k in ("outcome", "skip_reason", "steers", "consumed_run_ids", "receipt_url", "head_sha")}


def test_route_job_has_no_token_permissions() -> None:
    route = load(DISPATCH)["jobs"]["route"]
    assert route["permissions"] == {} and isinstance(route["timeout-minutes"], int)


@pytest.mark.parametrize("path", [SHIM, DISPATCH], ids=["shim", "dispatch"])
def test_remote_actions_pinned_by_sha_with_version_comment(path: Path) -> None:
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\s*(?:- )?uses:\s*(\S+)(.*)", line)
        if m is None or m.group(1).startswith("./"):
            continue
        assert re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", m.group(1)), line
        assert re.match(r"\s+# v\d", m.group(2)), line


def test_no_expression_in_run_scripts() -> None:
    """Event data reaches the Route script through env only (no template injection)."""
    for job in load(DISPATCH)["jobs"].values():
        for step in job.get("steps", []):
            assert "${{" not in step.get("run", "")


# --- the Route script --------------------------------------------------------------------------

ROLES = {"wendy": "write", "tom": "triage", "ann": "admin", "rita": "read", "author": "read"}


@pytest.fixture
def route(tmp_path: Path):
    if shutil.which("jq") is None:
        missing_tool("jq (the Route script uses it; GitHub's runners have it)", "apt-get install -y jq")
    script = load(DISPATCH)["jobs"]["route"]["steps"][0]["run"]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    gh = bin_dir / "gh"
    roles = " ".join(f"{k}={v}" for k, v in ROLES.items())
    gh.write_text(
        "#!/bin/sh\n"
        'user=$(printf %s "$2" | sed -n "s#^repos/org/repo/collaborators/\\(.*\\)/permission\\$#\\1#p")\n'
        f'for pair in {roles}; do [ "${{pair%%=*}}" = "$user" ] && echo "${{pair#*=}}" && exit 0; done\n'
        'echo "gh: Not Found (HTTP 404)" >&2; exit 1\n'
    )
    gh.chmod(gh.stat().st_mode | stat.S_IXUSR)

    def run(event: str, **env: str) -> str:
        out = tmp_path / "output"
        out.write_text("")
        full = {
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GITHUB_OUTPUT": str(out), "GH_TOKEN": "t",
            "REPO": "org/repo", "OWNER": "org", "EVENT_NAME": event, "ACTION": "", "SENDER": "", "SENDER_TYPE": "User",
            "IS_PR": "false", "ISSUE_LABELS": "[]", "PR_LABELS": "null", "ISSUE_AUTHOR": "author", "LABEL": "",
            "COMMENT_BODY": "", "COMMENT_AUTHOR": "", "COMMENT_AUTHOR_TYPE": "User", "COMMENT_ASSOCIATION": "MEMBER",
            "PR_AUTHOR": "", "PR_AUTHOR_TYPE": "User", "PR_HEAD_REPO": "", "REVIEW_STATE": "", "REVIEW_AUTHOR": "",
            **env,
        }
        proc = subprocess.run(["bash", "-e", "-c", script], env=full, capture_output=True, text=True, timeout=30)
        assert proc.returncode == 0, proc.stderr  # Route always concludes success
        (line,) = out.read_text().splitlines()
        return line.removeprefix("stage=")

    return run


def comment(body: str, who: str, pr: bool = False, **env: str) -> dict[str, str]:
    return {"COMMENT_BODY": body, "COMMENT_AUTHOR": who, "IS_PR": "true" if pr else "false", "ACTION": "created", **env}


@pytest.mark.parametrize(
    ("vid", "env", "stage"),
    [
        ("triage-by-triager-on-issue", comment("/fs-triage look again", "tom"), "triage"),
        ("triage-on-pr", comment("/fs-triage relabel", "wendy", pr=True), "triage"),
        ("triage-below-floor", comment("/fs-triage x", "rita"), ""),
        ("triage-unknown-user", comment("/fs-triage x", "stranger"), ""),
        ("code-by-writer-on-issue", comment("/fs-code build it", "wendy"), "code"),
        ("code-on-pr-refused", comment("/fs-code build it", "wendy", pr=True), ""),
        ("code-needs-write", comment("/fs-code build it", "tom"), ""),
        ("review-by-triager-on-pr", comment("/fs-review head moved; re-check", "tom", pr=True), "review"),
        ("review-on-issue-refused", comment("/fs-review x", "ann"), ""),
        ("fix-by-writer", comment("/fs-fix rebase onto main", "wendy", pr=True), "fix"),
        ("fix-needs-write", comment("/fs-fix x", "tom", pr=True), ""),
        ("fix-on-issue-refused", comment("/fs-fix x", "wendy"), ""),
        ("retro", comment("/fs-retro", "ann", pr=True), "retro"),
        ("fullsend-retro", comment("/fullsend retro please", "wendy"), "retro"),
        ("fullsend-alone", comment("/fullsend", "wendy"), ""),
        ("prioritize", comment("/fs-prioritize lower", "wendy"), "prioritize"),
        ("bot-author-never", comment("/fs-fix x", "ann", pr=True, COMMENT_AUTHOR_TYPE="Bot"), ""),
        ("crlf-first-line", comment("/fs-review\r\nsecond line", "tom", pr=True), "review"),
        ("command-on-second-line", comment("please look\n/fs-fix x", "wendy", pr=True), ""),
        ("leading-blanks", comment("   /fs-fix x", "wendy", pr=True), "fix"),
        ("needs-info-member", comment("here are the logs", "rita", ISSUE_LABELS='["needs-info"]'), "triage"),
        ("needs-info-stranger", comment("me too", "stranger", ISSUE_LABELS='["needs-info"]', COMMENT_ASSOCIATION="NONE"), ""),
        ("needs-info-issue-author", comment("logs", "author", ISSUE_LABELS='["needs-info"]', COMMENT_ASSOCIATION="NONE"), "triage"),
        ("needs-info-feature", comment("logs", "rita", ISSUE_LABELS='["needs-info", "feature"]'), ""),
        ("plain-comment", comment("nice work", "wendy"), ""),
    ],
)
def test_route_issue_comment(route, vid: str, env: dict[str, str], stage: str) -> None:
    assert route("issue_comment", **env) == stage


@pytest.mark.parametrize(
    ("vid", "event", "env", "stage"),
    [
        ("issue-opened-triager", "issues", {"ACTION": "opened", "SENDER": "tom"}, "triage"),
        ("issue-edited-reader", "issues", {"ACTION": "edited", "SENDER": "rita"}, ""),
        ("label-ready-for-triage", "issues", {"ACTION": "labeled", "LABEL": "ready-for-triage", "SENDER": "stranger"}, "triage"),
        ("label-ready-to-code-writer", "issues", {"ACTION": "labeled", "LABEL": "ready-to-code", "SENDER": "wendy"}, "code"),
        ("label-ready-to-code-bot", "issues", {"ACTION": "labeled", "LABEL": "ready-to-code", "SENDER": "x[bot]", "SENDER_TYPE": "Bot"}, "code"),
        ("label-ready-to-code-reader", "issues", {"ACTION": "labeled", "LABEL": "ready-to-code", "SENDER": "rita"}, ""),
        ("pr-opened-triager", "pull_request_target", {"ACTION": "opened", "PR_AUTHOR": "tom", "IS_PR": "true"}, "review"),
        ("pr-sync-bot", "pull_request_target", {"ACTION": "synchronize", "PR_AUTHOR": "dep[bot]", "PR_AUTHOR_TYPE": "Bot", "IS_PR": "true"}, "review"),
        ("pr-opened-reader", "pull_request_target", {"ACTION": "opened", "PR_AUTHOR": "rita", "IS_PR": "true"}, ""),
        ("pr-labeled-ready", "pull_request_target", {"ACTION": "labeled", "LABEL": "ready-for-review", "IS_PR": "true"}, "review"),
        ("pr-closed-by-triager", "pull_request_target", {"ACTION": "closed", "SENDER": "tom", "IS_PR": "true"}, "retro"),
        ("pr-closed-by-app", "pull_request_target", {"ACTION": "closed", "SENDER": "x[bot]", "SENDER_TYPE": "Bot", "IS_PR": "true"}, "retro"),
        ("pr-closed-by-its-reader-author", "pull_request_target", {"ACTION": "closed", "SENDER": "rita", "IS_PR": "true"}, ""),
        ("pr-closed-by-stranger", "pull_request_target", {"ACTION": "closed", "SENDER": "stranger", "IS_PR": "true"}, ""),
        ("pr-unlabeled", "pull_request_target", {"ACTION": "unlabeled", "LABEL": "ready-for-review", "IS_PR": "true"}, ""),
    ],
)
def test_route_item_events(route, vid: str, event: str, env: dict[str, str], stage: str) -> None:
    assert route(event, **env) == stage


def review(**env: str) -> dict[str, str]:
    return {"ACTION": "submitted", "IS_PR": "true", "REVIEW_STATE": "changes_requested", "REVIEW_AUTHOR": "org-review[bot]",
            "PR_HEAD_REPO": "org/repo", "PR_AUTHOR": "coder[bot]", "PR_AUTHOR_TYPE": "Bot", "ISSUE_LABELS": "null",
            "PR_LABELS": "[]", **env}


@pytest.mark.parametrize(
    ("vid", "env", "stage"),
    [
        ("bot-pr", review(), "fix"),
        ("writer-with-fullsend-fix", review(PR_AUTHOR="wendy", PR_AUTHOR_TYPE="User", PR_LABELS='["fullsend-fix"]'), "fix"),
        ("writer-without-label", review(PR_AUTHOR="wendy", PR_AUTHOR_TYPE="User"), ""),
        ("no-fix-label", review(PR_LABELS='["fullsend-no-fix"]'), ""),
        ("fork-head", review(PR_HEAD_REPO="fork/repo"), ""),
        ("approved", review(REVIEW_STATE="approved"), ""),
        ("other-reviewer", review(REVIEW_AUTHOR="coderabbitai[bot]"), ""),
    ],
)
def test_route_review_submitted(route, vid: str, env: dict[str, str], stage: str) -> None:
    assert route("pull_request_review", **env) == stage


def test_example_harness_is_lint_clean() -> None:
    from fullsend.app.commands.lint import lint_harness_file
    assert lint_harness_file(EXAMPLES / "harness" / "review.yaml") == []
