"""Issue 21: the workflows ``fullsend init`` writes pass zizmor (offline, no findings) and GitHub's
workflow schema, and follow the pin, permission, timeout and checkout rules of
``test_workflow_hygiene.py``, for each role-token mode, queue and runtime."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from fullsend.app.commands.init import InitPlan, parse_stages, render_files, write_files
from tests.hygiene.test_workflow_hygiene import PINNED_USES, USES_LINE, _run, _tool, actionlint

REF = "0123456789abcdef0123456789abcdef01234567"
#: A pin of steer-action at a commit no release tag names: init says so instead of a version.
UNRELEASED_PIN = re.compile(
    r"^\s*-?\s*uses:\s*fullsend-ai/steer-action[\w./-]*@[0-9a-f]{40} # unreleased commit \(written by fullsend [\w.+-]+\)$"
)
PLANS = {
    "app, all stages": InitPlan(parse_stages("all"), ref=REF, dispatch="self-contained"),
    "mint, queue max, codex": InitPlan(
        ("review", "fix"), runtime="codex", ref=REF, role_token="mint", queue="max", dispatch="self-contained"
    ),
    "hosted, app, all stages": InitPlan(parse_stages("all"), ref=REF),
    "hosted, mint, codex": InitPlan(("review", "fix"), runtime="codex", ref=REF, role_token="mint"),
}


@pytest.fixture(params=list(PLANS), scope="module")
def generated(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("init")
    write_files(root, render_files(PLANS[request.param]))
    return root


def _workflows(root: Path) -> list[Path]:
    return sorted((root / ".github" / "workflows").glob("*.yml"))


def test_zizmor_finds_nothing_in_what_init_writes(generated: Path) -> None:
    targets = [str(p) for p in _workflows(generated)]
    proc = _run(
        [
            _tool("zizmor"),
            "--offline",
            "--no-progress",
            "--no-config",
            "--format",
            "json",
            "--strict-collection",
            *targets,
        ]
    )
    assert proc.returncode == 0, f"zizmor exit {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    assert json.loads(proc.stdout) == []
    assert all(f"completed {t}" in proc.stderr for t in targets), proc.stderr


def test_actionlint_finds_nothing_in_what_init_writes(generated: Path) -> None:
    proc = actionlint(generated, _workflows(generated))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_what_init_writes_matches_githubs_workflow_schema(generated: Path) -> None:
    for path in _workflows(generated):
        proc = _run([_tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(path)])
        assert proc.returncode == 0 and "ok -- validation done" in proc.stdout, proc.stdout + proc.stderr


def test_what_init_writes_pins_by_sha_sets_permissions_timeouts_and_no_persisted_credentials(generated: Path) -> None:
    for path in _workflows(generated):
        for line in path.read_text().splitlines():
            used = USES_LINE.match(line)
            if used and not used.group(1).startswith("./"):
                assert PINNED_USES.match(line) or UNRELEASED_PIN.match(line), line
        doc = yaml.safe_load(path.read_text())
        assert doc["permissions"] == {}
        for name, job in doc["jobs"].items():
            assert "permissions" in job, name
            if "steps" in job:
                assert "timeout-minutes" in job, name
                for step in job["steps"]:
                    if str(step.get("uses", "")).startswith("actions/checkout@"):
                        assert step["with"]["persist-credentials"] is False
