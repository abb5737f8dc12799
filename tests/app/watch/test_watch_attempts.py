"""Issue 18: jobs across re-run attempts, through the simulator's ``filter=latest`` / ``filter=all``.

After "re-run failed jobs" GitHub's default jobs listing shows only the latest attempt, which
lacks the Route job that succeeded in attempt 1: the watcher used to disable steering ("my own
run must have exactly one Route job, but it has 0").  The adapter now reads every attempt and
takes each job name's latest record.  The run-attempt rules are unchanged: a re-run never skips on
a receipt, and only a first attempt carries amendment authority.
"""

from __future__ import annotations

from pathlib import Path

import requests

from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.action.skip.facts import PreflightFacts
from fullsend.app.action.skip.receipt import check_receipt
from fullsend.core.model import Repo
from fullsend.core.receipt.marker import receipt_body
from fullsend.core.watch.settle import Outcome
from fullsend.simulator.fixtures import JOB_LOGIN, JOB_TOKEN, ROLE_TOKEN, ROUTE_JOB, STAGE_JOB, add_comment_follow_up
from tests.app.watch.watch_rig import Rig


def _latest_listing(rig: Rig, run_id: int, query: str = "", jobs: str = "jobs") -> list[str]:
    url = f"{rig.sim.api_url}/repos/org/repo/actions/runs/{run_id}/{jobs}{query}"
    body = requests.get(url, headers={"Authorization": f"Bearer {JOB_TOKEN}"}, timeout=10).json()
    return [f"{j['name']}#{j['run_attempt']}" for j in body["jobs"]]


def _rerun_my_stage(rig: Rig) -> None:
    """Attempt 1's Review failed; "re-run failed jobs" started attempt 2, whose Review now runs."""
    rig.sim.update_job(rig.fix.stage_job_id, status="completed", conclusion="failure")
    [again] = rig.sim.rerun_workflow_run(rig.fix.my_run_id)
    rig.sim.update_job(int(again["id"]), status="in_progress")
    rig.sim.update_workflow_run(rig.fix.my_run_id, status="in_progress")


def test_the_simulator_lists_the_latest_attempt_by_default_and_every_attempt_with_filter_all(rig: Rig) -> None:
    _rerun_my_stage(rig)
    my = rig.fix.my_run_id
    assert _latest_listing(rig, my) == [f"{STAGE_JOB}#2"]  # the Route job of attempt 1 is not there
    assert _latest_listing(rig, my, "?filter=all") == [f"{ROUTE_JOB}#1", f"{STAGE_JOB}#1", f"{STAGE_JOB}#2"]
    assert _latest_listing(rig, my, jobs="attempts/1/jobs") == [f"{ROUTE_JOB}#1", f"{STAGE_JOB}#1"]


def test_after_rerun_failed_jobs_my_route_job_of_attempt_1_is_still_found(rig: Rig) -> None:
    _rerun_my_stage(rig)
    w = rig.watcher()
    assert w.result().me is not None and (w.result().me.route_job_name, w.result().me.stage_job_name) == (
        ROUTE_JOB,
        STAGE_JOB,
    )
    rig.sim.move_head(7, "b" * 40)
    rig.accept(55)
    assert w.poll_and_steer() is Outcome.STEERED


def test_a_candidates_jobs_are_judged_by_their_latest_attempt(rig: Rig) -> None:
    """A follow-up whose Review was skipped in attempt 1 and re-run as queued in attempt 2 is judged
    on attempt 2's record; its Route job of attempt 1 still authorizes it."""
    rig.sim.move_head(7, "b" * 40)
    run = rig.accept(55, stage_status="completed", stage_conclusion="failure")
    rig.sim.rerun_workflow_run(int(run["id"]))
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.STEERED and [m.follow_up_run_id for m in rig.steerer.messages] == [55]


def test_a_rerun_comment_run_carries_no_amendment_authority(rig: Rig) -> None:
    """Only run_attempt 1 carries amendment authority (unchanged): a re-run's command is context
    and its run is left to the queued run."""
    _, run = add_comment_follow_up(rig.sim, "/fs-review only as context now")
    rig.sim.rerun_workflow_run(int(run["id"]), job_names=[STAGE_JOB])
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.STEERED
    [msg] = rig.steerer.messages
    assert "Instruction from @" not in msg.text and "only as context now" in msg.text
    assert list(w.result().left) == [(int(run["id"]), "unbound")]


def test_a_rerun_never_skips_on_a_receipt(rig: Rig, tmp_path: Path) -> None:
    queued = 33740015299
    rig.sim.add_comment(7, receipt_body([queued], "aaa111"), JOB_LOGIN)
    forge = GitHubForge(Repo("org", "repo"), rig.sim.api_url, rig.sim.graphql_url, JOB_TOKEN, ROLE_TOKEN, rig.clock)
    facts = PreflightFacts(
        stage="review",
        run_id_raw=str(queued),
        run_attempt="1",
        repository="org/repo",
        item_number=7,
        job_token=JOB_TOKEN,
        role_token=ROLE_TOKEN,
        minted=True,
        fullsend_dir=str(tmp_path / ".fullsend"),
        event_name="issue_comment",
        allow_unsigned_receipts=True,  # the re-run rule, on the unsigned form (under its input)
    )
    lines: list[tuple[str, str]] = []
    assert check_receipt(forge, facts, lambda *line: lines.append(line)) is not None
    rerun = PreflightFacts(**{**facts.__dict__, "run_attempt": "2"})
    assert check_receipt(forge, rerun, lambda *line: lines.append(line)) is None
    assert any("run attempt 2 is a manual re-run" in m for _, m in lines)
