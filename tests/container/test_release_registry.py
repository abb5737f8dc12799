"""Issue 20 acceptance: the release, pushed to a real OCI registry, pulled by the digest the release
commit names, skips the queued run the way a runner runs it.

A real registry (Debian's ``docker-registry``) serves on 127.0.0.1 (tests/support/registry.py).
``tools/release/release.sh build --local`` builds the images for this machine's architecture and
pushes them there with podman; ``publish --local`` makes the release commit.  The image its
``action.yml`` names (``docker://<registry>/…@sha256:…``) is pulled by that digest, with nothing of
the build left in podman's store under the pushed names, and run like a runner runs a container
action (tests/support/runner_container.py) as the queued run of the receipt-skip scenario.
"""

from __future__ import annotations

import subprocess

import pytest
import yaml

from fullsend import __version__
from fullsend.core.receipt.marker import receipt_body
from fullsend.simulator.fixtures import standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.registry import LocalRegistry
from tests.support.runner_container import REPO_ROOT, RunnerDirs, action_inputs, container_env, record, run_container

pytestmark = [
    pytest.mark.slow,
    pytest.mark.full,
    pytest.mark.xdist_group("podman"),
    pytest.mark.container,
    pytest.mark.timeout(3600),
]
VERSION = f"v{__version__}"  # release.sh refuses any other version than the package's
QUEUED_RUN_ID = 33740099999
RELEASE_TIMEOUT_S = 3000


def _release(*args: str) -> dict[str, str]:
    proc = subprocess.run(
        [str(REPO_ROOT / "tools" / "release" / "release.sh"), *args, "--local"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=RELEASE_TIMEOUT_S,
    )
    assert proc.returncode == 0, f"release.sh {args[0]} failed:\n{proc.stderr[-4000:]}"
    return dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)


def _podman(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["podman", *args], capture_output=True, text=True, timeout=600)


def test_the_released_image_pulled_by_digest_skips_the_queued_run(podman_base, tmp_path):
    with LocalRegistry(tmp_path / "registry") as registry:
        image = f"{registry.host}/fullsend-ai/steer-action"
        built = _release("build", "--image", image, "--version", VERSION, "--insecure")
        assert built["image"] == image
        commit = _release(
            "publish",
            "--image",
            image,
            "--version",
            VERSION,
            "--slim-digest",
            built["slim_digest"],
            "--full-digest",
            built["full_digest"],
        )["release_commit"]
        action = yaml.safe_load(
            subprocess.run(
                ["git", "show", f"{commit}:action.yml"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
            ).stdout
        )
        reference = action["runs"]["image"].removeprefix("docker://")
        assert reference == f"{image}@{built['slim_digest']}"
        for tag in (VERSION, f"{VERSION}-full"):  # nothing local under the released names: a real pull
            _podman("manifest", "rm", f"localhost/steer-action-release:{tag}")
            _podman("rmi", "--force", f"{image}:{tag}")
        pulled = _podman("pull", "--tls-verify=false", reference)
        assert pulled.returncode == 0, pulled.stderr
        assert _podman("pull", "--tls-verify=false", f"{image}@{built['full_digest']}").returncode == 0
        try:
            run, requests = _queued_run(reference, tmp_path)
        finally:  # the names under this port mean nothing after the test; the layers stay cached
            _podman("rmi", reference, f"{image}@{built['full_digest']}")
    assert run.exit_code == 0, run.stdout + run.stderr
    assert run.outputs["outcome"] == "skipped" and run.outputs["skip_reason"] == "receipt"
    assert requests <= 3
    record("released image: podman run -> exit of the receipt skip", f"{run.finished_at - run.started_at:.2f} s")


def _queued_run(reference: str, tmp_path):
    """The receipt skip's queued run from ``reference``; returns it and the requests it made."""
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        sim.add_comment(fix.pr, receipt_body([QUEUED_RUN_ID], fix.head), fix.job_login)
        dirs = RunnerDirs.create(tmp_path / "queued")
        inputs = action_inputs(
            fix.job_token, {"role_token": fix.role_token, "stage": "review", "prompt": "Review the pull request."}
        )
        env = container_env(
            dirs,
            api_url=sim.api_url,
            graphql_url=sim.graphql_url,
            run_id=QUEUED_RUN_ID,
            inputs=inputs,
            event={"action": "created", "issue": {"number": fix.pr}},
            step_env={},
        )
        run = run_container(reference, dirs, env)
        return run, sim.request_count()
