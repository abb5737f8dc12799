"""Issue 42 acceptance, play (1): the default setup an adopter gets from ``fullsend init --stages
review,fix`` (hosted dispatch, GitHub Apps), committed unedited and played by act as written.

The path, step by step (docs/adopting.md names the same steps in this order):

1. the adopter runs the release's ``fullsend init`` and ``fullsend lint`` in a fresh repository,
   sets up the two Apps, the variables and the secrets, and pushes init's output unedited;
2. the coder App opens a pull request → GitHub starts the shim → Route selects Review;
3. Review works on the pull request's head commit; its agent posts a review with line comments
   through ``fullsend review`` requesting changes, as the review App;
4. that review starts the shim → Route selects Fix;
5. Fix checks out the head branch, commits and pushes to it with the credential the workflow
   gives it → the pull request's head moves (``synchronize``); a ``/fs-fix`` comment arrives
   while Fix works → Fix is steered and posts a receipt;
6. the ``/fs-fix`` comment's own run, queued behind Fix, skips on that receipt.

Assertions that wait on a product change of issue 42 (branch w42p) say which, in their message.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import requests

from fullsend.core.receipt.marker import parse_marker
from fullsend.core.wire import OPENING_LINE
from fullsend.simulator.fixtures import JOB_LOGIN
from tests.act.act_harness import TIMINGS
from tests.act.adopter.actions import ActEnv, Actions, Played, route_line
from tests.act.adopter.adopter import adopt
from tests.act.adopter.world import OWNER, REPO, World, app_token, publish_release, world

pytestmark = [pytest.mark.slow, pytest.mark.full, pytest.mark.xdist_group("podman"), pytest.mark.timeout(1500)]
REVIEWER_TOKEN = "ghp_sim-reviewer-0005"
FIX_STEER = "/fs-fix and keep the old greeting in a comment"
TURN_S = "8"
#: Where the stage jobs check out the pull request's head (w42p's contract: the workspace root is
#: the base branch, sparse; the head with its history below it).
HEAD_DIR = "pull-request"


def _git(cwd: Path, *args: str) -> str:
    identity = ["-c", "user.name=coder", "-c", "user.email=coder@invalid"]
    proc = subprocess.run(["git", *identity, *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def _open_pull_request(w: World, folder: Path) -> tuple[int, str]:
    """The coder App pushes a branch and opens a pull request (as the code stage would)."""
    token = app_token(w, "coder", "contents=write pull_requests=write", folder)
    work = folder / "coder"
    _git(folder, "clone", "--quiet", w.clone_url(token), str(work))
    _git(work, "checkout", "--quiet", "-b", "add-farewell")
    (work / "app.py").write_text(
        "def greet(name):\n    return 'hello ' + name\n\n\ndef farewell(name):\n    return 'bye ' + name\n"
    )
    _git(work, "commit", "--quiet", "-am", "Add farewell")
    _git(work, "push", "--quiet", "origin", "add-farewell")
    made = requests.post(
        f"{w.sim.api_url}/repos/{OWNER}/{REPO}/pulls",
        headers={"Authorization": f"token {token}"},
        json={"title": "Add farewell", "head": "add-farewell", "base": "main", "body": "Says goodbye."},
        timeout=10,
    )
    assert made.status_code == 201, made.text
    return made.json()["number"], _git(work, "rev-parse", "HEAD")


def _only_run(actions: Actions, event: str, action: str, after: int = 0) -> int:
    runs = [r for r in actions.world.emitter.runs[after:] if (r.event, r.payload.get("action")) == (event, action)]
    assert len(runs) == 1, [(r.event, r.payload.get("action")) for r in actions.world.emitter.runs]
    return runs[0].id


def _played(played: Played, stage: str) -> None:
    log = played.act.log[-12000:]
    assert played.act.exit_code == 0, f"act failed:\n{log}"
    assert (played.act.job_result("Route"), played.act.job_result(stage)) == ("succeeded", "succeeded"), log
    decision = played.scheduled.decision
    assert f"-> stage '{decision.stage or 'none'}'" in route_line(played.act), "act's Route decided otherwise"


def _agent_env(work: list[dict]) -> dict[str, str]:
    return {"SCRIPTED_AGENT_TURN_S": TURN_S, "SCRIPTED_AGENT_WORK": json.dumps(work)}


def _in_head(*steps: dict) -> list[dict]:
    """``steps`` done in the pull request's head checkout (``HEAD_DIR``)."""
    return [{**step, "dir": HEAD_DIR} for step in steps]


def _seen(played: Played, index: int = 0) -> dict:
    """What the agent's ``index``-th ``record`` step saw."""
    records = [s for s in played.agent_steps() if s["step"] == "record"]
    assert len(records) > index, played.agent_log
    return json.loads(records[index]["output"])


def test_the_default_setup_reviews_then_fixes_with_a_steer_and_a_receipt(adopter_act: ActEnv, released, tmp_path: Path):
    started = time.monotonic()
    with world(tmp_path / "world") as w:
        publish_release(w.git, released.repo, [released.version, released.version.split(".")[0]])
        adopted = adopt(w, released, tmp_path / "adopter", tmp_path / "workspace", "--stages", "review,fix")
        actions = Actions(w, adopted.settings, released.repo, adopter_act, tmp_path / "workspace")
        number, head = _open_pull_request(w, tmp_path)
        url = f"{w.web}/{OWNER}/{REPO}/pull/{number}"

        # Review, on the pull request's head commit.
        review_run = _only_run(actions, "pull_request_target", "opened")
        assert actions.scheduled[review_run].decision.stage == "review"
        finding = {"path": "app.py", "line": 6, "body": "Say goodbye politely."}
        review = {"do": "review", "url": url, "event": "REQUEST_CHANGES", "body": "One finding.", "comments": [finding]}
        played = actions.play(review_run, _agent_env([{"do": "record"}, *_in_head({"do": "record"}, review)]))
        TIMINGS.append(("adopter play (1): Review", time.monotonic() - started))
        _played(played, "Review")
        prompt = (adopted.checkout / ".fullsend" / "prompts" / "review.md").read_text().strip()
        assert played.agent_messages()[0].startswith(prompt.splitlines()[0])
        base, reviewed = _seen(played), _seen(played, 1)
        assert base["head"] == w.head("main") and base["fullsend"], (
            f"the harness and prompts come from the base: {base}"
        )
        assert reviewed["head"] == head, f"waits on w42p: the head checked out in {HEAD_DIR}/: {reviewed}"
        steps = {s["step"]: s for s in played.agent_steps()}
        assert steps["review"]["ok"], f"waits on w42p (a review App distinct from the coder App): {steps['review']}"
        [posted] = w.sim.reviews(number)
        assert (posted["state"], posted["commit_id"], posted["user"]["login"]) == (
            "CHANGES_REQUESTED",
            head,
            w.apps["review"].login,
        )

        # The review starts Fix; Fix pushes to the head branch and is steered meanwhile.
        fix_run = _only_run(actions, "pull_request_review", "submitted")
        assert actions.scheduled[fix_run].decision.stage == "fix", actions.scheduled[fix_run].decision
        w.sim.add_token(REVIEWER_TOKEN, "reviewer", "User", contents="write")
        before = len(w.emitter.runs)
        w.agent_log.on_line.append(_once_the_agent_works(f"run-{fix_run}", lambda: _comment(w.sim.api_url, number)))
        fixed = "def greet(name):\n    return 'hello ' + name\n\n\ndef farewell(name):\n    return 'goodbye, ' + name\n"
        work = _in_head(
            {"do": "record"},
            {"do": "write", "path": "app.py", "text": fixed},
            {"do": "commit", "message": "Say goodbye politely"},
            {"do": "push"},
        )
        played = actions.play(fix_run, _agent_env(work))
        TIMINGS.append(("adopter play (1): Review + Fix", time.monotonic() - started))
        _played(played, "Fix")
        seen = _seen(played)
        assert seen["branch"] == "add-farewell", f"waits on w42p (Fix checks out the head branch): {seen}"
        push = next(s for s in played.agent_steps() if s["step"] == "push")
        assert push["ok"], f"waits on w42p (git and the push credential for Fix): {push['output']}"
        pushed = w.sim.get_pull(number)["head"]["sha"]
        assert pushed != head and w.head("add-farewell") == pushed
        assert any(r.payload.get("action") == "synchronize" for r in w.emitter.runs[before:])
        steers = [m for m in played.agent_messages() if m.split("\n", 1)[0] == OPENING_LINE]
        assert len(steers) == 1 and "and keep the old greeting in a comment" in steers[0], played.agent_messages()
        comment_run = _only_run(actions, "issue_comment", "created", before)
        receipts = [c for c in w.sim.comments(number) if c["user"]["login"] == JOB_LOGIN]
        markers = [parse_marker(c["body"]) for c in receipts]
        assert [m.consumed for m in markers if m is not None] == [(comment_run,)]

        # The /fs-fix comment's own run skips on the receipt.
        assert actions.scheduled[comment_run].decision.stage == "fix"
        queued = actions.play(comment_run, _agent_env([]))
        TIMINGS.append(("adopter play (1): the whole path", time.monotonic() - started))
        _played(queued, "Fix")
        outputs = dict(line.split("=", 1) for line in queued.act.step_output("Fix", "Show the outputs") if "=" in line)
        assert (outputs["outcome"], outputs["skip_reason"]) == ("skipped", "receipt")
        assert queued.agent_log == []


def _comment(api_url: str, number: int) -> None:
    """@reviewer comments ``FIX_STEER`` on the pull request."""
    made = requests.post(
        f"{api_url}/repos/{OWNER}/{REPO}/issues/{number}/comments",
        headers={"Authorization": f"token {REVIEWER_TOKEN}"},
        json={"body": FIX_STEER},
        timeout=10,
    )
    made.raise_for_status()


def _once_the_agent_works(label: str, action: Callable[[], None]) -> Callable[[str, dict], None]:
    """An agent-log listener that runs ``action`` once, when the agent of ``label`` took its task."""
    done: list[bool] = []

    def listener(seen: str, line: dict) -> None:
        if seen == label and "text" in line and not done:
            done.append(True)
            action()

    return listener
