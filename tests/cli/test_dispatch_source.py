"""The hosted dispatch workflow and the self-contained example come from one template and cannot
drift (docs/adopting.md "The dispatch workflow"); ``fullsend init`` writes a caller of a few dozen
lines that passes only inputs and secrets the hosted workflow declares."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from fullsend import __version__
from fullsend.app.commands.init import (
    EXAMPLE_DISPATCH,
    HOSTED_DISPATCH,
    InitError,
    InitPlan,
    parse_stages,
    render_dispatch,
    render_files,
)
from fullsend.core.route.decision import STAGES
from tests.support.releases import init_env, release_server

REPO_ROOT = Path(__file__).resolve().parents[2]
REF = "0123456789abcdef0123456789abcdef01234567"
POLICY_INPUTS = (
    "stages",
    "trigger_phrase",
    "allowed_users",
    "allowed_bots",
    "label_triggers",
    "assignee_triggers",
    "review_app",
    "max_fix_rounds",
)
WIRE_NAMES = {"route": "Route", **{s: s.capitalize() for s in STAGES}}


def load_text(text: str) -> dict[str, Any]:
    data = yaml.safe_load(text)
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as a boolean
    return data


def shipped(rel: Path) -> dict[str, Any]:
    return load_text((REPO_ROOT / rel).read_text(encoding="utf-8"))


@pytest.mark.parametrize("rel", [HOSTED_DISPATCH, EXAMPLE_DISPATCH], ids=str)
def test_the_shipped_file_is_what_the_template_renders(rel: Path) -> None:
    assert (REPO_ROOT / rel).read_text(encoding="utf-8") == render_dispatch(rel), (
        f"{rel} differs from fullsend/templates/init/dispatch.yml.j2: run python tools/gen_dispatch.py"
    )


def test_the_generator_checks_without_writing() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO_ROOT / "tools" / "gen_dispatch.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO_ROOT,
    )
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stdout + proc.stderr


def test_both_hold_the_wire_job_names_and_the_same_stage_jobs() -> None:
    hosted, example = shipped(HOSTED_DISPATCH), shipped(EXAMPLE_DISPATCH)
    for flow in (hosted, example):
        assert {key: job["name"] for key, job in flow["jobs"].items()} == WIRE_NAMES
        assert flow["permissions"] == {} and "workflow_call" in flow["on"]
    for key in STAGES:
        mine, theirs = hosted["jobs"][key], example["jobs"][key]
        for field in ("name", "needs", "if", "concurrency", "runs-on", "timeout-minutes", "permissions"):
            assert mine[field] == theirs[field], (key, field)
        group = "pr" if key in ("review", "fix") else key  # Review and Fix share one group per pull request
        assert mine["concurrency"]["group"].startswith(f"fullsend-{group}-${{{{ github.repository }}}}-")


def test_the_hosted_route_step_passes_the_enabled_stages() -> None:
    route = shipped(HOSTED_DISPATCH)["jobs"]["route"]
    step = route["steps"][-1]
    assert step["id"] == "route" and step["with"] == {
        "command": "route",
        **{name: f"${{{{ inputs.{name} }}}}" for name in POLICY_INPUTS},
    }
    assert route["outputs"] == {
        "stage": "${{ steps.route.outputs.stage }}",
        "head_ref": "${{ steps.route.outputs.head_ref }}",
    }
    # The Route job runs the default (slim) image: the action itself, pinned at release to the
    # release commit whose action.yml names the slim image's digest; never .../full.
    assert step["uses"] == "./"


def test_the_hosted_stage_jobs_take_their_paths_runtime_and_role_token_from_inputs() -> None:
    flow = shipped(HOSTED_DISPATCH)
    inputs = flow["on"]["workflow_call"]["inputs"]
    assert set(inputs) == {
        *POLICY_INPUTS,
        "runtime",
        "role_token",
        "harness_dir",
        "prompts_dir",
    }
    for key in STAGES:
        steps = flow["jobs"][key]["steps"]
        token = next(s for s in steps if s.get("id") == "role-token")
        assert token["if"] == "inputs.role_token == 'app'"
        steer = next(s for s in steps if s.get("id") == "steer")
        assert steer["with"]["harness"] == f"${{{{ inputs.harness_dir }}}}/{key}.yaml"
        assert steer["with"]["prompt_file"] == f"${{{{ inputs.prompts_dir }}}}/{key}.md"
        assert steer["with"]["runtime"] == "${{ inputs.runtime }}"
        assert steer["with"]["role_token"] == "${{ steps.role-token.outputs.token }}"
        assert "inputs.role_token == 'mint'" in steer["with"]["mint_url"]


def _caller(plan: InitPlan) -> tuple[dict[str, Any], str]:
    files = dict(render_files(plan))
    assert Path(".github/workflows/fullsend-dispatch.yml") not in files
    text = files[Path(".github/workflows/fullsend.yml")]
    return load_text(text), text


@pytest.mark.parametrize(
    "plan",
    [
        InitPlan(("review",), ref=REF),
        InitPlan(parse_stages("all"), ref=REF),
        InitPlan(("review", "fix"), runtime="codex", ref=REF, role_token="mint"),
    ],
    ids=["review", "all", "codex-mint"],
)
def test_init_writes_a_caller_of_the_hosted_dispatch_pinned_to_the_ref(plan: InitPlan) -> None:
    shim, text = _caller(plan)
    hosted = shipped(HOSTED_DISPATCH)["on"]["workflow_call"]
    (job,) = shim["jobs"].values()
    assert list(shim["jobs"]) == ["dispatch"]
    assert job["uses"] == f"fullsend-ai/steer-action/.github/workflows/dispatch.yml@{REF}"
    assert f"dispatch.yml@{REF} # unreleased commit (written by fullsend {__version__})\n" in text
    assert job["with"]["stages"] == ",".join(plan.stages)
    assert set(job["with"]) <= set(hosted["inputs"]) and set(job["secrets"]) <= set(hosted["secrets"])
    assert job["with"].get("runtime", "claude") == plan.runtime
    assert job["with"].get("role_token", "app") == plan.role_token
    # the dispatch's jobs ask for id-token: write; a caller must grant at least what they ask for
    asked = {scope for key in plan.stages for scope in shipped(HOSTED_DISPATCH)["jobs"][key]["permissions"]}
    assert asked <= set(job["permissions"])


def test_init_in_an_empty_repository_writes_under_80_lines_of_workflow(tmp_path: Path) -> None:
    server, commits = release_server(tmp_path / "releases")
    repo = tmp_path / "repo"
    repo.mkdir()
    made = subprocess.run(
        [sys.executable, "-m", "fullsend", "init", "--stages", "all", "--ref", commits[0]],
        cwd=repo,
        env=init_env(server),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    workflows = sorted((repo / ".github" / "workflows").iterdir())
    assert [p.name for p in workflows] == ["fullsend.yml"]
    assert sum(len(p.read_text().splitlines()) for p in workflows) < 80
    assert (repo / ".fullsend" / "harness" / "fix.yaml").is_file()


def test_queue_max_needs_the_self_contained_dispatch() -> None:
    with pytest.raises(InitError, match="--queue max needs --dispatch self-contained"):
        render_files(InitPlan(("review",), ref=REF, queue="max"))
    assert render_files(InitPlan(("review",), ref=REF, queue="max", dispatch="self-contained"))
