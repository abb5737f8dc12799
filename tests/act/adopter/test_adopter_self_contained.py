"""Issue 42 acceptance, play (2): ``fullsend init --stages review,fix --dispatch self-contained``
(the dispatch workflow in the adopter's repository, steer-action pinned to the release), committed
unedited and played by act as written: the coder App opens a pull request → Review works on its
head; @reviewer comments ``/fs-review`` while the agent works → the run is steered and posts a
receipt, signed with the stage job's OIDC token → the comment's own run, queued behind it, skips
on that receipt once its proof verifies.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from fullsend.core.wire import OPENING_LINE
from tests.act.act_harness import TIMINGS
from tests.act.adopter.actions import ActEnv, Actions
from tests.act.adopter.adopter import adopt
from tests.act.adopter.plays import (
    HEAD_DIR,
    REVIEWER,
    REVIEWER_TOKEN,
    agent_env,
    assert_played,
    assert_skipped_on_a_verified_receipt,
    comment,
    once_the_agent_works,
    only_run,
    open_pull_request,
    seen,
    signed_receipt,
)
from tests.act.adopter.world import publish_release, world

pytestmark = [pytest.mark.slow, pytest.mark.full, pytest.mark.xdist_group("act"), pytest.mark.timeout(1200)]
STEER = "/fs-review please re-check the farewell"


def test_the_self_contained_setup_is_steered_and_its_queued_run_skips(adopter_act: ActEnv, released, tmp_path: Path):
    started = time.monotonic()
    with world(tmp_path / "world") as w:
        publish_release(w.git, released.repo, [released.version, released.version.split(".")[0]])
        args = ("--stages", "review,fix", "--dispatch", "self-contained")
        adopted = adopt(w, released, tmp_path / "adopter", tmp_path / "workspace", *args)
        assert (adopted.checkout / ".github" / "workflows" / "fullsend-dispatch.yml").is_file()
        actions = Actions(w, adopted.settings, released.repo, adopter_act, tmp_path / "workspace")
        number, head = open_pull_request(w, tmp_path)
        run = only_run(actions, "pull_request_target", "opened")
        assert actions.scheduled[run].decision.stage == "review"
        w.sim.add_token(REVIEWER_TOKEN, REVIEWER, "User", contents="write")
        before = len(w.emitter.runs)
        w.agent_log.on_line.append(once_the_agent_works(f"run-{run}", lambda: comment(w, number, STEER)))
        played = actions.play(run, agent_env([{"do": "record", "dir": HEAD_DIR}]))
        TIMINGS.append(("adopter play (2): Review, steered", time.monotonic() - started))
        assert_played(played, "Review")
        assert seen(played)["head"] == head, "the head checked out in pull-request/"
        steers = [m for m in played.agent_messages() if m.split("\n", 1)[0] == OPENING_LINE]
        assert len(steers) == 1 and "please re-check the farewell" in steers[0], played.agent_messages()
        comment_run = only_run(actions, "issue_comment", "created", before, sender=REVIEWER)
        assert signed_receipt(w, number, played).marker.consumed == (comment_run,)
        assert played.scheduled.job_workflow_ref.endswith("/.github/workflows/fullsend-dispatch.yml@refs/heads/main")

        queued = actions.play(comment_run, agent_env([], turn_s=1))
        TIMINGS.append(("adopter play (2): the queued run", time.monotonic() - started))
        assert_played(queued, "Review")
        assert_skipped_on_a_verified_receipt(queued, "Review")
