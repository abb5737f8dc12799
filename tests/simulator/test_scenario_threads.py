"""The scenario actions of a pull request's review threads (``fullsend.simulator.scenario_threads``):
examples/scenarios/review-thread-steer.yml plays a bot's finding and a reviewer's ``/fs-review``
reply with the shim run it starts, served over HTTP as GitHub serves them; the queued run's event
file is that reply's, and Route selects review for it; a bad thread entry names its key."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import requests

from fullsend.core.route.decision import Role, RouteDecision, decide
from fullsend.core.route.event import route_event
from fullsend.errors import ConfigError
from fullsend.simulator.fixtures import JOB_TOKEN
from fullsend.simulator.scenario import build, load_scenario, parse_scenario
from fullsend.simulator.server import GitHubSimulator

SCENARIOS = Path(__file__).resolve().parents[2] / "examples" / "scenarios"
FINDING, REPLY, FOLLOW_UP_RUN = 1400000100, 1400000101, 33740015300
R = "/repos/org/repo"


def _get(sim: GitHubSimulator, path: str) -> Any:
    response = requests.get(sim.api_url + path, headers={"Authorization": f"token {JOB_TOKEN}"}, timeout=10)
    response.raise_for_status()
    return response.json()


def test_the_thread_scenario_plays_a_reply_and_its_review_comment_run() -> None:
    scenario = load_scenario(SCENARIOS / "review-thread-steer.yml")
    said: list[str] = []
    with GitHubSimulator() as sim:
        build(sim, scenario, datetime.now(UTC), said.append)
        assert [r["id"] for r in _get(sim, f"{R}/actions/workflows/fullsend.yml/runs")["workflow_runs"]] == [
            33740015232
        ]
        thread = _get(sim, f"{R}/pulls/7/comments")
        run = _get(sim, f"{R}/actions/runs/{FOLLOW_UP_RUN}")
        jobs = _get(sim, f"{R}/actions/runs/{FOLLOW_UP_RUN}/jobs")["jobs"]
        payload = sim.thread_event(REPLY)
    assert [(c["id"], c["user"]["login"], c["path"], c["line"], c.get("in_reply_to_id")) for c in thread] == [
        (FINDING, "coderabbitai[bot]", "src/db.py", 88, None),
        (REPLY, "reviewer", "src/db.py", 88, FINDING),
    ]
    assert (run["event"], run["display_title"], run["actor"]["login"], run["pull_requests"]) == (
        "pull_request_review_comment",
        f"org/repo#7 review_comment:{REPLY}",
        "reviewer",
        [],
    )
    assert [(j["name"], j["status"], j["conclusion"]) for j in jobs] == [
        ("dispatch / Route", "completed", "success"),
        ("dispatch / Review", "queued", None),
    ]
    assert said[-1].endswith(f"the shim started follow-up run {FOLLOW_UP_RUN} (org/repo#7 review_comment:{REPLY})")
    queued = json.loads((SCENARIOS / "review-thread-steer.queued.event.json").read_text())
    for key in ("id", "body", "path", "line", "in_reply_to_id"):
        assert queued["comment"][key] == payload["comment"][key], key
    decision = decide(route_event("pull_request_review_comment", queued, "org/repo"), Role("reviewer", "write"))
    assert isinstance(decision, RouteDecision) and decision.stage == "review"


def _thread(**entry: Any) -> dict[str, Any]:
    return {"timeline": [{"do": "thread-follow-up", "after_s": 0, "body": "/fs-review x", **entry}]}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (_thread(line=0), "timeline[0].line must be a positive whole number"),
        (_thread(path="/etc/passwd"), "timeline[0].path must be a file of the pull request"),
        (_thread(in_reply_to=FINDING), "timeline[0].in_reply_to must be the comment_id of a review-comment"),
        (_thread(body=""), "timeline[0].body is required"),
        (_thread(sha="bbb222"), "timeline[0]: unknown key 'sha'"),
        ({"timeline": [{"do": "review-comment", "after_s": 0, "body": "x", "run_id": 5}]}, "unknown key 'run_id'"),
    ],
)
def test_a_bad_thread_entry_names_its_key(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_scenario(data)
