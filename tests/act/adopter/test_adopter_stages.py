"""Issue 42 acceptance, play (3): every other stage ``fullsend init`` offers, more lightly — from
``fullsend init --stages triage,code,retro,prioritize`` (hosted dispatch), committed unedited: the
event a person makes selects the stage in Route, and the stage job runs its agent to a terminal
status, under act, as written.

- triage: @author opens an issue;
- code and prioritize: @reviewer comments ``/fs-code`` and ``/fs-prioritize`` on it;
- retro: @reviewer comments ``/fs-retro`` on a pull request the coder App opened.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import requests

from tests.act.act_harness import TIMINGS
from tests.act.adopter.actions import ActEnv, Actions
from tests.act.adopter.adopter import adopt
from tests.act.adopter.plays import agent_env, assert_played, open_pull_request, shown_outputs
from tests.act.adopter.world import OWNER, REPO, World, publish_release, world

pytestmark = [pytest.mark.slow, pytest.mark.full, pytest.mark.xdist_group("adopter"), pytest.mark.timeout(1500)]
PEOPLE = {"author": "ghp_sim-author-0007", "reviewer": "ghp_sim-reviewer-0008"}


def _post(w: World, login: str, path: str, body: dict) -> dict:
    made = requests.post(
        f"{w.sim.api_url}/repos/{OWNER}/{REPO}{path}",
        headers={"Authorization": f"token {PEOPLE[login]}"},
        json=body,
        timeout=10,
    )
    assert made.status_code == 201, made.text
    return dict(made.json())


def _last_run(w: World, event: str) -> int:
    return [r.id for r in w.emitter.runs if r.event == event][-1]


def test_each_other_stage_is_selected_by_route_and_its_agent_runs_to_the_end(
    adopter_act: ActEnv, released, tmp_path: Path
):
    started = time.monotonic()
    with world(tmp_path / "world") as w:
        publish_release(w.git, released.repo, [released.version, released.version.split(".")[0]])
        stages = "triage,code,retro,prioritize"
        adopted = adopt(w, released, tmp_path / "adopter", tmp_path / "workspace", "--stages", stages)
        actions = Actions(w, adopted.settings, released.repo, adopter_act, tmp_path / "workspace")
        for login, token in PEOPLE.items():
            w.sim.add_token(token, login, "User", contents="write")
        issue = _post(w, "author", "/issues", {"title": "Greet in French", "body": "Bonjour."})["number"]
        runs = {"triage": _last_run(w, "issues")}
        for stage in ("code", "prioritize"):
            _post(w, "reviewer", f"/issues/{issue}/comments", {"body": f"/fs-{stage}"})
            runs[stage] = _last_run(w, "issue_comment")
        pull, _ = open_pull_request(w, tmp_path)
        _post(w, "reviewer", f"/issues/{pull}/comments", {"body": "/fs-retro"})
        runs["retro"] = _last_run(w, "issue_comment")
        for stage, run in runs.items():
            assert actions.scheduled[run].decision.stage == stage, (stage, actions.scheduled[run].decision)
            played = actions.play(run, agent_env([], turn_s=1))
            title = stage.capitalize()
            assert_played(played, title)
            assert shown_outputs(played, title)["outcome"] == "succeeded", (stage, shown_outputs(played, title))
            prompt = (adopted.checkout / ".fullsend" / "prompts" / f"{stage}.md").read_text().strip()
            assert played.agent_messages()[0].startswith(prompt.splitlines()[0])
            TIMINGS.append((f"adopter play (3): {stage}", time.monotonic() - started))
