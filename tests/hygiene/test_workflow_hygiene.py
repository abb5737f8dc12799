"""Issue 8, workflow hygiene: the shipped workflows and ``action.yml`` pass zizmor and GitHub's
schemas (check-jsonschema's vendored ``github-workflows`` / ``github-actions``), offline, with no
findings; and the rules zizmor's default persona does not enforce are checked here directly:
actions pinned by full commit SHA with a version comment, ``permissions: {}`` at the top and
permissions on every job, ``persist-credentials: false`` on every checkout, ``timeout-minutes``
on every job that runs steps.

The linters come from PyPI through the hash-pinned ``requirements-lint.txt`` and live in their own
venv ``.venv-lint`` (``.ci/run`` makes it), because their dependencies may conflict with the test
dependencies.  When the venv is missing the tests FAIL and say how to make it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.support.tools import missing_tool

REPO_ROOT = Path(__file__).resolve().parents[2]
LINT_BIN = Path(os.environ.get("FULLSEND_LINT_VENV", REPO_ROOT / ".venv-lint")) / "bin"
MAKE_VENV = (
    "python3 -m venv .venv-lint && .venv-lint/bin/pip install --require-hashes "
    "-r requirements-lint.txt   (.ci/run does this)"
)
#: ``uses: owner/repo[/path]@<40 hex> # v1.2.3`` (a comment naming the version the SHA is).
PINNED_USES = re.compile(r"^\s*-?\s*uses:\s*[\w.-]+/[\w./-]+@[0-9a-f]{40}\s+#\s*v?\d[\w.+-]*\s*$")
USES_LINE = re.compile(r"^\s*-?\s*uses:\s*(\S+)")
#: actionlint's configuration: the one rule it silences, and why (docs/contributing.md).
ACTIONLINT_CONFIG = REPO_ROOT / ".github" / "actionlint.yaml"
CACHE_RULE_MESSAGE = "has no explicit cache access limit for low-trust trigger"


def workflow_files() -> list[Path]:
    """Every workflow this repository ships or runs: ``.github/workflows/*.yml`` and
    ``examples/*.yml`` (whatever exist when the tests run)."""
    found = sorted((REPO_ROOT / ".github" / "workflows").glob("*.y*ml")) + sorted(
        (REPO_ROOT / "examples").glob("*.y*ml")
    )
    return [p for p in found if p.suffix in (".yml", ".yaml")]


def _tool(name: str) -> Path:
    path = LINT_BIN / name
    if not path.exists():
        missing_tool(f"{name} (expected at {path})", MAKE_VENV)
    return path


def _run(argv: list[str | Path]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN", "ZIZMOR_GITHUB_TOKEN")}
    env["ZIZMOR_OFFLINE"] = "true"
    return subprocess.run([str(a) for a in argv], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)


def _load(path: Path) -> dict:
    doc = yaml.safe_load(path.read_text())
    assert isinstance(doc, dict), f"{path.name}: not a YAML mapping"
    return doc


def _rel(path: Path) -> str:
    return str(path.relative_to(REPO_ROOT))


def actionlint(root: Path, files: list[Path]) -> subprocess.CompletedProcess[str]:
    """actionlint (``.venv-lint``) on ``files``, run from ``root`` (where ``./`` actions and called
    workflows resolve: actionlint takes a folder for a project only when it is a git repository, so
    one is made there when missing), with this repository's ``.github/actionlint.yaml``; shellcheck
    and pyflakes off, so the result does not depend on the host."""
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q", str(root)], check=True, capture_output=True, timeout=30)
    argv = [
        _tool("actionlint"),
        "-no-color",
        "-shellcheck=",
        "-pyflakes=",
        "-config-file",
        ACTIONLINT_CONFIG,
        *(str(f.relative_to(root)) for f in files),
    ]
    env = {k: v for k, v in os.environ.items() if k not in ("GH_TOKEN", "GITHUB_TOKEN")}
    return subprocess.run([str(a) for a in argv], cwd=root, env=env, capture_output=True, text=True, timeout=120)


def test_actionlint_finds_nothing_in_the_workflows_this_repository_runs():
    proc = actionlint(REPO_ROOT, sorted((REPO_ROOT / ".github" / "workflows").glob("*.yml")))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_finds_nothing_in_the_examples_installed_as_an_adopter_copies_them(tmp_path):
    """examples/fullsend.yml calls ./.github/workflows/reusable-dispatch.yml, which runs ``./``:
    the layout tools/act/workdir.sh makes."""
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    for name in ("fullsend.yml", "reusable-dispatch.yml"):
        (tmp_path / ".github" / "workflows" / name).write_text((REPO_ROOT / "examples" / name).read_text())
    for name in ("action.yml", "Dockerfile"):
        (tmp_path / name).write_text((REPO_ROOT / name).read_text())
    proc = actionlint(tmp_path, sorted((tmp_path / ".github" / "workflows").glob("*.yml")))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_is_live(tmp_path):
    """An input or output action.yml does not declare is refused: the check can fail (it found
    Route's outputs in dispatch.yml before action.yml declared them)."""
    for name in ("action.yml", "Dockerfile"):
        (tmp_path / name).write_text((REPO_ROOT / name).read_text())
    bad = tmp_path / ".github" / "workflows" / "bad.yml"
    bad.parent.mkdir(parents=True)
    bad.write_text(
        "on: push\npermissions: {}\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - id: s\n        uses: ./\n        with:\n          no_such_input: x\n"
        "      - run: echo ${{ steps.s.outputs.no_such_output }}\n"
    )
    proc = actionlint(tmp_path, [bad])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert 'input "no_such_input" is not defined' in proc.stdout and '"no_such_output" is not defined' in proc.stdout


def test_actionlint_config_silences_only_the_cache_mode_rule_and_no_workflow_sets_cache_mode(tmp_path):
    """The shim leaves ``cache-mode`` out (act's schema refuses it; docs/contributing.md "Workflow
    linters"), so actionlint's cache-call-unrestricted is silenced, and nothing else is: without
    the config the same shim is reported for exactly that rule."""
    config = yaml.safe_load(ACTIONLINT_CONFIG.read_text())
    assert config == {"paths": {".github/workflows/*.{yml,yaml}": {"ignore": [CACHE_RULE_MESSAGE]}}}
    for path in workflow_files():
        assert "cache-mode" not in path.read_text(), path
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    for name in ("fullsend.yml", "reusable-dispatch.yml"):
        (tmp_path / ".github" / "workflows" / name).write_text((REPO_ROOT / "examples" / name).read_text())
    for name in ("action.yml", "Dockerfile"):
        (tmp_path / name).write_text((REPO_ROOT / name).read_text())
    argv = [_tool("actionlint"), "-no-color", "-shellcheck=", "-pyflakes=", ".github/workflows/fullsend.yml"]
    proc = subprocess.run([str(a) for a in argv], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    findings = [line for line in proc.stdout.splitlines() if re.match(r"^\.github/workflows/\S+:\d+:\d+: ", line)]
    assert len(findings) == 1 and CACHE_RULE_MESSAGE in findings[0], proc.stdout + proc.stderr
    assert findings[0].endswith("[cache-call-unrestricted]"), findings[0]


def test_there_are_workflows_to_check():
    assert (REPO_ROOT / ".github" / "workflows" / "ci.yml") in workflow_files()


def test_zizmor_finds_nothing_offline():
    targets = [_rel(p) for p in workflow_files()] + ["action.yml"]
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
    for target in targets:  # each input was really audited, not skipped as unparseable
        assert f"completed {target}" in proc.stderr, proc.stderr


@pytest.mark.parametrize("path", workflow_files(), ids=_rel)
def test_workflow_matches_githubs_workflow_schema(path):
    proc = _run([_tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", _rel(path)])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok -- validation done" in proc.stdout


def test_action_yml_matches_githubs_action_schema():
    proc = _run([_tool("check-jsonschema"), "--builtin-schema", "vendor.github-actions", "action.yml"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok -- validation done" in proc.stdout


def test_the_schema_check_does_reject_a_broken_workflow(tmp_path):
    """The checker is live: a job without ``runs-on`` or ``uses`` is refused."""
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  build:\n    steps:\n      - run: echo hi\n")
    proc = _run([_tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(bad)])
    assert proc.returncode == 1, proc.stdout + proc.stderr


@pytest.mark.parametrize("path", workflow_files(), ids=_rel)
def test_every_action_is_pinned_by_full_sha_with_a_version_comment(path):
    for number, line in enumerate(path.read_text().splitlines(), 1):
        used = USES_LINE.match(line)
        if not used or used.group(1).startswith(("./", "docker://")):
            continue
        assert PINNED_USES.match(line), f"{_rel(path)}:{number}: pin by commit SHA with '# vX.Y.Z': {line.strip()}"


@pytest.mark.parametrize("path", workflow_files(), ids=_rel)
def test_permissions_are_empty_at_the_top_and_set_per_job(path):
    doc = _load(path)
    assert doc.get("permissions") == {}, f"{_rel(path)}: the top level needs 'permissions: {{}}'"
    for name, job in (doc.get("jobs") or {}).items():
        assert "permissions" in job, f"{_rel(path)}: job {name!r} must state its own (least) permissions"


@pytest.mark.parametrize("path", workflow_files(), ids=_rel)
def test_every_job_with_steps_has_a_timeout(path):
    for name, job in (_load(path).get("jobs") or {}).items():
        if "steps" in job:  # a job that calls a reusable workflow may not set one
            assert "timeout-minutes" in job, f"{_rel(path)}: job {name!r} needs timeout-minutes"


@pytest.mark.parametrize("path", workflow_files(), ids=_rel)
def test_every_checkout_persists_no_credentials(path):
    for name, job in (_load(path).get("jobs") or {}).items():
        for step in job.get("steps") or []:
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                assert (step.get("with") or {}).get("persist-credentials") is False, (
                    f"{_rel(path)}: job {name!r}: actions/checkout needs 'persist-credentials: false'"
                )


@pytest.mark.parametrize(
    "line, pinned",
    [
        ("      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2", True),
        ("    uses: org/repo/.github/workflows/x.yml@11bd71901bbe5b1630ceea73d27597364c9af683  # v1", True),
        ("      - uses: actions/checkout@v4", False),
        ("      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683", False),
        ("      - uses: actions/checkout@11bd719 # v4.2.2", False),
    ],
)
def test_the_pin_rule_tells_pinned_from_unpinned(line, pinned):
    assert bool(PINNED_USES.match(line)) is pinned
