"""Issue 15: the README's test command passes on a fresh machine, and fails under CI without the tools.

One fresh ``git clone`` of this repository (its committed ``HEAD``) in a temporary directory, set
up with the README's own commands (the venv, ``pip install --require-hashes`` of the two locks,
``pip install --no-deps -e .``; the network is used only by pip, which may use the machine's pip
cache).  This proves the install, not the suite (which runs once, in the caller): the README's
test command runs on a smoke subset, ``SMOKE`` (one small file per test tier and the files whose
tests need a tool outside the locks), twice, with the external tools hidden from ``PATH`` (a
directory of links to every other program) and empty tool caches:

- with ``CI`` unset it exits 0, and each tool tier reports its skip on one line naming the tool
  and the command that installs it;
- with ``CI=true`` (on the files of those tests) every one of them fails instead of skipping.

The set-up takes a minute or two, so it is in the full tier; ``test_the_smoke_subset_covers_every_tier``
keeps ``SMOKE`` in step with ``tests/`` in the default tier.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.tools import missing_tool

REPO_ROOT = Path(__file__).resolve().parents[1]
THIS_TEST = "tests/test_fresh_clone.py"
#: The programs the tool tiers need and a fresh machine lacks (jq: no test needs it since fullsend route).
HIDDEN = frozenset(
    {
        "podman",
        "runc",
        "crun",
        "debootstrap",
        "docker",
        "act",
        "zizmor",
        "check-jsonschema",
        "claude",
        "pi",
        "codex",
        "jq",
    }
)
SETUP_TIMEOUT_S = 900
TIER_TIMEOUT_S = 600
#: One small file per tier (the first directory under tests/), plus every file whose tests skip when a
#: tool outside the Python locks is missing (zizmor, check-jsonschema, the agent CLIs).
SMOKE = (
    "tests/test_tier_times.py",
    "tests/act/test_act_setup.py",
    "tests/adapters/test_secrets.py",
    "tests/adapters/runtimes/real/test_real_versions.py",
    "tests/app/test_env_facts.py",
    "tests/cli/test_run_help.py",
    "tests/cli/test_examples.py",
    "tests/container/test_runner_commands.py",
    "tests/core/receipt/test_left_over.py",
    "tests/docs/test_glossary.py",
    "tests/explain/test_explain_comments.py",
    "tests/faults/test_sim_fault_modes.py",
    "tests/hygiene/test_workflow_hygiene.py",
    "tests/hygiene/test_init_workflows.py",
    "tests/property/test_receipt_promise_examples.py",
    "tests/release/test_release_commit.py",
    "tests/simulator/test_openapi_trim.py",
)
SKIP_RULE = "which is not installed here; install it with: "  # tests/support/tools.py
CI_RULE = "CI=true: a missing tool fails instead of skipping"
#: Environment a developer's shell would not carry into a fresh checkout.
DROPPED = (
    "CI",
    "GITHUB_",
    "INPUT_",
    "ACTIONS_",
    "RUNNER_",
    "HYPOTHESIS_PROFILE",
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "PODMAN_RUNTIME",
    "DOCKER_HOST",
    "FULLSEND_",
)


def readme_test_command() -> tuple[list[str], str]:
    """The README's "Run the tests" line split at ``&&``: (the set-up commands, the test command)."""
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    (line,) = [
        line
        for line in readme.splitlines()
        if line.startswith("python3 -m venv .venv && ") and "requirements-test.txt" in line
    ]
    parts = [part.strip() for part in line.split("&&")]
    return parts[:-1], parts[-1]


@dataclass(frozen=True)
class Clone:
    """The set-up clone: its directory, the environment of a fresh machine, and the test command."""

    root: Path
    env: dict[str, str]
    test_command: str


@dataclass(frozen=True)
class Outcome:
    """One pytest run in the clone: exit code, output, and per test ``(file::name)`` its result."""

    exit_code: int
    output: str
    results: dict[str, tuple[str, str]]  # test id → (passed/skipped/failed, message)

    def with_result(self, result: str, containing: str = "") -> dict[str, str]:
        return {k: m for k, (r, m) in self.results.items() if r == result and containing in m}


def _tool_free_path(directory: Path) -> str:
    """A directory of links to every program on ``PATH`` except ``HIDDEN``; returns it as ``PATH``."""
    directory.mkdir()
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for entry in sorted(os.listdir(folder)):
            target, link = Path(folder) / entry, directory / entry
            if entry in HIDDEN or os.path.lexists(link) or not (target.is_file() and os.access(target, os.X_OK)):
                continue
            link.symlink_to(target)
    return str(directory)


def _results(junit: Path) -> dict[str, tuple[str, str]]:
    """``file::name`` → (result, message) from pytest's JUnit XML."""
    found: dict[str, tuple[str, str]] = {}
    for case in ElementTree.parse(junit).iter("testcase"):
        test_id = f"{case.get('classname', '')}::{case.get('name', '')}"
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("skipped", "failure", "error"):
                outcome = "skipped" if child.tag == "skipped" else "failed"
                message = (child.get("message") or "") + "\n" + (child.text or "")
        found[test_id] = (outcome, message)
    return found


def _test_file(root: Path, classname: str) -> str:
    """The file of a JUnit ``classname`` (``tests.<folder>.test_<name>``, or with ``.<TestClass>`` after it)."""
    parts = classname.split(".")
    for end in range(len(parts), 0, -1):
        candidate = "/".join(parts[:end]) + ".py"
        if (root / candidate).is_file():
            return candidate
    raise AssertionError(f"no test file for {classname}")


def run_tier(clone: Clone, name: str, *files: str, ci: bool = False) -> Outcome:
    """The README's test command in the clone, on ``files`` (its own selection of tiers kept)."""
    junit = clone.root.parent / f"{name}.xml"
    command = f"{clone.test_command} -p no:cacheprovider --junitxml={junit} " + " ".join(files)
    env = {**clone.env, **({"CI": "true"} if ci else {})}
    proc = subprocess.run(
        ["bash", "-c", command], cwd=clone.root, env=env, capture_output=True, text=True, timeout=TIER_TIMEOUT_S
    )
    return Outcome(proc.returncode, proc.stdout + proc.stderr, _results(junit) if junit.exists() else {})


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Clone:
    """One fresh clone set up with the README's commands, on a PATH without the tools."""
    top = tmp_path_factory.mktemp("fresh")
    root = top / "steer-action"
    if shutil.which("git") is None:
        missing_tool("git (to clone the repository)", "apt-get install -y git")
    cloned = subprocess.run(
        ["git", "clone", "--quiet", str(REPO_ROOT), str(root)], capture_output=True, text=True, timeout=300
    )
    assert cloned.returncode == 0, cloned.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith(DROPPED)}
    env.update(
        {
            "PATH": _tool_free_path(top / "bin"),
            "FULLSEND_CACHE_DIR": str(top / "cache"),
            "FULLSEND_CLI_CACHE": str(top / "clis"),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        }
    )
    setup, test_command = readme_test_command()
    assert test_command == ".venv/bin/python -m pytest"
    proc = subprocess.run(
        ["bash", "-c", " && ".join(setup)], cwd=root, env=env, capture_output=True, text=True, timeout=SETUP_TIMEOUT_S
    )
    assert proc.returncode == 0, f"the README's set-up failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return Clone(root, env, test_command)


@pytest.fixture(scope="module")
def fast_tier(clone: Clone) -> Outcome:
    return run_tier(clone, "smoke", *SMOKE)


def test_the_smoke_subset_covers_every_tier() -> None:
    tests = REPO_ROOT / "tests"
    tiers = {p.relative_to(tests).parts[0] for p in tests.rglob("test_*.py") if len(p.relative_to(tests).parts) > 1}
    covered = {Path(f).relative_to("tests").parts[0] for f in SMOKE if len(Path(f).relative_to("tests").parts) > 1}
    assert tiers <= covered, sorted(tiers - covered)
    assert all((REPO_ROOT / f).is_file() for f in SMOKE), [f for f in SMOKE if not (REPO_ROOT / f).is_file()]


#: Both full-tier tests share the module's clone: one xdist group keeps them on one worker, so
#: the clone and its install are made once.
ONE_CLONE = pytest.mark.xdist_group("fresh-clone")


@pytest.mark.slow
@pytest.mark.full
@ONE_CLONE
@pytest.mark.timeout(1800)
def test_the_readme_command_passes_and_the_tool_tiers_say_what_to_install(fast_tier: Outcome) -> None:
    assert fast_tier.exit_code == 0, fast_tier.output[-6000:]
    skipped = fast_tier.with_result("skipped", SKIP_RULE)
    assert skipped, "no tool tier reported a skip"
    reasons = "\n".join(skipped.values())
    for tool in ("zizmor",):  # tests/hygiene is in the fast tier
        assert tool in reasons, reasons
    summary = [line for line in fast_tier.output.splitlines() if line.startswith("SKIPPED") and SKIP_RULE in line]
    assert summary and all(len(line.split(SKIP_RULE)[1].strip()) > 0 for line in summary)


@pytest.mark.slow
@pytest.mark.full
@ONE_CLONE
@pytest.mark.timeout(1800)
def test_under_ci_the_same_missing_tools_fail_instead(clone: Clone, fast_tier: Outcome) -> None:
    skipped = fast_tier.with_result("skipped", SKIP_RULE)
    files = sorted({_test_file(clone.root, test_id.split("::")[0]) for test_id in skipped})
    under_ci = run_tier(clone, "ci", *files, ci=True)
    assert under_ci.exit_code != 0, under_ci.output[-6000:]
    failed = under_ci.with_result("failed", CI_RULE)
    assert set(skipped) <= set(failed), sorted(set(skipped) - set(failed))
    assert not under_ci.with_result("skipped", SKIP_RULE)
