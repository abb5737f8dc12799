"""Issue 31: follow-up runs of a shim that calls the dispatch workflow steer-action hosts, through
the simulator and the real adapter (docs/rules.md#chain-differs, "A hosted dispatch workflow").

GitHub's workflow-run object lists each called workflow in ``referenced_workflows`` as ``path``
(``<owner>/<repo>/.github/workflows/<file>@<ref as written in uses:>``), ``sha`` and, only when
the call named a branch or tag, ``ref``; a job of a called workflow is named ``<caller job> /
<called job>`` ("dispatch / Route").  A call pinned by commit therefore carries the SHA in
``path`` and no ``ref``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.timeline import Timeline
from fullsend.core.model import Repo
from fullsend.core.watch.settle import Outcome
from fullsend.simulator.fixtures import (
    JOB_TOKEN,
    ROLE_TOKEN,
    ROUTE_JOB,
    STAGE_JOB,
    add_follow_up_run,
    standard_pr_scenario,
)
from fullsend.simulator.server import GitHubSimulator
from tests.app.watch.watch_rig import CANDIDATE_AT, RecordingSteerer, Rig, SimClock

PIN = "5e1ec7ed0c0ffee0ddba11ab1e0b5e55ed0fab1e"
OTHER_PIN = "0123456789abcdef0123456789abcdef01234567"
HOSTED = "fullsend-ai/steer-action/.github/workflows/dispatch.yml"


def pinned(path: str = HOSTED, sha: str = PIN) -> dict[str, str]:
    """A called workflow pinned by commit, as GitHub lists it: no ``ref``."""
    return {"path": f"{path}@{sha}", "sha": sha}


def tagged(tag: str = "v1", sha: str = PIN) -> dict[str, str]:
    return {"path": f"{HOSTED}@{tag}", "ref": f"refs/tags/{tag}", "sha": sha}


def _rig(sim: GitHubSimulator, clock: SimClock, chain: list[dict[str, str]]) -> Rig:
    fix = standard_pr_scenario(sim, referenced_workflows=chain)
    forge = GitHubForge(Repo("org", "repo"), sim.api_url, sim.graphql_url, JOB_TOKEN, ROLE_TOKEN, clock)
    return Rig(sim, fix, clock, forge, RecordingSteerer(), [], Timeline())


@pytest.fixture
def sim_clock() -> Iterator[tuple[GitHubSimulator, SimClock]]:
    clock = SimClock()
    with GitHubSimulator(clock=clock.now) as sim:
        yield sim, clock


def _candidate(rig: Rig, run_id: int, chain: list[dict[str, str]], **fields: Any) -> None:
    rig.sim.move_head(7, "b" * 40)
    add_follow_up_run(
        rig.sim,
        run_id=run_id,
        event="pull_request_target",
        pull_requests=(7,),
        created_at=CANDIDATE_AT,
        referenced_workflows=chain,
        **fields,
    )


def test_a_follow_up_of_the_hosted_workflow_at_my_pinned_commit_is_steered(sim_clock) -> None:
    rig = _rig(*sim_clock, [pinned()])
    _candidate(rig, 55, [pinned()])
    w = rig.watcher()
    me = w.result().me
    assert me is not None and (me.route_job_name, me.stage_job_name) == (ROUTE_JOB, STAGE_JOB)
    assert [(rw.path, rw.ref, rw.sha) for rw in me.referenced_workflows] == [(f"{HOSTED}@{PIN}", "", PIN)]
    assert w.poll_and_steer() is Outcome.STEERED
    assert [m.follow_up_run_id for m in rig.steerer.messages] == [55]


@pytest.mark.parametrize(
    ("what", "theirs"),
    [
        (
            "another repository's workflow of the same path",
            [pinned("evil/steer-action/.github/workflows/dispatch.yml")],
        ),
        (
            "another owner's copy of the repository",
            [pinned("fullsend-ai-fork/steer-action/.github/workflows/dispatch.yml")],
        ),
        ("the hosted workflow at another commit", [pinned(sha=OTHER_PIN)]),
        ("the hosted workflow by tag, though the tag names my commit", [tagged()]),
        ("the hosted workflow and one more", [pinned(), pinned("org/repo/.github/workflows/extra.yml")]),
        (
            "another file of the same repository and commit",
            [pinned("fullsend-ai/steer-action/.github/workflows/ci.yml")],
        ),
    ],
)
def test_a_follow_up_of_any_other_workflow_is_refused(sim_clock, what: str, theirs: list[dict[str, str]]) -> None:
    rig = _rig(*sim_clock, [pinned()])
    _candidate(rig, 55, theirs)
    w = rig.watcher()
    rig.logs.clear()
    assert w.poll_and_steer() is Outcome.EMPTY, what
    assert rig.steerer.messages == []
    assert any("Follow-up run 55 rejected" in m and "[chain-differs]" in m for _, m in rig.logs), rig.logs


def test_a_pinned_run_is_refused_by_a_run_by_tag_and_the_other_way_round(sim_clock) -> None:
    rig = _rig(*sim_clock, [tagged()])
    _candidate(rig, 55, [pinned()])
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.EMPTY and rig.steerer.messages == []


def test_a_call_by_tag_compares_path_and_ref_and_never_the_commit(sim_clock) -> None:
    """No pin is required (docs/rules.md#chain-differs): the runs of a call by tag steer each other
    whatever commit the tag named when each started; a pin is what makes the match exact."""
    rig = _rig(*sim_clock, [tagged(sha=PIN)])
    _candidate(rig, 55, [tagged(sha=OTHER_PIN)])
    w = rig.watcher()
    assert w.poll_and_steer() is Outcome.STEERED


def test_a_hosted_call_whose_jobs_are_not_named_by_the_dispatch_job_is_refused(sim_clock) -> None:
    """The called workflow's jobs carry the caller job's name: a Route job of another calling job
    (``other / Route``) is a decoy, never my Route job."""
    rig = _rig(*sim_clock, [pinned()])
    _candidate(rig, 55, [pinned()], route=None, stage_status=None, status="completed")
    rig.sim.add_job(55, "other / Route", "completed", "success")
    rig.sim.add_job(55, "other / Review", "queued")
    w = rig.watcher()
    rig.logs.clear()
    assert w.poll_and_steer() is Outcome.EMPTY and rig.steerer.messages == []
    assert any("Follow-up run 55 rejected" in m and "[route-missing]" in m for _, m in rig.logs), rig.logs
