"""Issue 31: a reply in a pull request's review thread steers the run in flight under act, and
act routes the ``pull_request_review_comment`` event of the queued run it started.

act runs the examples' shim and dispatch (tools/act/workdir.sh) against ``fullsend simulator
serve`` playing examples/scenarios/review-thread-steer.yml: while the agent works, the review bot
leaves a finding on src/db.py line 88 and @reviewer answers it in the thread with ``/fs-review``;
the shim's run for that reply is 33740015300, titled ``org/repo#7 review_comment:<id>``.  The run
in flight is steered with the instruction and where it was written, and posts the receipt.  Then
act plays the reply's own event (review-thread-steer.queued.event.json) as
``pull_request_review_comment``: Route selects review, and the run skips on the receipt.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
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
    REPO_ROOT,
    TIMINGS,
    ActRun,
    SimulatorProcess,
    act_argv,
    run_act,
)

pytestmark = [pytest.mark.slow, pytest.mark.full, pytest.mark.xdist_group("act"), pytest.mark.timeout(600)]

SCENARIO = REPO_ROOT / "examples" / "scenarios" / "review-thread-steer.yml"
QUEUED_EVENT = "examples/scenarios/review-thread-steer.queued.event.json"
INSTRUCTION = "also cover the None that db.lookup returns"


@pytest.fixture
def thread_simulator(workdir: Path) -> Iterator[SimulatorProcess]:
    served = SimulatorProcess.start(SCENARIO, repository=workdir)
    try:
        yield served
    finally:
        served.stop()


def _receipts(sim: SimulatorProcess) -> list[dict]:
    response = requests.get(
        f"{sim.api_url}/repos/org/repo/issues/7/comments", headers={"Authorization": f"token {JOB_TOKEN}"}, timeout=10
    )
    response.raise_for_status()
    return [c for c in response.json() if c["user"]["login"] == JOB_LOGIN]


def _routed(run: ActRun, event: str, what: str) -> None:
    assert run.exit_code == 0, f"act failed for {what}:\n{run.log[-8000:]}"
    assert (run.job_result("Route"), run.job_result("Review")) == ("succeeded", "succeeded"), run.log[-8000:]
    routed = run.step_output("Route", "Authorize and select the stage")
    assert f"Route: event {event}/created -> stage 'review'" in routed, routed


def test_a_review_thread_reply_steers_under_act_and_act_routes_its_queued_run_to_a_skip(
    act_bin, job_image, docker_host, workdir, thread_simulator
):
    agent_log = workdir / ".git" / "agent-messages.jsonl"
    started = time.monotonic()
    first = run_act(
        act_bin, act_argv(FIRST_EVENT, MY_RUN, thread_simulator.act_flags, job_image, agent_log), workdir, docker_host
    )
    TIMINGS.append(("act: the run in flight, steered from a review thread", time.monotonic() - started))
    _routed(first, "issue_comment", "the run in flight")
    messages = [json.loads(line)["text"] for line in agent_log.read_text().splitlines()]
    steers = [m for m in messages if m.split("\n", 1)[0] == OPENING_LINE]
    assert len(steers) == 1, messages
    assert f"Instruction from @reviewer: {INSTRUCTION}" in steers[0]
    assert "The instruction above from @reviewer was written on src/db.py, line 88." in steers[0]
    receipts = _receipts(thread_simulator)
    assert len(receipts) == 1
    marker = receipt_claim(receipts[0]["body"])
    assert marker is not None and marker.consumed == (FOLLOW_UP_RUN,)
    assert first.shown_outputs()["consumed_run_ids"] == str(FOLLOW_UP_RUN)

    argv = act_argv(
        QUEUED_EVENT, FOLLOW_UP_RUN, thread_simulator.act_flags, job_image, agent_log, "pull_request_review_comment"
    )
    started = time.monotonic()
    queued = run_act(act_bin, argv, workdir, docker_host)
    TIMINGS.append(("act: the queued pull_request_review_comment run", time.monotonic() - started))
    _routed(queued, "pull_request_review_comment", "the queued run")
    assert (queued.shown_outputs()["outcome"], queued.shown_outputs()["skip_reason"]) == ("skipped", "receipt")
    assert _receipts(thread_simulator) == receipts
