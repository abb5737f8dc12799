"""Issue 21 acceptance: what ``fullsend init`` writes runs under act, against the simulator, to a
steered run and a receipt, and then the queued run skips.

A fresh repository directory gets ``fullsend init --stages review,fix --role-token mint
--dispatch self-contained`` (the simulator plays the mint; the hosted dispatch is
tests/act/test_act_hosted.py) and nothing else but the scripted agent an earlier step would put in
the workspace; its review harness polls every 2 s instead of 30 s so the run takes seconds.  The
generated dispatch workflow names ``fullsend-ai/steer-action@<ref>``: act's
``--local-repository`` stands in this checkout for that remote action, and the image it runs is
the one ``tools/act/prepare-images.sh`` built, tagged with the name act gives a remote action.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from fullsend.core.receipt.signed import receipt_claim
from fullsend.core.wire import OPENING_LINE
from fullsend.simulator.fixtures import JOB_LOGIN, JOB_TOKEN
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
    run_act,
)

pytestmark = [pytest.mark.slow, pytest.mark.full, pytest.mark.xdist_group("podman"), pytest.mark.timeout(600)]
REF = "5e1ec7ed0c0ffee0ddba11ab1e0b5e55ed0fab1e"


def _init_repository(root: Path) -> Path:
    root.mkdir()  # init writes into an existing folder only
    made = subprocess.run(
        [
            sys.executable,
            "-m",
            "fullsend",
            "init",
            "--stages",
            "review,fix",
            "--ref",
            REF,
            "--role-token",
            "mint",
            "--dispatch",
            "self-contained",
            "--dir",
            str(root),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    harness = root / ".fullsend" / "harness" / "review.yaml"
    text = harness.read_text()
    assert "poll_interval_seconds: 30 " in text
    harness.write_text(text.replace("poll_interval_seconds: 30 ", "poll_interval_seconds: 2 "))
    agent = root / "tools" / "act" / "scripted-agent"
    agent.parent.mkdir(parents=True)
    shutil.copy2(REPO_ROOT / "tools" / "act" / "scripted-agent", agent)
    return root


def _tag_for_remote_action(ref: str) -> None:
    """act names a remote docker action's image after ``<owner>-<repo>@<ref>``; give it the image
    prepare-images.sh made for ``uses: ./`` (the same Dockerfile, this checkout)."""
    name = f"act-fullsend-ai-steer-action-{ref}-dockeraction:latest"
    subprocess.run(["podman", "tag", "act-dockeraction:latest", name], check=True, capture_output=True, timeout=60)


def _argv(event: str, run_id: int, simulator: SimulatorProcess, job_image: str, agent_log: Path) -> list[str]:
    argv = act_argv(str(REPO_ROOT / event), run_id, simulator.act_flags, job_image, agent_log)
    return [*argv, "--local-repository", f"fullsend-ai/steer-action@{REF}={REPO_ROOT}"]


def _comments(sim: SimulatorProcess) -> list[dict]:
    response = requests.get(
        f"{sim.api_url}/repos/org/repo/issues/7/comments", headers={"Authorization": f"token {JOB_TOKEN}"}, timeout=10
    )
    response.raise_for_status()
    return response.json()


def _played(run: ActRun, what: str) -> None:
    assert run.exit_code == 0, f"act failed for {what}:\n{run.log[-8000:]}"
    assert (run.job_result("Route"), run.job_result("Review")) == ("succeeded", "succeeded"), run.log[-8000:]
    assert "docker build" not in run.log


def test_the_setup_fullsend_init_writes_is_steered_under_act_then_the_queued_run_skips(
    act_bin, job_image, docker_host, simulator, tmp_path
):
    repo = _init_repository(tmp_path / "repo")
    _tag_for_remote_action(REF)
    agent_log = repo / "agent-messages.jsonl"

    started = time.monotonic()
    first = run_act(act_bin, _argv(FIRST_EVENT, MY_RUN, simulator, job_image, agent_log), repo, docker_host)
    TIMINGS.append(("act: fullsend init's workflows, the run in flight", time.monotonic() - started))
    _played(first, "the run in flight")
    messages = [json.loads(line)["text"] for line in agent_log.read_text().splitlines()]
    steers = [m for m in messages if m.split("\n", 1)[0] == OPENING_LINE]
    assert len(steers) == 1 and "Instruction from @reviewer: please re-check the migration" in steers[0]
    assert messages[0].startswith("<!-- The review stage's task, written by `fullsend init`.")
    receipts = [c for c in _comments(simulator) if c["user"]["login"] == JOB_LOGIN]
    assert len(receipts) == 1
    marker = receipt_claim(receipts[0]["body"])
    assert marker is not None and marker.consumed == (FOLLOW_UP_RUN,)
    assert first.shown_outputs()["outcome"] == "succeeded"

    queued = run_act(act_bin, _argv(QUEUED_EVENT, FOLLOW_UP_RUN, simulator, job_image, agent_log), repo, docker_host)
    _played(queued, "the queued run")
    assert (queued.shown_outputs()["outcome"], queued.shown_outputs()["skip_reason"]) == ("skipped", "receipt")
