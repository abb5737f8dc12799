"""``fullsend demo``: one steered run on the built-in GitHub simulator, told for a newcomer.

No token, no network: the simulator listens on 127.0.0.1 and the agent is the scripted
stream-json agent.  It prints a short preface (what is about to happen and why it matters), then
plays the scenario: run A starts the agent on a pull request; half a second after the agent
starts, a reviewer comments ``/fs-review …`` and the shim starts run B for it; run A checks run
B's provenance, hands the comment to the agent (a steer), sees it acknowledged and posts a
receipt.  Then run B starts as the queued run and skips on the receipt.  Each run's timeline is
printed in the order things happened, in plain words with the rule id once, followed by the
update the agent received (abridged) and a closing line with what was saved.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import tempfile
import textwrap
import threading
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.gha import Console
from fullsend.app.action.confinement.deployment import Deployment
from fullsend.app.action.lifecycle import run_action
from fullsend.app.timeline import Event, Timeline
from fullsend.core.scalars import format_time
from fullsend.errors import ExitCode
from fullsend.ports import Clock
from fullsend.simulator.fixtures import (
    StandardScenario,
    add_comment_follow_up,
    oidc_request_token,
    shim_workflow_ref,
    standard_pr_scenario,
)
from fullsend.simulator.server import GitHubSimulator

COMMAND = "/fs-review please re-check the migration"
PROMPT = "Review the pull request."
#: Run B's id: far enough from run A's (33740015232) to tell apart at a glance.
QUEUED_RUN_ID = 33740015300
#: How long after the agent starts the reviewer's comment arrives (well inside the first turn).
COMMENT_AFTER_S = 0.5
ENVELOPE_LINES_SHOWN = 14
WIDTH = 100
READ_MORE = "Read more: docs/glossary.md (the terms above) and docs/rules.md (each rule id in brackets)."


def _agent_wrapper(directory: Path) -> str:
    path = directory / "scripted-agent"
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m fullsend.simulator.agent.main "$@"\n')
    path.chmod(0o755)
    return str(path)


#: The proof of a signed receipt, shortened when the demo prints it.
_PROOF_RE = re.compile(r"proof=([A-Za-z0-9_.-]+)")


def _env(tmp: Path, sim: GitHubSimulator, fix: StandardScenario, run_id: int, turn_s: float) -> dict[str, str]:
    (tmp / "workspace").mkdir(exist_ok=True)
    (tmp / "home").mkdir(exist_ok=True)
    event = tmp / "event.json"
    event.write_text(json.dumps({"action": "created", "issue": {"number": fix.pr, "pull_request": {}}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_", "ACTIONS_"))}
    env.update(
        {
            "GITHUB_ACTIONS": "true",
            "GITHUB_API_URL": sim.api_url,
            "GITHUB_GRAPHQL_URL": sim.graphql_url,
            "GITHUB_REPOSITORY": "org/repo",
            "GITHUB_RUN_ID": str(run_id),
            "GITHUB_RUN_ATTEMPT": "1",
            "GITHUB_WORKFLOW_REF": shim_workflow_ref(sim),
            "GITHUB_JOB": "review",
            "GITHUB_EVENT_NAME": "issue_comment",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_WORKSPACE": str(tmp / "workspace"),
            # the stage job's id-token: write: run A signs its receipt with the simulator's issuer
            "ACTIONS_ID_TOKEN_REQUEST_URL": sim.oidc_request_url,
            "ACTIONS_ID_TOKEN_REQUEST_TOKEN": oidc_request_token(sim, run_id),
            "INPUT_RECEIPT_ISSUER": sim.issuer.url,
            "SCRIPTED_AGENT_TURN_S": str(turn_s),
            "HOME": str(tmp / "home"),  # the run's own HOME: the receipt's scan (docs/rules.md#token-in-reach)
            "SCRIPTED_AGENT_LOG": str(tmp / "agent.log"),
            "INPUT_GITHUB_TOKEN": fix.job_token,
            "INPUT_ROLE_TOKEN": fix.role_token,
            "INPUT_STAGE": "review",
            "INPUT_AGENT_CLI": _agent_wrapper(tmp),
            "INPUT_PROMPT": PROMPT,
            "INPUT_POLL_INTERVAL_SECONDS": "1",
            "INPUT_STATUS_INTERVAL_SECONDS": "1",
        }
    )
    return env


def preface(fix: StandardScenario) -> list[str]:
    """What is about to happen and why it matters, before anything runs (wrapped at 100 columns)."""
    story = (
        f"An AI agent starts reviewing pull request {fix.run_name} in workflow run A ({fix.my_run_id}). "
        f"While it works, a reviewer comments {COMMAND!r}. Without steering, that comment would start a "
        "second full agent run once the first one ends. With steering, run A first proves that the comment "
        "came through the repository's own workflow and was authorized, then hands it to the agent mid-run "
        f"(a steer) and posts a receipt; run B ({QUEUED_RUN_ID}), started for the comment, reads the receipt "
        "and exits."
    )
    return [
        "fullsend demo: one steered run against a GitHub simulator on this machine (no token, no network).",
        "",
        *textwrap.wrap(story, WIDTH),
        "",
    ]


class _Story:
    """Turns timeline events into plain sentences; knows run A's and run B's ids."""

    def __init__(self, run_a: int, run_b: int) -> None:
        self.names = {run_a: f"run A ({run_a})", run_b: f"run B ({run_b})"}

    def _runs(self, event: Event) -> str:
        return ", ".join(self.names.get(i, f"run {i}") for i in event.run_ids) or "the follow-up run(s)"

    def sentence(self, event: Event) -> str:
        """One event in plain words, its rule id once in brackets."""
        plain = {
            "github": event.text,
            "ack": f"the agent confirms it received the update of {self._runs(event)}",
            "withdrawn": f"the agent takes back its confirmation for {self._runs(event)}: it counts as not received",
            "steer": f"run A hands the update of {self._runs(event)} to the agent mid-turn",
            "receipt": "run A posts the receipt (a comment) saying it absorbed run B's update",
        }.get(event.kind)
        if plain is None and event.kind == "judge" and event.rule_id == "accept":
            plain = (
                f"{self._runs(event)} passes every provenance check: its Route job authorized the comment "
                "and picked this run's stage (review)"
            )
        if plain is None and event.kind == "settle":
            plain = "the agent's turn ended with nothing new to hand over, so the run wraps up"
        if plain is None and event.kind == "skip" and event.rule_id == "receipt-lists-my-run":
            plain = "a receipt lists this run, so it exits without starting the agent"
        if plain is None and event.kind == "agent" and event.text.startswith("agent launched"):
            steerable = " and can take steers" if "steerable" in event.text else ""
            plain = f"the agent starts on its task {PROMPT!r}{steerable}"
        if plain is None and event.kind == "agent" and event.text.startswith("agent exited"):
            plain = "the agent finishes: " + event.text.removeprefix("agent ")
        text = plain or event.text
        rule = f"  [{event.rule_id}]" if event.rule_id and f"[{event.rule_id}]" not in text else ""
        return text + rule


def print_timeline(timeline: Timeline, t0: datetime, story: _Story) -> None:
    """The run's events in the order they happened (polls left out), seconds since ``t0``."""
    for event in sorted((e for e in list(timeline.events) if e.kind != "poll"), key=lambda e: e.at):
        print(f"  +{(event.at - t0).total_seconds():4.1f}s  {event.kind:<8} {story.sentence(event)}", flush=True)


def received_update(agent_log: Path) -> list[str]:
    """The steer the agent received (the second message it consumed), abridged; [] when none."""
    try:
        rows = [json.loads(line) for line in agent_log.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, ValueError):
        return []
    if len(rows) < 2 or not isinstance(rows[1], dict):
        return []
    lines = [line for line in str(rows[1].get("text", "")).splitlines() if line.strip()]
    shown = [f"    | {textwrap.shorten(line, WIDTH - 6, placeholder=' …')}" for line in lines[:ENVELOPE_LINES_SHOWN]]
    if len(lines) > ENVELOPE_LINES_SHOWN:
        shown.append(f"    | … ({len(lines) - ENVELOPE_LINES_SHOWN} more lines)")
    return shown


def _arm_comment(sim: GitHubSimulator, timeline: Timeline, clock: Clock, added: dict[str, Any]) -> None:
    """Once the agent starts, wait ``COMMENT_AFTER_S`` and add the reviewer's comment and run B."""

    def comment() -> None:
        clock.sleep(COMMENT_AFTER_S)
        at = clock.now()  # before the run exists, so no check of it can be dated earlier
        added["comment"], added["run"] = add_comment_follow_up(sim, COMMAND, run_id=QUEUED_RUN_ID)
        timeline.add(
            at,
            "github",
            f"@reviewer comments {COMMAND!r}; the shim starts run B ({QUEUED_RUN_ID}) for it, queued behind run A",
            run_ids=(QUEUED_RUN_ID,),
        )

    def on_event(event: Event) -> None:
        if event.kind == "agent" and event.text.startswith("agent launched") and "thread" not in added:
            added["thread"] = threading.Thread(target=comment, name="fullsend-demo-comment", daemon=True)
            added["thread"].start()

    timeline.listener = on_event


def status_versions(sim: GitHubSimulator, fix: StandardScenario) -> list[str]:
    """Every body the role token wrote into a status comment, in the order GitHub took them (the
    start comment, its progress edits, the terminal status and its receipt link)."""
    bodies = []
    for r in sim.requests:
        posted = r.method == "POST" and r.path.endswith(f"/issues/{fix.pr}/comments")
        edited = r.method == "PATCH" and "/issues/comments/" in r.path
        doc = r.json() if r.token == fix.role_token and r.status in (200, 201) and (posted or edited) else None
        if isinstance(doc, dict) and "fullsend:agent-status:" in str(doc.get("body", "")):
            bodies.append(str(doc["body"]))
    return bodies


def print_status_versions(sim: GitHubSimulator, fix: StandardScenario) -> None:
    """Print each version of the status comment as a person reads it (hidden markers left out)."""
    versions = status_versions(sim, fix)
    if versions:
        print("\nThe status comment on the pull request, version by version (what a person in the thread saw):")
    for n, body in enumerate(versions, 1):
        shown = [line for line in body.splitlines() if line.strip() and not line.startswith("<!--")][:8]
        print(f"  {n}. " + "\n     ".join(shown))


def _deployment(fix: StandardScenario) -> Deployment:
    """The demo's own deployment, composed here and never by an input: the simulator's job token is
    public, so its runs may post a receipt without a child user (docs/rules.md#token-in-reach)."""
    return Deployment(public_job_token=fix.job_token)


def _run_a(
    sim: GitHubSimulator, fix: StandardScenario, tmp: Path, turn_s: float, clock: Clock, story: _Story
) -> tuple[int, dict[str, Any]]:
    """Play run A; print its timeline, the update the agent received and the receipt."""
    print(f"Run A ({fix.my_run_id}), the run in flight:")
    added: dict[str, Any] = {}
    t0, timeline = clock.now(), Timeline()
    _arm_comment(sim, timeline, clock, added)
    env = _env(tmp, sim, fix, fix.my_run_id, turn_s)
    code = run_action(Console(io.StringIO()), env, timeline, deployment=_deployment(fix))
    if "thread" in added:
        added["thread"].join()
    print_timeline(timeline, t0, story)
    update = received_update(tmp / "agent.log")
    if update:
        print("\nWhat the agent received mid-run (the steer's envelope, abridged):", *update, sep="\n")
    print_status_versions(sim, fix)
    receipts = [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login]
    for c in receipts:
        body = _PROOF_RE.sub(lambda m: f"proof={m[1][:24]}… ({len(m[1])} characters)", c["body"])
        print(
            f"\nThe receipt, a comment by {c['user']['login']} (the job token); its first line is a hidden "
            "marker the queued run reads, its proof the OIDC token GitHub issued run A for exactly this "
            "content (shortened here):\n    " + body.replace("\n", "\n    ")
        )
    added["receipts"] = receipts
    return code, added


def run_demo(turn_s: float = 3.0, clock: Clock | None = None) -> int:
    """Play the scenario and print it (module docstring); returns ``ExitCode.OK`` when run A
    absorbed the comment and posted a receipt and run B skipped on it, else ``ExitCode.FAILED``.
    ``turn_s``: the scripted agent's first turn in seconds (``fullsend demo --turn-seconds``
    checks 1-60); ``clock``: default the system's."""
    clock = clock or SystemClock()
    with GitHubSimulator() as sim, tempfile.TemporaryDirectory(prefix="fullsend-demo-") as tmp_dir:
        tmp = Path(tmp_dir)
        fix = standard_pr_scenario(sim, created_at=format_time(clock.now() - timedelta(seconds=60)))
        story = _Story(fix.my_run_id, QUEUED_RUN_ID)
        print(*preface(fix), sep="\n")
        (tmp / "a").mkdir()
        code, added = _run_a(sim, fix, tmp / "a", turn_s, clock, story)
        if "run" not in added or not added["receipts"]:
            print(
                f"\nRun A exited {code} without a receipt, so there is nothing for run B to skip on; "
                "see the timeline above."
            )
            return ExitCode.FAILED
        print(f"\nRun B ({QUEUED_RUN_ID}), the run the comment started, had waited behind run A; now it starts:")
        (tmp / "b").mkdir()
        t0, timeline = clock.now(), Timeline()
        env = _env(tmp / "b", sim, fix, QUEUED_RUN_ID, turn_s)
        code_b = run_action(Console(io.StringIO()), env, timeline, deployment=_deployment(fix))
        print_timeline(timeline, t0, story)
        if code != ExitCode.OK or code_b != ExitCode.OK:
            print(f"\nRun A exited {code} and run B exited {code_b}; expected 0 for both.")
            return ExitCode.FAILED
        print(
            "\nSaved: one full agent run. The reviewer's comment reached the agent inside run A, and run B "
            "exited in a moment instead of reviewing the pull request again.",
            READ_MORE,
            sep="\n",
        )
        return ExitCode.OK
