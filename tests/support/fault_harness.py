"""Run the real action in process against the GitHub simulator and check issue 9's invariant.

``run_action(console, environ, timeline, clock)`` is the action's own lifecycle; the test only
chooses the clock (``FastClock``: real time, but the adapter's retry waits return at once and are
recorded) and, for the read-timeout fault, a 3 s HTTP timeout (``fast_http`` monkeypatch).
The agent is the scripted stream-json agent as a real subprocess.
"""

from __future__ import annotations

import functools
import io
import json
import os
import shutil
import signal
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.gha import Console
from fullsend.adapters.github import forge as github_adapter
from fullsend.app.action import lifecycle as run_module
from fullsend.app.action.skip.facts import PreflightFacts
from fullsend.app.action.skip.receipt import check_receipt
from fullsend.app.timeline import Timeline
from fullsend.core.model import Repo
from fullsend.core.receipt.signed import receipt_claim
from fullsend.core.scalars import format_time
from fullsend.simulator.fixtures import StandardScenario, oidc_request_token, shim_workflow_ref, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.sim_entry import simulated

CLIENT_TIMEOUT_S = 3  # the adapter's per-attempt HTTP timeout in these tests (default 15 s)
HANG_S = 5.0  # a hanging request outlasts the client's timeout
TURN_S = "3"  # the scripted agent's turn: a steer at the 1-2 s polls lands mid-turn
MY_RUN_AGE_S = 60


class FastClock(SystemClock):
    """Real time, but ``sleep`` (only the adapter's retry backoff uses it) returns at once and is recorded."""

    def __init__(self) -> None:
        super().__init__()
        self.slept_s: list[float] = []

    def sleep(self, seconds: float) -> bool:
        self.slept_s.append(seconds)
        return True


def fast_http(monkeypatch: Any) -> None:
    """The action's forge with a short per-attempt timeout (the read-timeout fault costs 3 s, not 15)."""
    monkeypatch.setattr(
        run_module, "GitHubForge", functools.partial(github_adapter.GitHubForge, timeout_s=CLIENT_TIMEOUT_S)
    )


def agent_cli() -> str:
    return shutil.which("fullsend-scripted-agent") or str(Path(sys.executable).parent / "fullsend-scripted-agent")


def new_scenario(sim: GitHubSimulator) -> StandardScenario:
    """FIX with my run created a minute ago (the simulator runs on real time)."""
    created = datetime.now(UTC) - timedelta(seconds=MY_RUN_AGE_S)
    return standard_pr_scenario(sim, created_at=format_time(created))


def runner_env(
    tmp: Path, sim: GitHubSimulator, fix: StandardScenario, run_id: int, turn_s: str = TURN_S
) -> dict[str, str]:
    """What a GitHub runner gives the action's container (action.yml), poll and status edits 1 s."""
    for sub in ("workspace", "files", "home"):
        (tmp / sub).mkdir(parents=True, exist_ok=True)
    event = tmp / "event.json"
    event.write_text(
        json.dumps(
            {
                "action": "created",
                "issue": {"number": fix.pr, "pull_request": {}},
                "comment": {"id": 1, "body": "/fs-review", "user": {"login": "reviewer"}},
            }
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_", "ACTIONS_", "SCRIPTED_"))}
    env.update(
        {
            "GITHUB_ACTIONS": "true",
            "GITHUB_API_URL": sim.api_url,
            "GITHUB_GRAPHQL_URL": sim.graphql_url,
            "GITHUB_SERVER_URL": "https://github.example",
            "GITHUB_REPOSITORY": "org/repo",
            "GITHUB_RUN_ID": str(run_id),
            "GITHUB_RUN_ATTEMPT": "1",
            "GITHUB_WORKFLOW_REF": shim_workflow_ref(sim),
            "ACTIONS_ID_TOKEN_REQUEST_URL": sim.oidc_request_url,  # the stage job signs its receipt
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN": oidc_request_token(sim, run_id),
            "GITHUB_JOB": "review",
            "GITHUB_EVENT_NAME": "issue_comment",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_WORKSPACE": str(tmp / "workspace"),
            "GITHUB_OUTPUT": str(tmp / "files" / "output"),
            "GITHUB_STEP_SUMMARY": str(tmp / "files" / "summary"),
            "HOME": str(tmp / "home"),
            "SCRIPTED_AGENT_LOG": str(tmp / "agent.log"),
            "SCRIPTED_AGENT_TURN_S": turn_s,
            "INPUT_GITHUB_TOKEN": fix.job_token,
            "INPUT_ROLE_TOKEN": fix.role_token,
            "INPUT_STAGE": "review",
            "INPUT_RUNTIME": "claude",
            "INPUT_AGENT_CLI": agent_cli(),
            "INPUT_PROMPT": "Review the pull request.",
            "INPUT_POLL_INTERVAL_SECONDS": "1",
            "INPUT_STATUS_INTERVAL_SECONDS": "1",  # the closing edit waits out at most this
            "INPUT_TIMEOUT_MINUTES": "30",
            "INPUT_SANDBOX": "local",
            "INPUT_MAX_ITERATIONS": "1",
            "INPUT_STATUS_COMMENT": "true",
            "INPUT_RECEIPT_ISSUER": sim.issuer.url,
            "INPUT_FULLSEND_DIR": ".fullsend",
        }
    )
    return env


@dataclass
class ActionResult:
    """One finished in-process run of the action."""

    exit_code: int
    console: str
    outputs: dict[str, str]
    summary: str
    timeline: Timeline
    slept_s: list[float]
    agent_messages: list[str]

    def acked_run_ids(self) -> set[int]:
        """Run ids of every delivered batch whose message id the runtime acknowledged (an ``ack`` row
        not taken back by a later ``withdrawn`` row)."""
        held: dict[int, int] = {}
        for e in self.timeline.of_kind("ack", "withdrawn"):
            for rid in e.run_ids:
                held[rid] = held.get(rid, 0) + (1 if e.kind == "ack" else -1)
        acked = {rid for rid, count in held.items() if count > 0}
        batches = [e.run_ids for e in self.timeline.of_kind("steer") if e.run_ids]
        return {rid for batch in batches if batch[-1] in acked for rid in batch}

    def warnings(self) -> list[str]:
        return [line for line in self.console.splitlines() if line.startswith("::warning::")]


def read_outputs(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    lines = path.read_text().split("\n") if path.exists() else []
    i = 0
    while i < len(lines):
        if "<<" in lines[i]:
            name, delim = lines[i].split("<<", 1)
            j = lines.index(delim, i + 1)
            out[name] = "\n".join(lines[i + 1 : j])
            i = j + 1
        else:
            i += 1
    return out


def run_in_process(env: dict[str, str], tmp: Path) -> ActionResult:
    """``fullsend.app.action.lifecycle.run_action`` with a ``FastClock``; the signal handlers it installs are restored."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    stream, timeline, clock = io.StringIO(), Timeline(), FastClock()
    try:
        code = run_module.run_action(Console(stream), env, timeline, clock, deployment=simulated(env))
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
    log = tmp / "agent.log"
    messages = [json.loads(line)["text"] for line in log.read_text().splitlines()] if log.exists() else []
    summary = Path(env["GITHUB_STEP_SUMMARY"])
    return ActionResult(
        code,
        stream.getvalue(),
        read_outputs(Path(env["GITHUB_OUTPUT"])),
        summary.read_text() if summary.exists() else "",
        timeline,
        clock.slept_s,
        messages,
    )


@dataclass
class Receipts:
    """The receipts on the item: comments by the job-token login whose whole body is a receipt."""

    comments: list[dict[str, Any]] = field(default_factory=list)

    @property
    def run_ids(self) -> set[int]:
        return {rid for c in self.comments for rid in (receipt_claim(c["body"]) or _NONE).consumed}


class _NoMarker:
    consumed: tuple[int, ...] = ()


_NONE = _NoMarker()


def receipts(sim: GitHubSimulator, fix: StandardScenario) -> Receipts:
    return Receipts(
        [
            c
            for c in sim.comments(fix.pr)
            if c["user"]["login"] == fix.job_login and receipt_claim(c["body"]) is not None
        ]
    )


def queued_run_skips(sim: GitHubSimulator, fix: StandardScenario, run_id: int, tmp: Path) -> bool:
    """The real pre-flight receipt check of the queued run ``run_id`` (faults cleared first)."""
    sim.clear_faults()
    forge = github_adapter.GitHubForge(
        Repo("org", "repo"), sim.api_url, sim.graphql_url, fix.job_token, fix.role_token, FastClock()
    )
    facts = PreflightFacts(
        stage="review",
        run_id_raw=str(run_id),
        run_attempt="1",
        repository="org/repo",
        item_number=fix.pr,
        job_token=fix.job_token,
        role_token=fix.role_token,
        minted=True,
        fullsend_dir=str(tmp / "no-fullsend-dir"),
        event_name="issue_comment",
        receipt_issuer=sim.issuer.url,
        workflow_ref=shim_workflow_ref(sim),
    )
    return check_receipt(forge, facts, lambda level, message: None) is not None


#: The summary's Receipt row when the receipt's POST proved nothing either way.
UNKNOWN_ROW = "| Receipt | unknown: the post got no usable answer, so it may exist |"


def check_invariant(
    result: ActionResult, sim: GitHubSimulator, fix: StandardScenario, follow_ups: list[int], tmp: Path
) -> dict[int, str]:
    """Issue 9's invariant after a (faulted) run; returns ``{follow-up id: "absorbed" | "left"}``.

    * every accepted follow-up run is either acknowledged and listed in a receipt (its queued run
      skips), or listed nowhere (its queued run does the work);
    * a receipt lists only acknowledged runs, and no receipt exists after a failed run;
    * the outputs and the step summary report exactly the receipt that was posted, and the summary
      names every follow-up run the watcher judged but left to the queued run.
    """
    posted = receipts(sim, fix)
    acked = result.acked_run_ids()
    fate: dict[int, str] = {}
    for run_id in follow_ups:
        listed = run_id in posted.run_ids
        assert not listed or run_id in acked, f"receipt claims unacknowledged run {run_id}"
        assert queued_run_skips(sim, fix, run_id, tmp) == listed, f"queued run {run_id} decides wrongly"
        fate[run_id] = "absorbed" if listed else "left"
    if result.exit_code != 0:
        assert posted.comments == [], "a failed run left a receipt"
    claimed = {int(i) for i in result.outputs.get("consumed_run_ids", "").split(",") if i}
    if result.outputs.get("receipt_url"):
        assert claimed == posted.run_ids and claimed <= acked
        assert f"[receipt]({result.outputs['receipt_url']})" in result.summary
    elif claimed:  # posted, but GitHub's answer did not say where (issue 18)
        assert claimed == posted.run_ids and claimed <= acked
        assert "| Receipt | posted (URL unknown) |" in result.summary
    elif UNKNOWN_ROW in result.summary:  # no positive proof either way (docs/rules.md#receipt-unknown)
        assert claimed == set() and posted.run_ids <= acked
    else:
        assert claimed == set() and "| Receipt | none |" in result.summary and posted.comments == []
    judged = {rid for e in result.timeline.of_kind("judge") for rid in e.run_ids}
    for run_id, where in fate.items():  # a run the watcher saw and left is named in the summary
        assert where == "absorbed" or run_id not in judged or str(run_id) in result.summary, result.summary
    shown = ", ".join(str(i) for i in sorted(claimed)) or "none"
    assert f"| Follow-up runs absorbed | {shown} |" in result.summary
    assert f"| Outcome | `{result.outputs['outcome']}`" in result.summary
    return fate
