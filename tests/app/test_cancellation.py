"""Issue 19 C: SIGTERM or SIGINT at any phase of a run — pre-flight, start comment, agent, settle,
terminal comment, receipt — gives ``outcome=failed``, exit 1, outputs and step summary written, no
receipt, no traceback, and the status comment marked cancelled (docs/architecture.md
"Cancellation").  How fast (within 7 s) is a goal of ``bench/bench_cancel.py``, not an assertion
here: the suite runs under load, where the exit's fraction of a CPU second takes many seconds.

The action runs as a subprocess through the entrypoint against the simulator on 127.0.0.1; the
simulator holds it in a phase by delaying the answer to the request that phase makes (a hook that
waits before the answer leaves), or, for the receipt, by never answering (a ``hang`` fault, so no
receipt is created behind the action's back).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fullsend.core.scalars import format_time
from fullsend.simulator.fixtures import StandardScenario, add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import REPO_ROOT, SIM_ENTRY, parse_outputs, runner_env

COMMENTS = r"/issues/\d+/comments$"
LISTING = r"/actions/workflows/fullsend\.yml/runs"
GRAPHQL = r"^/graphql$"


@dataclass
class Hold:
    """Holds the action in a phase: ``reached`` once it is there; ``release`` lets it go on."""

    reached: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    def hook(self, sim: GitHubSimulator) -> None:
        self.reached.set()
        self.release.wait(30)


@dataclass(frozen=True)
class Phase:
    """One phase: how to hold the action there, and whether a follow-up run is absorbed first
    (so that the run would otherwise end in a receipt)."""

    name: str
    arm: Callable[[GitHubSimulator, StandardScenario, Hold, Path], Callable[[], bool]]
    steered: bool = False
    turn_s: str = "1"


def _hold_request(method: str, path: str, credential: str, nth: int = 1):
    def arm(sim, fix, hold, tmp):
        login = fix.job_login if credential == "job" else fix.role_login
        seen = []

        def matches(r):
            if r.method == method and sim.match(method, path)(r) and r.login == login:
                seen.append(r)
                return len(seen) == nth
            return False

        sim.on_request(matches, hold.hook)
        return hold.reached.is_set

    return arm


def _agent_running(sim, fix, hold, tmp):
    log = tmp / "agent.log"
    return lambda: log.exists() and log.read_text().strip() != ""


def _receipt_hangs(sim, fix, hold, tmp):
    sim.fail_connection("POST", COMMENTS, mode="hang", hang_s=30, login=fix.job_login)
    return lambda: any(r.fault == "hang" for r in sim.requests)


PHASES = [
    Phase("pre-flight", _hold_request("POST", GRAPHQL, "job")),  # the receipt view (issue 18)
    Phase("start-comment", _hold_request("POST", COMMENTS, "role")),
    Phase("agent", _agent_running, turn_s="30"),
    Phase("settle", _hold_request("GET", LISTING, "job")),
    Phase("terminal-comment", _hold_request("POST", COMMENTS, "role", nth=2), steered=True),
    Phase("receipt", _receipt_hangs, steered=True),
]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
@pytest.mark.parametrize("phase", PHASES, ids=[p.name for p in PHASES])
def test_a_signal_at_any_phase_cancels_the_run_cleanly(tmp_path, phase, signum):
    hold = Hold()
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        if phase.steered:
            sim.on_request(sim.match("GET", LISTING), lambda s: add_comment_follow_up(s, "/fs-review re-check it"))
        reached = phase.arm(sim, fix, hold, tmp_path)
        env = runner_env(tmp_path, sim, fix, inputs={"poll_interval_seconds": "1" if phase.steered else "60"})
        env["SCRIPTED_AGENT_TURN_S"] = phase.turn_s
        proc = subprocess.Popen(
            [sys.executable, str(SIM_ENTRY)],
            env=env,
            cwd=env["GITHUB_WORKSPACE"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            _wait(reached, proc, phase.name)
            proc.send_signal(signum)
            out, err = proc.communicate(timeout=30)
        finally:
            hold.release.set()
            if proc.poll() is None:
                proc.kill()
        comments = sim.comments(fix.pr)
    assert proc.returncode == 1, out + err
    assert "Traceback" not in out + err and "KeyboardInterrupt" not in out + err
    outputs = parse_outputs(Path(env["GITHUB_OUTPUT"]).read_text())
    assert outputs["outcome"] == "failed"
    assert outputs["receipt_url"] == outputs["consumed_run_ids"] == ""
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    assert "❌ failed" in summary and "the run was cancelled" in summary
    assert [c for c in comments if c["user"]["login"] == fix.job_login] == []  # no receipt
    terminal = [c for c in comments if "fullsend:status:terminal" in c["body"]]
    assert terminal and "Cancelled" in terminal[-1]["body"], json.dumps(comments, indent=1)
    assert not [c for c in terminal if "Success" in c["body"] and c["id"] == terminal[-1]["id"]]


def _wait(reached: Callable[[], bool], proc: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + 40
    while not reached():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            out, err = proc.communicate()
            pytest.fail(f"the action never reached the {what} phase:\n{out}\n{err}")
        time.sleep(0.05)


def test_a_signal_during_the_pre_script_ends_the_script_too(tmp_path):
    started = tmp_path / "pre-script-started"
    marker = f"sleep\x0060.{os.getpid()}"  # the argv of the script's sleep, as /proc shows it
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        env = runner_env(tmp_path, sim, fix, inputs={"pre_script": f"touch {started}; sleep 60.{os.getpid()}"})
        proc = subprocess.Popen(
            [sys.executable, str(SIM_ENTRY)],
            env=env,
            cwd=env["GITHUB_WORKSPACE"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        _wait(started.exists, proc, "pre-script")
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1, out + err
    assert parse_outputs(Path(env["GITHUB_OUTPUT"]).read_text())["outcome"] == "failed"
    assert "::warning::The run was cancelled (SIGTERM); no receipt is posted" in out.splitlines()
    assert not [p for p in Path("/proc").iterdir() if p.name.isdigit() and marker in _cmdline(p)]


def _cmdline(proc_dir: Path) -> str:
    try:
        return (proc_dir / "cmdline").read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""


def _hold_signals() -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGTERM, signal.SIGINT))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_a_signal_sent_before_the_action_has_imported_anything_still_ends_it_cleanly(tmp_path, signum):
    """The signal lands at the very start: held pending (here from before exec, as the
    entrypoint's first statement holds it from its first line on) through the imports and the
    re-exec, it cancels the run once the handlers are in place: failed, outputs, no traceback."""
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        env = runner_env(tmp_path, sim, fix, inputs={})
        proc = subprocess.Popen(
            [sys.executable, str(SIM_ENTRY)],
            env=env,
            cwd=env["GITHUB_WORKSPACE"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_hold_signals,
        )
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, out + err
    assert "Traceback" not in out + err and "KeyboardInterrupt" not in out + err
    assert parse_outputs(Path(env["GITHUB_OUTPUT"]).read_text())["outcome"] == "failed"
    assert "the run was cancelled" in Path(env["GITHUB_STEP_SUMMARY"]).read_text()


def test_the_entrypoint_holds_the_signals_before_it_imports_the_action():
    import ast

    body = ast.parse((REPO_ROOT / "entrypoint.py").read_text()).body
    statements = [
        ast.unparse(node) for node in body if not isinstance(node, ast.Expr) or not isinstance(node.value, ast.Constant)
    ]
    assert statements[:3] == [
        "import signal",
        "signal.pthread_sigmask(signal.SIG_BLOCK, (signal.SIGTERM, signal.SIGINT))",
        "from fullsend.__main__ import main",
    ]
