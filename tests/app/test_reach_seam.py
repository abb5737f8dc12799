"""docs/rules.md#token-in-reach: receipts without per-uid isolation only for a deployment composed
in code, and only for its public job token on loopback; the action's own entries have no way to
get one (issue 44: no test seam inside the isolation check; issue 45's routes replay it end to end
in tests/app/test_isolation_routes.py)."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from fullsend.__main__ import main
from fullsend.app.action.confinement.children import reach_secrets
from fullsend.app.action.confinement.deployment import SHIPPED, Deployment
from fullsend.app.action.lifecycle import run_action
from fullsend.simulator.fixtures import JOB_TOKEN
from tests.support.sim_entry import simulated

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "fullsend"
SIM = Deployment(public_job_token=JOB_TOKEN)


@pytest.mark.parametrize(
    ("api_url", "token", "opens"),
    [
        ("http://127.0.0.1:8765", JOB_TOKEN, True),
        ("http://localhost:41234/api", JOB_TOKEN, True),
        ("http://[::1]:9000", JOB_TOKEN, True),
        ("https://api.github.com", JOB_TOKEN, False),  # a real API with the public token: no relaxing
        ("http://127.0.0.1:8765", "ghs_not-the-simulators-token-0001", False),  # loopback with another token
        ("http://127.0.0.1.example.com", JOB_TOKEN, False),
        ("", JOB_TOKEN, False),
    ],
)
def test_a_composed_deployment_relaxes_only_its_public_token_on_loopback(api_url, token, opens):
    assert SIM.public_token_run(api_url, token) is opens


def test_the_shipped_deployment_relaxes_nothing():
    assert (SHIPPED.child_uid, SHIPPED.public_job_token, SHIPPED.entry_module) == (None, "", "fullsend.__main__")
    assert not any(
        SHIPPED.public_token_run(url, token) for url in ("http://127.0.0.1:8765", "") for token in (JOB_TOKEN, "")
    )


def test_the_action_entries_run_the_shipped_deployment():
    """``main`` and ``run_action`` default to it; ``entrypoint.py`` and ``python -m fullsend`` pass
    nothing else; the re-execs of the shipped deployment run ``fullsend.__main__`` again."""
    for function in (main, run_action):
        assert inspect.signature(function).parameters["deployment"].default is SHIPPED
    for entry in (ROOT / "entrypoint.py", PKG / "__main__.py"):
        calls = [n for n in ast.walk(ast.parse(entry.read_text())) if isinstance(n, ast.Call)]
        mains = [c for c in calls if isinstance(c.func, ast.Name) and c.func.id == "main"]
        assert mains and all(k.arg != "deployment" for c in mains for k in c.keywords), entry
    assert f"sys.path.insert(0, {str(ROOT)!r})" in SHIPPED.reexec_argv()[-1]
    assert "from fullsend.__main__ import main; sys.exit(main(['run']))" in SHIPPED.reexec_argv()[-1]


def test_only_the_demo_composes_a_deployment_and_no_module_reads_a_test_hook():
    """No product module reads an environment entry that could relax the check, and the one module
    that composes a deployment of its own is ``fullsend demo``'s, which only ``fullsend demo`` imports."""
    composed, demo_importers, hooks = set(), set(), set()
    for path in sorted(PKG.rglob("*.py")):
        text, rel = path.read_text(), path.relative_to(ROOT).as_posix()
        if "FULLSEND_TEST_" in text:
            hooks.add(rel)
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Deployment":
                composed.add(rel)
            if isinstance(node, ast.ImportFrom) and node.module == "fullsend.app.commands.demo":
                demo_importers.add(rel)
    assert hooks == set()
    assert composed == {"fullsend/app/commands/demo.py", "fullsend/app/action/confinement/deployment.py"}
    assert demo_importers == {"fullsend/__main__.py"}


def test_the_old_test_hooks_give_the_real_entry_no_child_uid(tmp_path):
    """``FULLSEND_TEST_HOOKS``/``FULLSEND_TEST_CHILD_UID`` set, the action's code resolves the
    system's user (none on a host without ``fullsend-agent``), never the named uid."""
    code = (
        "from fullsend.adapters.confinement.isolation import resolve_child_user\n"
        "from fullsend.app.action.confinement.deployment import SHIPPED\n"
        "user, why = resolve_child_user(SHIPPED.child_uid)\n"
        "print(user.uid if user else 'none')\n"
    )
    env = {"PATH": "/usr/bin:/bin", "FULLSEND_TEST_HOOKS": "1", "FULLSEND_TEST_CHILD_UID": "61999"}
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() != "61999", done.stdout + done.stderr


def test_the_suites_entry_carries_its_deployment_through_the_reexecs():
    deployment = simulated({"SIM_ENTRY_CHILD_UID": "61900"})
    assert (deployment.child_uid, deployment.public_job_token) == (61900, JOB_TOKEN)
    assert "from tests.support.sim_entry import main" in deployment.reexec_argv()[-1]
    assert simulated({}).child_uid is None


def test_the_scan_looks_for_the_job_token_the_oidc_request_token_and_the_runtime_token():
    environ = {"ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc-b", "ACTIONS_RUNTIME_TOKEN": "rt-c"}
    assert reach_secrets("ghs_a", environ) == {
        "job token": "ghs_a",
        "OIDC request token": "oidc-b",
        "runtime token": "rt-c",
    }
    assert reach_secrets("ghs_a", {}) == {"job token": "ghs_a"}
