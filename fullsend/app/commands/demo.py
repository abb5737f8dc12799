"""``fullsend demo``: one steered run on the built-in GitHub simulator, printed as a timeline.

No token, no network: the simulator listens on 127.0.0.1 and the agent is the scripted
stream-json agent.  Plays issue 2's scenario — an authorized ``/fs-review`` comment and its
follow-up shim run arrive during the agent's first turn, are steered in, acknowledged and
receipted — then starts the same action as the queued follow-up run, which skips on the receipt.
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.gha import Console
from fullsend.app.action.lifecycle import run_action
from fullsend.app.action.timeline import Timeline
from fullsend.core.model import format_time
from fullsend.errors import ExitCode
from fullsend.ports import Clock
from fullsend.simulator.fixtures import add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator

COMMAND = "/fs-review please re-check the migration"


def _agent_wrapper(directory: Path) -> str:
    path = directory / "scripted-agent"
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m fullsend.simulator.agent.main "$@"\n')
    path.chmod(0o755)
    return str(path)


def _env(tmp: Path, sim: GitHubSimulator, fix: Any, run_id: int, turn_s: float) -> dict[str, str]:
    (tmp / "workspace").mkdir(exist_ok=True)
    event = tmp / "event.json"
    event.write_text(json.dumps({"action": "created", "issue": {"number": fix.pr, "pull_request": {}}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_", "ACTIONS_"))}
    env.update({
        "GITHUB_ACTIONS": "true", "GITHUB_API_URL": sim.api_url, "GITHUB_GRAPHQL_URL": sim.graphql_url,
        "GITHUB_REPOSITORY": "org/repo", "GITHUB_RUN_ID": str(run_id), "GITHUB_RUN_ATTEMPT": "1",
        "GITHUB_JOB": "review", "GITHUB_EVENT_NAME": "issue_comment", "GITHUB_EVENT_PATH": str(event),
        "GITHUB_WORKSPACE": str(tmp / "workspace"), "SCRIPTED_AGENT_TURN_S": str(turn_s),
        "SCRIPTED_AGENT_LOG": str(tmp / "agent.log"),
        "INPUT_GITHUB_TOKEN": fix.job_token, "INPUT_ROLE_TOKEN": fix.role_token, "INPUT_STAGE": "review",
        "INPUT_AGENT_CLI": _agent_wrapper(tmp), "INPUT_PROMPT": "Review the pull request.",
        "INPUT_POLL_INTERVAL_SECONDS": "1",
    })
    return env


def _print_timeline(timeline: Timeline, t0: datetime) -> None:
    """The run's timeline in time order (acknowledgements are recorded when the agent exits)."""
    for event in sorted(timeline.events, key=lambda e: e.at):
        if event.kind == "poll":
            continue
        offset = (event.at - t0).total_seconds()
        rule = f"  [{event.rule_id}]" if event.rule_id and f"[{event.rule_id}]" not in event.text else ""
        print(f"  +{offset:5.1f}s  {event.kind:<8} {event.text}{rule}", flush=True)


def run_demo(turn_s: float = 3.0, clock: Clock | None = None) -> int:
    """Play the scenario and print the timeline; returns ``ExitCode.OK`` when both runs behaved
    as expected, else ``ExitCode.FAILED``.  ``turn_s`` is the scripted agent's first turn in
    seconds; ``clock`` (default ``SystemClock()``) dates the scenario and the timeline's start.
    """
    clock = clock or SystemClock()
    with GitHubSimulator() as sim, tempfile.TemporaryDirectory(prefix="fullsend-demo-") as tmp_dir:
        tmp = Path(tmp_dir)
        fix = standard_pr_scenario(sim, created_at=format_time(clock.now() - timedelta(seconds=60)))
        added: dict[str, Any] = {}

        def follow_up(s: GitHubSimulator) -> None:
            added["comment"], added["run"] = add_comment_follow_up(s, COMMAND)
            print(f"  (GitHub) @reviewer commented {COMMAND!r}; the shim started run {added['run']['id']}")

        sim.on_request(sim.match("GET", r"/actions/workflows/fullsend\.yml/runs"), follow_up)
        print(f"Run {fix.my_run_id} reviews {fix.run_name} at {fix.head} (simulator at {sim.api_url})")
        quiet = Console(io.StringIO())
        (tmp / "a").mkdir()
        t0, timeline = clock.now(), Timeline()
        code = run_action(quiet, _env(tmp / "a", sim, fix, fix.my_run_id, turn_s), timeline)
        _print_timeline(timeline, t0)
        receipts = [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login]
        print(f"Run {fix.my_run_id} exited {code}.")
        for c in receipts:
            print(f"Receipt posted under the job token by {c['user']['login']}:\n    " + c["body"].replace("\n",
                                                                                                           "\n    "))
        if not added or not receipts:
            print("The demo did not produce a receipt; see the timeline above.")
            return ExitCode.FAILED
        queued_id = added["run"]["id"]
        print(f"\nThe queued run {queued_id} starts:")
        (tmp / "b").mkdir()
        t0, timeline = clock.now(), Timeline()
        code_b = run_action(quiet, _env(tmp / "b", sim, fix, queued_id, turn_s), timeline)
        _print_timeline(timeline, t0)
        ending = " without starting the agent." if code_b == 0 else "."
        print(f"Run {queued_id} exited {code_b}{ending}")
        return ExitCode.OK if code == ExitCode.OK and code_b == ExitCode.OK else ExitCode.FAILED
