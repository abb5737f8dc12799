"""``fullsend route`` end to end: the event file and environment a Route job step gets, the role
read over HTTP from the simulator (``fullsend simulator serve``'s collaborator permission
endpoint on 127.0.0.1), the two log lines and the step outputs in ``GITHUB_OUTPUT``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fullsend.app.commands.simulator import Served, start_simulator
from fullsend.simulator.fixtures import JOB_TOKEN
from fullsend.simulator.scenario import Scenario
from tests.support.route_events import payload

REPO_ROOT = Path(__file__).resolve().parents[2]
COLLABORATORS = {"tom": "triage", "wendy": "write", "rita": "read"}


@pytest.fixture
def served() -> Iterator[tuple[Served, list[str]]]:
    said: list[str] = []
    served = start_simulator(Scenario(collaborators=COLLABORATORS), 0, said.append)
    try:
        yield served, said
    finally:
        served.sim.stop()


def read_outputs(path: Path) -> dict[str, str]:
    """``GITHUB_OUTPUT`` in the delimiter syntax (``name<<DELIM`` … ``DELIM``), as the runner reads it."""
    lines, outputs = path.read_text(encoding="utf-8").split("\n"), {}
    at = 0
    while at < len(lines) and lines[at]:
        name, delimiter = lines[at].split("<<", 1)
        end = lines.index(delimiter, at + 1)
        outputs[name] = "\n".join(lines[at + 1 : end])
        at = end + 1
    return outputs


def route(
    tmp_path: Path, served: Served | None, event: str, data: dict, *args: str, argv: list[str] | None = None, **env: str
) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    event_path, output = tmp_path / "event.json", tmp_path / "output"
    event_path.write_text(json.dumps(data), encoding="utf-8")
    output.write_text("", encoding="utf-8")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "GH_", "RUNNER_"))}
    full = {
        **base,
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": event,
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REPOSITORY": "org/repo",
        "GITHUB_OUTPUT": str(output),
        "INPUT_GITHUB_TOKEN": JOB_TOKEN,
        **({"GITHUB_API_URL": served.sim.api_url} if served else {}),
        **env,
    }
    proc = subprocess.run(
        argv or [sys.executable, "-m", "fullsend", "route", *args],
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    return proc, read_outputs(output) if output.exists() else {}


def comment(body: str, who: str, pr: bool = True, **env: str) -> dict:
    return payload(
        "issue_comment", COMMENT_BODY=body, COMMENT_AUTHOR=who, IS_PR="true" if pr else "false", ACTION="created", **env
    )


def test_a_command_by_a_user_with_the_role_selects_the_stage(tmp_path, served) -> None:
    sim, said = served
    proc, outputs = route(tmp_path, sim, "issue_comment", comment("/fs-review please re-check", "tom"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "Route: event issue_comment/created -> stage 'review'",
        "Route: /fs-review on a pull request by @tom (role triage) selects review [route-command]",
    ]
    assert outputs == {
        "stage": "review",
        "rule": "route-command",
        "reason": "/fs-review on a pull request by @tom (role triage) selects review [route-command]",
        "head_ref": "",
    }
    assert said == ["Route: tom has the role 'triage' on org/repo"]  # the one role read, over HTTP


def test_a_role_below_the_floor_selects_nothing_and_still_succeeds(tmp_path, served) -> None:
    sim, _ = served
    proc, outputs = route(tmp_path, sim, "issue_comment", comment("/fs-fix now", "tom"))
    assert proc.returncode == 0, proc.stderr
    assert outputs["stage"] == "" and outputs["rule"] == "route-role-low"
    assert "Route: event issue_comment/created -> stage 'none'" in proc.stdout.splitlines()


def test_a_user_without_any_role_is_refused(tmp_path, served) -> None:
    sim, said = served
    proc, outputs = route(tmp_path, sim, "issues", payload("issues", ACTION="opened", SENDER="stranger"))
    assert (proc.returncode, outputs["stage"], outputs["rule"]) == (0, "", "route-role-low")
    assert said == ["Route: stranger has the role 'none' on org/repo"]


def test_an_app_decision_reads_no_role(tmp_path, served) -> None:
    sim, said = served
    data = payload(
        "pull_request_target",
        ACTION="opened",
        IS_PR="true",
        PR_AUTHOR="coder[bot]",
        PR_AUTHOR_TYPE="Bot",
        PR_HEAD_REPO="org/repo",
    )
    proc, outputs = route(tmp_path, sim, "pull_request_target", data)
    assert (proc.returncode, outputs["stage"], outputs["rule"]) == (0, "review", "route-item-event")
    assert said == []


def test_a_role_that_cannot_be_read_fails_closed(tmp_path, served) -> None:
    sim, _ = served
    proc, outputs = route(
        tmp_path, sim, "issue_comment", comment("/fs-review", "tom"), INPUT_GITHUB_TOKEN="not-a-token"
    )
    assert proc.returncode == 0, proc.stderr
    assert (outputs["stage"], outputs["rule"]) == ("", "route-role-unreadable")
    assert "401" in outputs["reason"] and "not-a-token" not in proc.stdout + outputs["reason"]


def test_the_token_falls_back_to_github_token_then_gh_token(tmp_path, served) -> None:
    sim, _ = served
    proc, outputs = route(
        tmp_path, sim, "issue_comment", comment("/fs-review", "tom"), INPUT_GITHUB_TOKEN="", GH_TOKEN=JOB_TOKEN
    )
    assert (proc.returncode, outputs["stage"]) == (0, "review"), proc.stderr


def test_multi_line_values_cannot_collide_with_their_delimiter(tmp_path, served) -> None:
    sim, _ = served
    proc, _ = route(tmp_path, sim, "issue_comment", comment("/fs-review", "tom"))
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "output").read_text(encoding="utf-8")
    delimiters = re.findall(r"^\w+<<(\S+)$", text, re.M)
    assert len(delimiters) == 4 and len(set(delimiters)) == 4
    assert all(re.fullmatch(r"ghadelimiter_[0-9a-f]{32}", d) for d in delimiters)


def test_the_image_entrypoint_runs_route_for_the_actions_command_input(tmp_path, served) -> None:
    sim, _ = served
    proc, outputs = route(
        tmp_path,
        sim,
        "issue_comment",
        comment("/fs-review", "tom"),
        argv=[sys.executable, str(REPO_ROOT / "entrypoint.py")],
        INPUT_COMMAND="route",
    )
    assert (proc.returncode, outputs["stage"]) == (0, "review"), proc.stderr + proc.stdout


def test_an_unknown_command_input_is_refused_by_the_entrypoint(tmp_path) -> None:
    proc, outputs = route(
        tmp_path, None, "issues", {}, argv=[sys.executable, str(REPO_ROOT / "entrypoint.py")], INPUT_COMMAND="init"
    )
    assert proc.returncode == 2 and outputs == {}
    assert (
        proc.stdout.startswith("::error title=Invalid input::input 'command': 'init'") and "run, route" in proc.stdout
    )


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"GITHUB_EVENT_NAME": ""}, "GITHUB_EVENT_NAME not set"),
        ({"GITHUB_REPOSITORY": "repo"}, "GITHUB_REPOSITORY not set"),
        ({"GITHUB_EVENT_PATH": "/nonexistent/event.json"}, "GITHUB_EVENT_PATH /nonexistent/event.json: cannot be read"),
        ({"GITHUB_API_URL": "ftp://x"}, "GITHUB_API_URL 'ftp://x' is not an http(s) URL"),
    ],
)
def test_an_unreadable_environment_is_one_line_and_exit_2(tmp_path, env, says) -> None:
    proc, outputs = route(tmp_path, None, "issues", {}, **{"GITHUB_ACTIONS": "", **env})
    assert proc.returncode == 2 and proc.stdout == "" and outputs == {}
    assert proc.stderr.startswith("fullsend route: ") and says in proc.stderr and proc.stderr.count("\n") == 1


def test_an_event_file_that_is_not_an_object_is_refused(tmp_path) -> None:
    proc, _ = route(tmp_path, None, "issues", [], GITHUB_ACTIONS="")  # type: ignore[arg-type]
    assert proc.returncode == 2 and "not a JSON object" in proc.stderr


def test_outputs_that_cannot_be_written_fail_the_step(tmp_path, served) -> None:
    sim, _ = served
    proc, _ = route(
        tmp_path,
        sim,
        "issues",
        payload("issues", ACTION="labeled", LABEL="ready-for-triage"),
        GITHUB_OUTPUT=str(tmp_path / "missing" / "output"),
    )
    assert proc.returncode == 1
    assert "::error title=Route::GITHUB_OUTPUT" in proc.stdout and "cannot be written" in proc.stdout


def test_a_stage_the_repository_did_not_enable_selects_nothing_and_reads_no_role(tmp_path, served) -> None:
    """docs/rules.md#route-stage-off: the hosted dispatch workflow passes its ``stages`` input."""
    sim, said = served
    proc, outputs = route(tmp_path, sim, "issue_comment", comment("/fs-fix now", "wendy"), INPUT_STAGES="review")
    assert proc.returncode == 0, proc.stderr
    assert outputs["stage"] == "" and outputs["rule"] == "route-stage-off"
    assert proc.stdout.splitlines()[1] == (
        "Route: the event would select fix (route-command), which this repository has not enabled "
        "(stages: review); no stage [route-stage-off]"
    )
    assert said == []


def test_an_enabled_stage_is_decided_as_before(tmp_path, served) -> None:
    sim, said = served
    proc, outputs = route(
        tmp_path, sim, "issue_comment", comment("/fs-review please", "tom"), INPUT_STAGES="review,fix"
    )
    assert (proc.returncode, outputs["stage"], outputs["rule"]) == (0, "review", "route-command")
    assert said == ["Route: tom has the role 'triage' on org/repo"]


def test_a_role_below_the_floor_is_still_named_when_the_stage_is_enabled(tmp_path, served) -> None:
    sim, _ = served
    proc, outputs = route(tmp_path, sim, "issue_comment", comment("/fs-fix now", "rita"), INPUT_STAGES="fix")
    assert (proc.returncode, outputs["stage"], outputs["rule"]) == (0, "", "route-role-low")


def test_an_unknown_stage_in_the_input_fails_the_route_job(tmp_path) -> None:
    proc, outputs = route(tmp_path, None, "issues", {"action": "opened"}, GITHUB_ACTIONS="", INPUT_STAGES="reveiw")
    assert proc.returncode == 2 and outputs == {}
    assert proc.stderr.startswith("fullsend route: the Route step's input stages 'reveiw': unknown")


def test_the_trigger_phrase_and_the_allowed_lists_reach_the_decision(tmp_path, served) -> None:
    sim, said = served
    env = {"INPUT_TRIGGER_PHRASE": "@fullsend", "INPUT_ALLOWED_USERS": "tom, wendy"}
    proc, outputs = route(tmp_path, sim, "issue_comment", comment("@fullsend review the tests", "tom"), **env)
    assert (proc.returncode, outputs["stage"], outputs["rule"]) == (0, "review", "route-command"), proc.stderr
    assert said == ["Route: tom has the role 'triage' on org/repo"]
    proc, outputs = route(tmp_path, sim, "issue_comment", comment("@fullsend review", "rita"), **env)
    assert (outputs["stage"], outputs["rule"]) == ("", "route-user-not-allowed")
    assert len(said) == 1  # rita's role was never read


def test_a_bad_allowed_bots_input_fails_the_route_job(tmp_path) -> None:
    proc, outputs = route(tmp_path, None, "issues", {"action": "opened"}, GITHUB_ACTIONS="", INPUT_ALLOWED_BOTS="coder")
    assert proc.returncode == 2 and outputs == {} and "allowed_bots: give App logins" in proc.stderr


# --- issue 42: a fix's head branch, and the review App's rounds ---------------------------------


def _changes_requested(**env: str) -> dict:
    return payload(
        "pull_request_review",
        ACTION="submitted",
        IS_PR="true",
        PR_AUTHOR="coder[bot]",
        PR_AUTHOR_TYPE="Bot",
        PR_HEAD_REPO="org/repo",
        REVIEW_STATE="changes_requested",
        REVIEW_AUTHOR="org-review[bot]",
        **env,
    )


@pytest.mark.parametrize(("earlier", "stage"), [(0, "fix"), (2, "fix"), (3, "")])
def test_a_review_starts_fix_for_max_fix_rounds_rounds_then_none(tmp_path, served, earlier: int, stage: str) -> None:
    sim, _ = served
    for _ in range(earlier + 1):  # the reviews before this one, and this one (GitHub lists it too)
        sim.sim.add_review(7, "org-review[bot]", "CHANGES_REQUESTED", body="Two findings.")
    sim.sim.add_review(7, "org-review[bot]", "COMMENTED", body="not a round")
    proc, outputs = route(tmp_path, sim, "pull_request_review", _changes_requested())
    assert proc.returncode == 0, proc.stderr
    assert outputs["stage"] == stage
    if stage:
        assert outputs["rule"] == "route-review-fix" and f"(round {earlier + 1} of 3)" in outputs["reason"]
        assert outputs["head_ref"] == "feature"  # read from GET …/pulls/7: this payload names no ref
    else:
        assert outputs["rule"] == "route-fix-rounds" and outputs["head_ref"] == ""
        assert "changes_requested review 4 on this pull request, and max_fix_rounds is 3" in outputs["reason"]


def test_max_fix_rounds_0_lets_no_review_start_a_fix(tmp_path, served) -> None:
    sim, _ = served
    sim.sim.add_review(7, "org-review[bot]", "CHANGES_REQUESTED", body="One finding.")
    proc, outputs = route(tmp_path, sim, "pull_request_review", _changes_requested(), INPUT_MAX_FIX_ROUNDS="0")
    assert (proc.returncode, outputs["stage"], outputs["rule"]) == (0, "", "route-fix-rounds")


def test_a_fix_command_outputs_the_head_branch_read_from_the_pull_request(tmp_path, served) -> None:
    sim, _ = served
    proc, outputs = route(tmp_path, sim, "issue_comment", comment("/fs-fix", "wendy"))
    assert proc.returncode == 0, proc.stderr
    assert (outputs["stage"], outputs["head_ref"]) == ("fix", "feature")


def test_a_fix_command_on_a_forks_pull_request_selects_nothing(tmp_path, served) -> None:
    sim, _ = served
    sim.sim.add_pull_request(8, "c" * 40, head={"ref": "feature", "sha": "c" * 40, "repo": {"full_name": "fork/repo"}})
    data = comment("/fs-fix", "wendy")
    data["issue"]["number"] = 8
    proc, outputs = route(tmp_path, sim, "issue_comment", data)
    assert (proc.returncode, outputs["stage"], outputs["rule"]) == (0, "", "route-fork-head")
    assert "the pull request's head is 'fork/repo', not org/repo: a fork is never fixed" in outputs["reason"]
