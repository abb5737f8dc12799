"""The adopter-path harness without act (default tier): the runs an event starts get the jobs
GitHub shows once Route decided (tests/act/adopter/actions.py), Route's inputs read from the
workflows as committed — the shim init writes, calling the hosted dispatch workflow of a release."""

from __future__ import annotations

import subprocess
from pathlib import Path

from fullsend.app.commands.init import HOSTED_DISPATCH, InitPlan, render_files
from tests.act.adopter.actions import ActEnv, Actions, Settings
from tests.act.adopter.plays import REVIEWER, REVIEWER_TOKEN, comment, open_pull_request
from tests.act.adopter.world import MAINTAINER_TOKEN, world

REPO_ROOT = Path(__file__).resolve().parents[3]
IDENTITY = ["-c", "user.name=t", "-c", "user.email=t@invalid"]


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *IDENTITY, *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def _release_repo(folder: Path) -> tuple[Path, str]:
    """A repository whose one commit holds this checkout's hosted dispatch workflow."""
    repo = folder / "release"
    (repo / HOSTED_DISPATCH).parent.mkdir(parents=True)
    (repo / HOSTED_DISPATCH).write_text((REPO_ROOT / HOSTED_DISPATCH).read_text())
    _git(folder, "init", "-q", "-b", "main", str(repo))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "release")
    return repo, _git(repo, "rev-parse", "HEAD")


def _adopted(w, folder: Path, ref: str) -> None:
    checkout = folder / "adopter"
    _git(folder, "init", "-q", "-b", "main", str(checkout))
    for rel, text in render_files(InitPlan(("review", "fix"), ref=ref)):
        (checkout / rel).parent.mkdir(parents=True, exist_ok=True)
        (checkout / rel).write_text(text)
    (checkout / "app.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    _git(checkout, "add", "-A")
    _git(checkout, "commit", "-q", "-m", "init")
    _git(checkout, "push", "-q", w.clone_url(MAINTAINER_TOKEN), "main")


def test_each_run_gets_the_jobs_route_selects_as_the_committed_workflows_say(tmp_path: Path):
    with world(tmp_path / "world") as w:
        release, sha = _release_repo(tmp_path)
        _adopted(w, tmp_path, sha)
        act = ActEnv(Path("/nonexistent/act"), "", "", ())
        actions = Actions(w, Settings({}, {}), release, act, tmp_path / "workspace")
        number, _ = open_pull_request(w, tmp_path)
        [opened] = [s for s in actions.scheduled.values() if s.emitted.payload["action"] == "opened"]
        assert (opened.decision.stage, opened.decision.rule) == ("review", "route-item-event")
        jobs = {j["name"]: (j["status"], j["conclusion"]) for j in w.sim.jobs_of(opened.emitted.id)}
        assert jobs["dispatch / Route"] == ("completed", "success")
        assert jobs["dispatch / Review"] == ("queued", None) and jobs["dispatch / Fix"] == ("completed", "skipped")
        assert w.sim.get_run(opened.emitted.id)["status"] == "in_progress"
        w.sim.add_token(REVIEWER_TOKEN, REVIEWER, "User", contents="write")
        made = comment(w, number, "/fs-fix please")
        [fix] = [s for s in actions.scheduled.values() if s.emitted.payload.get("comment", {}).get("id") == made["id"]]
        assert fix.decision.stage == "fix" and fix.stage_job == "dispatch / Fix"
        comment(w, number, "no command here")
        plain = list(actions.scheduled.values())[-1]
        assert plain.decision.stage == "" and w.sim.get_run(plain.emitted.id)["conclusion"] == "success"
