"""Issue 31 acceptance: act runs the dispatch workflow steer-action hosts as a caller would.

The work directory (tools/act/workdir.sh: this checkout laid out as an adopting repository) gets
the shim ``fullsend init`` writes for ``--stages review --role-token mint``, its one job calling
``.github/workflows/dispatch.yml`` by path instead of ``fullsend-ai/steer-action/…@<sha>`` (act
runs a called workflow of the same repository; on the main branch the hosted workflow's ``uses:
./`` is this checkout's action, which a release pins to its commit).  The scenario, the steered
run, its receipt and the queued run's skip are those of tests/act/test_act_example.py.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
import requests

from fullsend.app.commands.init import HOSTED_DISPATCH, InitPlan, render_files
from fullsend.core.receipt.signed import receipt_claim
from fullsend.core.wire import OPENING_LINE
from fullsend.simulator.fixtures import JOB_LOGIN, JOB_TOKEN
from tests.act.act_harness import (
    FIRST_EVENT,
    FOLLOW_UP_RUN,
    MY_RUN,
    QUEUED_EVENT,
    TIMINGS,
    ActRun,
    SimulatorProcess,
    act_argv,
    run_act,
)

pytestmark = [pytest.mark.slow, pytest.mark.full, pytest.mark.xdist_group("podman"), pytest.mark.timeout(600)]
REF = "5e1ec7ed0c0ffee0ddba11ab1e0b5e55ed0fab1e"


def _adopt_hosted(workdir: Path) -> None:
    """The caller ``fullsend init`` writes, calling the hosted workflow by path, and the prompt file
    the hosted workflow's ``prompts_dir`` input names."""
    files = dict(render_files(InitPlan(("review",), ref=REF, role_token="mint")))
    shim = files[Path(".github/workflows/fullsend.yml")]
    remote = re.compile(rf"(?m)^    uses: fullsend-ai/steer-action/{re.escape(str(HOSTED_DISPATCH))}@{REF} # v.*$")
    by_path = f"    uses: ./{HOSTED_DISPATCH}  # zizmor: ignore[self-repository] act calls it by path"
    caller, n = remote.subn(by_path, shim)
    assert n == 1, shim
    (workdir / ".github" / "workflows" / "fullsend.yml").write_text(caller)
    (workdir / ".github" / "workflows" / "reusable-dispatch.yml").unlink()
    prompt = workdir / ".fullsend" / "prompts" / "review.md"
    prompt.parent.mkdir(parents=True, exist_ok=True)
    prompt.write_text(files[Path(".fullsend/prompts/review.md")])
    assert (workdir / HOSTED_DISPATCH).is_file()


def _comments(sim: SimulatorProcess) -> list[dict]:
    response = requests.get(
        f"{sim.api_url}/repos/org/repo/issues/7/comments", headers={"Authorization": f"token {JOB_TOKEN}"}, timeout=10
    )
    response.raise_for_status()
    return response.json()


#: The hosted dispatch names actions/create-github-app-token for role_token: app; act fetches every
#: remote action of a job before its first step, even one whose ``if`` is false, and this machine
#: reaches no GitHub: a local stand-in takes its place (never run here, role_token is mint).
APP_TOKEN_ACTION = re.compile(r"uses: (actions/create-github-app-token@[0-9a-f]{40})")


def _app_token_stand_in(workdir: Path) -> list[str]:
    """``--local-repository`` flags mapping every pinned create-github-app-token to a stub action."""
    hosted = (workdir / HOSTED_DISPATCH).read_text(encoding="utf-8")
    stub = workdir.parent / "app-token-stand-in"
    stub.mkdir(exist_ok=True)
    (stub / "action.yml").write_text(
        "name: stand-in\ndescription: never runs\nruns:\n  using: composite\n"
        "  steps:\n    - run: exit 1\n      shell: bash\n"
    )
    return [f for ref in sorted(set(APP_TOKEN_ACTION.findall(hosted))) for f in ("--local-repository", f"{ref}={stub}")]


def _played(run: ActRun, what: str) -> None:
    assert run.exit_code == 0, f"act failed for {what}:\n{run.log[-8000:]}"
    assert (run.job_result("Route"), run.job_result("Review")) == ("succeeded", "succeeded"), run.log[-8000:]
    assert "Route: event issue_comment/created -> stage 'review'" in run.step_output(
        "Route", "Authorize and select the stage"
    )
    assert "docker build" not in run.log


def test_the_hosted_dispatch_called_by_path_is_steered_under_act_then_the_queued_run_skips(
    act_bin, job_image, docker_host, workdir, simulator
):
    _adopt_hosted(workdir)
    agent_log = workdir / "agent-messages.jsonl"

    started = time.monotonic()
    stand_in = _app_token_stand_in(workdir)
    first = run_act(
        act_bin,
        [*act_argv(FIRST_EVENT, MY_RUN, simulator.act_flags, job_image, agent_log), *stand_in],
        workdir,
        docker_host,
    )
    TIMINGS.append(("act: the hosted dispatch, the run in flight", time.monotonic() - started))
    _played(first, "the run in flight")
    messages = [json.loads(line)["text"] for line in agent_log.read_text().splitlines()]
    steers = [m for m in messages if m.split("\n", 1)[0] == OPENING_LINE]
    assert len(steers) == 1 and "Instruction from @reviewer: please re-check the migration" in steers[0]
    receipts = [c for c in _comments(simulator) if c["user"]["login"] == JOB_LOGIN]
    assert len(receipts) == 1
    marker = receipt_claim(receipts[0]["body"])
    assert marker is not None and marker.consumed == (FOLLOW_UP_RUN,)
    assert first.shown_outputs()["outcome"] == "succeeded"

    queued = run_act(
        act_bin,
        [*act_argv(QUEUED_EVENT, FOLLOW_UP_RUN, simulator.act_flags, job_image, agent_log), *stand_in],
        workdir,
        docker_host,
    )
    _played(queued, "the queued run")
    assert (queued.shown_outputs()["outcome"], queued.shown_outputs()["skip_reason"]) == ("skipped", "receipt")
    assert [c for c in _comments(simulator) if c["user"]["login"] == JOB_LOGIN] == receipts
