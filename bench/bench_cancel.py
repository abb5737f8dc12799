"""How long a cancelled run takes to end, from the signal to the action's exit (issue 19).

    python bench/bench_cancel.py [--rounds 5] [--quick]

GitHub sends SIGINT, waits 7.5 s, sends SIGTERM, waits 2.5 s more and kills; the action means to
have written its outputs, its summary and the status comment's ``Cancelled`` by then.  This runs
the action through the test suite's entry (``tests/support/sim_entry.py``: ``entrypoint.py``'s
start with the simulator's deployment, since this host has no child user) against the simulator
on 127.0.0.1 (as ``tests/app/test_cancellation.py`` does, which checks what a cancelled run leaves), holds it in a
phase by delaying the simulator's answer to that phase's request (the pre-flight's receipt view,
the start comment), sends SIGTERM and measures the wall time to exit and the CPU time the action
spent after the signal (``/proc/<pid>/stat`` at the signal, the reaped child's usage at exit).
Prints min/median/max per phase and one goal per phase: the slowest exit ≤ 7 s.  Wall times move
with the machine's load, CPU much less: a miss under load is read against the CPU column.
Exits 0.
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._goals import goal_line  # noqa: E402
from fullsend.core.scalars import format_time  # noqa: E402
from fullsend.simulator.fixtures import standard_pr_scenario  # noqa: E402
from fullsend.simulator.server import GitHubSimulator  # noqa: E402
from tests.support.action_run import SIM_ENTRY, runner_env  # noqa: E402

GOAL_S = 7.0  # issue 19: a cancelled run ends within 7 s
#: phase -> (method, path, credential) of the request the simulator holds the action at.
PHASES = {
    "preflight": ("POST", r"^/graphql$", "job"),
    "start_comment": ("POST", r"/issues/\d+/comments$", "role"),
}


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_cancel(phase: str, tmp: Path) -> tuple[float, float]:
    """``(wall s, CPU s)`` from SIGTERM to the exit of one run held in ``phase``."""
    method, path, credential = PHASES[phase]
    reached, release = threading.Event(), threading.Event()
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        login = fix.job_login if credential == "job" else fix.role_login
        sim.on_request(
            lambda r: r.method == method and sim.match(method, path)(r) and r.login == login,
            lambda _sim: (reached.set(), release.wait(30)),
        )
        env = runner_env(tmp, sim, fix, inputs={"poll_interval_seconds": "60"})
        cmd = [sys.executable, str(SIM_ENTRY)]  # the image's entry, with the simulator's deployment
        proc = subprocess.Popen(
            cmd, env=env, cwd=env["GITHUB_WORKSPACE"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            if not reached.wait(60):
                raise SystemExit(f"the action never reached the {phase} phase")
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu_at_signal, sent = _cpu_s(proc.pid), time.monotonic()
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)
            wall_s = time.monotonic() - sent
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
        finally:
            release.set()
            if proc.poll() is None:
                proc.kill()
    spent = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall_s, spent - cpu_at_signal


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=5, help="cancelled runs per phase (default 5)")
    parser.add_argument("--quick", action="store_true", help="2 rounds per phase")
    args = parser.parse_args(argv)
    rounds = 2 if args.quick else args.rounds
    load = os.getloadavg()[0]
    print(f"{'phase':<14} {'signal -> exit s (min/med/max)':>32} {'CPU after signal s':>26}  load {load:.1f}")
    goals = []
    for phase in PHASES:
        walls, cpus = [], []
        for _ in range(rounds):
            with tempfile.TemporaryDirectory(prefix="bench-cancel-") as tmp:
                wall_s, cpu_s = one_cancel(phase, Path(tmp))
            walls.append(wall_s)
            cpus.append(cpu_s)
        print(f"{phase:<14} {_three(walls):>32} {_three(cpus):>26}")
        goals.append(
            goal_line(
                f"cancel.{phase}.signal_to_exit_max", f"{max(walls):.2f}s", f"<={GOAL_S:g}s", max(walls) <= GOAL_S
            )
        )
    print("\n".join(goals))
    return 0


def _three(values: list[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f} / {max(values):.2f}"


if __name__ == "__main__":
    sys.exit(main())
