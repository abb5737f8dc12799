"""Issue 20: the default (slim) image's working path with the real Claude Code CLI.

The slim image holds no agent CLI.  Run the way a runner runs it, with ``agent_cli`` empty, the
action passes the pre-flight, installs the pinned Claude Code from a registry mirror on
127.0.0.1 (the real tarball, checked against the lock; cached on the host under
``FULLSEND_CACHE_DIR``, downloaded once from registry.npmjs.org), checks its version, and the
real CLI then does the run against a scripted Anthropic server (tests/doubles/anthropic_server.py).
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fullsend.core.scalars import format_time
from fullsend.simulator.fixtures import standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.doubles.anthropic_server import FakeAnthropic
from tests.doubles.model_server import Reply
from tests.support.npm_registry import FakeRegistry, cached_tarballs
from tests.support.runner_container import RunnerDirs, action_inputs, container_env, record, run_container

pytestmark = [
    pytest.mark.slow,
    pytest.mark.full,
    pytest.mark.xdist_group("podman"),
    pytest.mark.container,
    pytest.mark.timeout(1800),
]
TARBALL_CACHE = Path(os.environ.get("FULLSEND_CACHE_DIR", Path.home() / ".cache" / "fullsend")) / "npm-tarballs"


def test_the_slim_image_installs_the_pinned_claude_and_runs_it(slim_image, tmp_path):
    blobs = cached_tarballs("claude", TARBALL_CACHE)
    with (
        GitHubSimulator() as sim,
        FakeRegistry(blobs) as registry,
        FakeAnthropic(lambda body: Reply(text="Reviewed: nothing to change.")) as model,
    ):
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        dirs = RunnerDirs.create(tmp_path / "run")
        inputs = action_inputs(
            fix.job_token,
            {
                "role_token": fix.role_token,
                "stage": "review",
                "runtime": "claude",
                "prompt": "Review the pull request.",
                "poll_interval_seconds": "1",
            },
        )
        step_env = {
            "npm_config_registry": registry.url,
            "ANTHROPIC_BASE_URL": model.base_url,
            "ANTHROPIC_API_KEY": "sk-ant-fake",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
        }
        env = container_env(
            dirs,
            api_url=sim.api_url,
            graphql_url=sim.graphql_url,
            run_id=fix.my_run_id,
            inputs=inputs,
            event={"action": "created", "issue": {"number": fix.pr}},
            step_env=step_env,
        )
        run = run_container(slim_image, dirs, env, timeout_s=900)
        asked = list(registry.requests)
        model_calls = len(model.calls)
    assert run.exit_code == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert run.outputs["outcome"] == "succeeded"
    assert asked == list(blobs)  # the platform's one package, nothing else
    assert re.search(r"Installed the pinned claude [\d.]+: 1 packages, [1-9][\d.]* MB downloaded in ", run.stdout)
    assert model_calls >= 1  # the installed CLI did the run
    record(
        "slim image, working path (claude installed from a local mirror): podman run -> exit",
        f"{run.finished_at - run.started_at:.1f} s",
    )
