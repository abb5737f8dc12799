"""Issue 42 acceptance, play (1): the default setup an adopter gets from ``fullsend init --stages
review,fix`` (hosted dispatch, GitHub Apps), committed unedited and played by act as written.

The path, step by step (``WALKTHROUGH`` of tests/act/adopter/adopter.py; docs/adopting.md names
the same steps in this order):

1. the adopter runs the release's ``fullsend init`` and ``fullsend lint`` in a fresh repository,
   sets up the two Apps, the variables and the secrets, and pushes init's output unedited;
2. the coder App opens a pull request → GitHub starts the shim → Route selects Review;
3. Review works on the pull request's head commit; its agent posts a review with line comments
   through ``fullsend review`` requesting changes, as the review App;
4. that review starts the shim → Route selects Fix;
5. Fix checks out the head branch, commits and pushes to it with the credential the workflow
   gives it → the pull request's head moves (``synchronize``); a ``/fs-fix`` comment arrives
   while Fix works → Fix is steered and posts a receipt;
6. the ``/fs-fix`` comment's own run, queued behind Fix, skips on that receipt, signed with Fix's
   OIDC token, once its proof verifies.

The pull request's head is hostile as well (``HOSTILE_FILES``: it rewrites the review and fix
prompts and harnesses under ``.fullsend/`` and adds a ``SessionStart`` hook to Claude Code's
``.claude/settings.json``): Review and Fix take the base branch's task and harness, and no hook of
the head runs, while the head's files are in the agent's reach as data.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from fullsend.core.wire import OPENING_LINE
from tests.act.act_harness import TIMINGS
from tests.act.adopter.actions import ActEnv, Actions
from tests.act.adopter.adopter import WALKTHROUGH, Adopted, adopt
from tests.act.adopter.plays import (
    HEAD_DIR,
    HOSTILE_FILES,
    REVIEWER,
    REVIEWER_TOKEN,
    agent_env,
    assert_head_changed_nothing,
    assert_played,
    assert_skipped_on_a_verified_receipt,
    comment,
    in_head,
    once_the_agent_works,
    only_run,
    open_pull_request,
    seen,
    signed_receipt,
)
from tests.act.adopter.world import OWNER, REPO, World, publish_release, world

pytestmark = [pytest.mark.slow, pytest.mark.full, pytest.mark.xdist_group("act"), pytest.mark.timeout(1500)]
FIX_STEER = "/fs-fix and keep the old greeting in a comment"
FIXED = "def greet(name):\n    return 'hello ' + name\n\n\ndef farewell(name):\n    return 'goodbye, ' + name\n"


@dataclass
class Path1:
    """Play (1) in progress: the world, its runs, the adoption, the pull request."""

    w: World
    actions: Actions
    adopted: Adopted
    number: int
    head: str
    started: float

    def lap(self, label: str) -> None:
        TIMINGS.append((f"adopter play (1): {label}", time.monotonic() - self.started))

    def prompt(self, stage: str) -> str:
        return (self.adopted.checkout / ".fullsend" / "prompts" / f"{stage}.md").read_text().strip()


def test_the_default_setup_reviews_then_fixes_with_a_steer_and_a_receipt(adopter_act: ActEnv, released, tmp_path: Path):
    started = time.monotonic()
    with world(tmp_path / "world") as w:
        publish_release(w.git, released.repo, [released.version, released.version.split(".")[0]])
        adopted = adopt(w, released, tmp_path / "adopter", tmp_path / "workspace", "--stages", "review,fix")
        assert not (adopted.checkout / ".github" / "workflows" / "fullsend-dispatch.yml").exists(), adopted.init_output
        actions = Actions(w, adopted.settings, released.repo, adopter_act, tmp_path / "workspace")
        number, head = open_pull_request(w, tmp_path, files=HOSTILE_FILES)
        play = Path1(w, actions, adopted, number, head, started)
        _review(play)
        comment_run = _fix(play)
        _queued(play, comment_run)
        assert adopted.steps == list(WALKTHROUGH)


def _review(play: Path1) -> None:
    """Review works on the head and requests changes as the review App, with line comments."""
    w, number, head = play.w, play.number, play.head
    play.adopted.steps.append("a pull request opens: Review")
    review_run = only_run(play.actions, "pull_request_target", "opened")
    assert play.actions.scheduled[review_run].decision.stage == "review"
    finding = {"path": "app.py", "line": 6, "body": "Say goodbye politely."}
    review = {"do": "review", "url": f"{w.web}/{OWNER}/{REPO}/pull/{number}", "event": "REQUEST_CHANGES"}
    review.update(body="One finding.", comments=[finding])
    played = play.actions.play(review_run, agent_env([{"do": "record"}, *in_head({"do": "record"}, review)]))
    play.lap("Review")
    assert_played(played, "Review")
    assert_head_changed_nothing(played, play.prompt("review"))
    base, reviewed = seen(played), seen(played, 1)
    assert base["head"] == w.head("main") and base["fullsend"], f"the harness and prompts come from the base: {base}"
    assert reviewed["head"] == head, f"the head checked out in {HEAD_DIR}/: {reviewed}"
    steps = {s["step"]: s for s in played.agent_steps()}
    assert steps["review"]["ok"], f"a review App distinct from the coder App: {steps['review']}"
    [posted] = w.sim.reviews(number)
    assert (posted["state"], posted["commit_id"], posted["user"]["login"]) == (
        "CHANGES_REQUESTED",
        head,
        w.apps["review"].login,
    )


def _fix(play: Path1) -> int:
    """The review starts Fix; Fix pushes to the head branch and is steered by a ``/fs-fix`` that
    arrives while it works; returns the id of that comment's own run."""
    w, number = play.w, play.number
    play.adopted.steps.extend(["changes requested: Fix", "a comment while Fix works: steered, receipt"])
    fix_run = only_run(play.actions, "pull_request_review", "submitted")
    assert play.actions.scheduled[fix_run].decision.stage == "fix", play.actions.scheduled[fix_run].decision
    w.sim.add_token(REVIEWER_TOKEN, REVIEWER, "User", contents="write")
    before = len(w.emitter.runs)
    w.agent_log.on_line.append(once_the_agent_works(f"run-{fix_run}", lambda: comment(w, number, FIX_STEER)))
    edit = [{"do": "write", "path": "app.py", "text": FIXED}, {"do": "commit", "message": "Say goodbye politely"}]
    played = play.actions.play(
        fix_run, agent_env([{"do": "record"}, *in_head({"do": "record"}, *edit, {"do": "push"})])
    )
    play.lap("Review + Fix")
    assert_played(played, "Fix")
    assert_head_changed_nothing(played, play.prompt("fix"))
    assert seen(played, 1)["branch"] == "add-farewell", f"Fix checks out the head branch: {seen(played, 1)}"
    push = next(s for s in played.agent_steps() if s["step"] == "push")
    assert push["ok"], f"git and the push credential for Fix: {push['output']}"
    pushed = w.sim.get_pull(number)["head"]["sha"]
    assert pushed != play.head and w.head("add-farewell") == pushed
    assert any(r.payload.get("action") == "synchronize" for r in w.emitter.runs[before:])
    steers = [m for m in played.agent_messages() if m.split("\n", 1)[0] == OPENING_LINE]
    assert len(steers) == 1 and "and keep the old greeting in a comment" in steers[0], played.agent_messages()
    comment_run = only_run(play.actions, "issue_comment", "created", before, sender=REVIEWER)
    assert signed_receipt(w, number, played).marker.consumed == (comment_run,)
    assert played.scheduled.job_workflow_ref.startswith("fullsend-ai/steer-action/.github/workflows/dispatch.yml@")
    return comment_run


def _queued(play: Path1, comment_run: int) -> None:
    """The ``/fs-fix`` comment's own run, queued behind Fix, skips on the receipt."""
    play.adopted.steps.append("the comment's queued run skips")
    assert play.actions.scheduled[comment_run].decision.stage == "fix"
    queued = play.actions.play(comment_run, agent_env([], turn_s=1))
    play.lap("the whole path")
    assert_played(queued, "Fix")
    assert_skipped_on_a_verified_receipt(queued, "Fix")
