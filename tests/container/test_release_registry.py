"""Issue 20 acceptance: the release, pushed to a real OCI registry, pulled by the digest the release
commit names, skips the queued run the way a runner runs it.

The session's release (the ``released`` fixture, tests/support/release.py: a real registry, Debian's
``docker-registry``, on 127.0.0.1; ``tools/release/release.sh build --local`` builds the images for
this machine's architecture and pushes them there with podman; ``publish --local`` makes the
release commit).  The image its ``action.yml`` names (``docker://<registry>/…@sha256:…``) was
pulled by that digest, with nothing of the build left in podman's store under the pushed names,
and runs like a runner runs a container action (tests/support/runner_container.py) as the queued
run of the receipt-skip scenario.  The adopter-path plays (tests/act/adopter/) run the same release.
"""

from __future__ import annotations

import pytest
import yaml

from fullsend.simulator.fixtures import add_follow_up_run, genuine_receipt, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.runner_container import (
    RunnerDirs,
    action_inputs,
    container_env,
    record,
    run_container,
    signing_env,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.full,
    pytest.mark.xdist_group("podman"),
    pytest.mark.container,
    pytest.mark.timeout(3600),
]
QUEUED_RUN_ID = 33740099999


def test_the_released_image_pulled_by_digest_skips_the_queued_run(released, tmp_path):
    for commit, path, reference in (
        (released.release_commit, "action.yml", released.slim),
        (released.release_commit, "full/action.yml", released.full),
    ):
        action = yaml.safe_load(released.git("show", f"{commit}:{path}"))
        assert action["runs"]["image"] == f"docker://{reference}"
    assert released.image.endswith("/fullsend-ai/steer-action")
    record("release: build, push and publish (or the cached registry)", f"{released.build_s:.1f} s")
    run, requests = _queued_run(released.slim, tmp_path)
    assert run.exit_code == 0, run.stdout + run.stderr
    assert run.outputs["outcome"] == "skipped" and run.outputs["skip_reason"] == "receipt"
    # the receipt view, the role token's login, and the proof's two reads beside them (the issuer's
    # keys, this run's record): bench/skip_requests.py's "GraphQL, 3 comments, listed" row
    assert requests <= 4
    record("released image: podman run -> exit of the receipt skip", f"{run.finished_at - run.started_at:.2f} s")


def _queued_run(reference: str, tmp_path):
    """The receipt skip's queued run from ``reference``; returns it and the requests it made."""
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        add_follow_up_run(sim, run_id=QUEUED_RUN_ID)  # its record: the shim and dispatch a proof must name
        signed = genuine_receipt(sim, [QUEUED_RUN_ID], fix.head, writer_run_id=fix.my_run_id, item=fix.pr)
        sim.add_comment(fix.pr, signed, fix.job_login)
        dirs = RunnerDirs.create(tmp_path / "queued")
        inputs = action_inputs(
            fix.job_token,
            {
                "role_token": fix.role_token,
                "stage": "review",
                "prompt": "Review the pull request.",
                "receipt_issuer": sim.issuer.url,  # the simulator plays GitHub's OIDC issuer
            },
        )
        env = container_env(
            dirs,
            api_url=sim.api_url,
            graphql_url=sim.graphql_url,
            run_id=QUEUED_RUN_ID,
            inputs=inputs,
            event={"action": "created", "issue": {"number": fix.pr}, "repository": {"default_branch": "main"}},
            step_env={},
            id_token=signing_env(sim, QUEUED_RUN_ID),  # a stage job's: GITHUB_WORKFLOW_REF names its shim
        )
        run = run_container(reference, dirs, env)
        return run, sim.request_count()
