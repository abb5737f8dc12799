"""Issue 10 acceptance: the example workflows run under act against the simulator.

act runs the shim ``examples/fullsend.yml`` → ``reusable-dispatch.yml`` → Route → Review (the
files copied unchanged into a work directory, tools/act/workdir.sh) through podman's
Docker-compatible service, with ``GITHUB_API_URL`` etc. pointed at ``fullsend simulator serve``
playing examples/scenarios/review-steer.yml (the FIX scenario of ``fullsend.simulator.fixtures``, plus an authorized
``/fs-review`` follow-up added while the agent works) and the scripted agent as ``agent_cli``.
Then the queued run for that follow-up runs and skips on the receipt.  The README's act block
is run as written, too.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import requests
import yaml

from fullsend.app.action.status.live_status import DONE_BELOW
from fullsend.core.receipt.signed import receipt_claim
from fullsend.core.wire import OPENING_LINE
from fullsend.simulator.fixtures import JOB_LOGIN, JOB_TOKEN, ROLE_LOGIN
from tests.act.act_harness import (
    FIRST_EVENT,
    FOLLOW_UP_RUN,
    MY_RUN,
    QUEUED_EVENT,
    REPO_ROOT,
    TIMINGS,
    ActRun,
    SimulatorProcess,
    act_argv,
    readme_act_block,
    run_act,
)
from tests.support.status_versions import acknowledged_at, check_live_versions, check_run_edits, comment_versions

# Issue 10: within 10 minutes on a fresh machine, image builds included (measured: about 3.5 min
# for this directory with an empty podman store and cache).
pytestmark = [pytest.mark.slow, pytest.mark.full, pytest.mark.xdist_group("act"), pytest.mark.timeout(600)]

COMMAND = "/fs-review please re-check the migration"


def _comments(sim: SimulatorProcess) -> list[dict]:
    response = requests.get(
        f"{sim.api_url}/repos/org/repo/issues/7/comments", headers={"Authorization": f"token {JOB_TOKEN}"}, timeout=10
    )
    response.raise_for_status()
    return response.json()


def _cadence(workdir: Path) -> tuple[float, float]:
    """The run's configured poll (the work directory's harness) and status edit interval (the
    example passes none: action.yml's default), in seconds."""
    harness = yaml.safe_load((workdir / ".fullsend" / "harness" / "review.yaml").read_text(encoding="utf-8"))
    action = yaml.safe_load((workdir / "action.yml").read_text(encoding="utf-8"))
    return float(harness["steer"]["poll_interval_seconds"]), float(
        action["inputs"]["status_interval_seconds"]["default"]
    )


def _agent_messages(path: Path) -> list[str]:
    return [json.loads(line)["text"] for line in path.read_text().splitlines()] if path.exists() else []


def _played(run: ActRun, what: str) -> None:
    assert run.exit_code == 0, f"act failed for {what}:\n{run.log[-8000:]}"
    assert (run.job_result("Route"), run.job_result("Review")) == ("succeeded", "succeeded"), run.log[-8000:]
    assert "Route: event issue_comment/created -> stage 'review'" in run.step_output(
        "Route", "Authorize and select the stage"
    )
    assert "docker build" not in run.log  # act ran the image it was given (tools/act/prepare-images.sh)


def test_FIX_example_workflow_is_steered_under_act_then_the_queued_run_skips(
    act_bin, job_image, docker_host, workdir, simulator
):
    agent_log = workdir / ".git" / "agent-messages.jsonl"

    started = time.monotonic()
    first = run_act(
        act_bin, act_argv(FIRST_EVENT, MY_RUN, simulator.act_flags, job_image, agent_log), workdir, docker_host
    )
    TIMINGS.append(("act: the run in flight", time.monotonic() - started))
    _played(first, "the run in flight")
    steers = [m for m in _agent_messages(agent_log) if m.split("\n", 1)[0] == OPENING_LINE]
    assert len(steers) == 1, _agent_messages(agent_log)
    assert "Instruction from @reviewer: please re-check the migration" in steers[0]
    assert re.search(rf"^Source: follow-up run {FOLLOW_UP_RUN}, issue_comment by reviewer, at ", steers[0], re.M)
    comments = _comments(simulator)
    receipts = [c for c in comments if c["user"]["login"] == JOB_LOGIN]
    assert len(receipts) == 1
    marker = receipt_claim(receipts[0]["body"])
    assert marker is not None and marker.consumed == (FOLLOW_UP_RUN,) and marker.head == "aaa111"
    # the status comments, under the role token it minted: the start comment (the run's last progress,
    # the steer acknowledged) and, below the follow-up's comment, the terminal status linking the receipt
    start, terminal = [c for c in comments if c["user"]["login"] == ROLE_LOGIN]
    assert DONE_BELOW in start["body"], start["body"]
    assert re.search(rf"Steer 1: follow-up run \[{FOLLOW_UP_RUN}\]\(.* · acknowledged ", start["body"]), start["body"]
    # who sent it: the commenter, as inline code
    assert re.search(rf"\[{FOLLOW_UP_RUN}\]\([^)]+\) by `reviewer` · sent ", start["body"]), start["body"]
    assert f"Receipt: [posted]({receipts[0]['html_url']})" in terminal["body"], terminal["body"]
    # their versions as GitHub keeps them (GraphQL userContentEdits, stamped by the simulator's
    # clock): the steer shown acknowledged by the next edit after the acknowledgement the run logged
    # (this run polls every 2 s but edits at most once per interval: the later of the two bounds
    # it), every edit at least the interval after the one before (the closing one too), and a
    # version linking the receipt
    graphql_url = next(f.split("=", 1)[1] for f in simulator.act_flags if "GITHUB_GRAPHQL_URL=" in f)
    poll_s, interval_s = _cadence(workdir)
    acked = acknowledged_at(first.log)[FOLLOW_UP_RUN]
    versions = comment_versions(graphql_url, JOB_TOKEN, 7, start["id"])
    check_live_versions(versions, FOLLOW_UP_RUN, acked, within_s=max(poll_s, interval_s), spacing_s=interval_s)
    linked = comment_versions(graphql_url, JOB_TOKEN, 7, terminal["id"])
    assert any(f"Receipt: [posted]({receipts[0]['html_url']})" in v.body for v in linked), linked
    check_run_edits([versions, linked], spacing_s=interval_s)  # every edit of the run, the receipt link too
    assert first.shown_outputs() == {
        "outcome": "succeeded",
        "skip_reason": "",
        "steers": "1",
        "consumed_run_ids": str(FOLLOW_UP_RUN),
        "receipt_url": receipts[0]["html_url"],
        "head_sha": "aaa111",
    }
    assert any(f"the shim started follow-up run {FOLLOW_UP_RUN}" in line for line in simulator.lines)
    assert any("mint: role token for role 'review' handed out" in line for line in simulator.lines)

    before = len(_agent_messages(agent_log))
    started = time.monotonic()
    queued = run_act(
        act_bin, act_argv(QUEUED_EVENT, FOLLOW_UP_RUN, simulator.act_flags, job_image, agent_log), workdir, docker_host
    )
    TIMINGS.append(("act: the queued run", time.monotonic() - started))
    _played(queued, "the queued run")
    assert queued.shown_outputs() == {
        "outcome": "skipped",
        "skip_reason": "receipt",
        "steers": "0",
        "consumed_run_ids": "",
        "receipt_url": "",
        "head_sha": "",
    }
    assert len(_agent_messages(agent_log)) == before  # the agent never started
    assert [c for c in _comments(simulator) if c["user"]["login"] == JOB_LOGIN] == receipts


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_readme_act_commands_work_as_written(act_bin, job_image, tmp_path):
    """README "Run it locally with act", second block, run by bash from the repository root with
    only the port (8765) and the directory ($HOME/fullsend-act) replaced by this test's own."""
    block = readme_act_block()
    assert block.count("8765") == 7 and "$HOME/fullsend-act" in block
    port, base = _free_port(), tmp_path / "act"
    script = block.replace("8765", str(port)).replace("$HOME/fullsend-act", str(base))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "ACTIONS_", "GH_", "DOCKER_"))}
    started = time.monotonic()
    # Into a file, not a pipe: a block that stops early (set -e) leaves its podman service holding
    # the output open, and a pipe would then wait for the timeout instead of the block's end.
    log = tmp_path / "block.log"
    with log.open("w") as sink:
        proc = subprocess.Popen(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=REPO_ROOT,
            env=env,
            text=True,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        proc.wait(timeout=600)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        else:
            try:
                os.killpg(proc.pid, signal.SIGTERM)  # the simulator, had the block stopped early
            except ProcessLookupError:
                pass
        subprocess.run(
            [str(REPO_ROOT / "tools" / "act" / "podman-service.sh"), "stop", str(base / "podman.sock")],
            capture_output=True,
            timeout=60,
        )
    TIMINGS.append(("README act block (images cached)", time.monotonic() - started))
    out = log.read_text(errors="replace")
    assert proc.returncode == 0, out[-8000:]
    shown = ActRun(0, out)
    assert shown.log.count("🏁  Job succeeded") == 4  # Route and Review, twice
    assert "| outcome=succeeded" in out and "| steers=1" in out and f"| consumed_run_ids={FOLLOW_UP_RUN}" in out
    assert "| outcome=skipped" in out and "| skip_reason=receipt" in out
    assert any(
        m.split("\n", 1)[0] == OPENING_LINE for m in _agent_messages(base / "work" / ".git" / "agent-messages.jsonl")
    )
