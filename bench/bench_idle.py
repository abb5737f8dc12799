"""CPU per idle second of a watched run (issue 33).

    python bench/bench_idle.py [--seconds 5] [--rounds 5] [--quick]

While an agent thinks and nothing happens on GitHub, the action's process has three threads
waiting: the supervision thread in ``LocalProcess.wait(timeout_s=…)`` (the agent's timeout, as
``LiveRuntime._supervise`` calls it), the stderr drain blocked in a read, and the watcher in
its one wait until the next poll (``SystemClock.wait``, as ``Inbox.next_input``).  This runs
exactly those on a real child process (``LocalProcess``, as the local sandbox launches it) and
reads the process's CPU time (``time.process_time``: every thread) across ``--seconds`` of it.  Rounds alternate
with the same setup waiting as before issue 33 (``Popen.wait(timeout=…)``, a timed loop).
Prints CPU milliseconds per idle second, min/median/max, and the goal with its verdict; exits 0.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._goals import goal_line  # noqa: E402
from fullsend.adapters.clock import SystemClock  # noqa: E402
from fullsend.adapters.sandbox.process import LocalProcess  # noqa: E402

GOAL_MS = 0.1  # issue 33: CPU per idle second of a watched run
SETTLE_S = 0.5
AGENT = [sys.executable, "-c", "import sys; sys.stdin.read()"]  # an agent that thinks until told to stop


def _idle(wait: Callable[[LocalProcess, float], object], seconds: float) -> float:
    """CPU milliseconds per second while the three threads wait: read ``SETTLE_S`` after they
    started (their start-up is not idleness) and again ``seconds`` later."""
    popen = subprocess.Popen(AGENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process = LocalProcess(popen)
    stop = threading.Event()

    def supervise() -> None:
        try:
            wait(process, seconds + 60)  # the agent's timeout lies far ahead
        except subprocess.TimeoutExpired:
            pass

    threads = [threading.Thread(target=supervise), threading.Thread(target=SystemClock().wait, args=(stop, 3600))]
    for thread in threads:
        thread.start()
    time.sleep(SETTLE_S)
    start_cpu, start = time.process_time(), time.monotonic()
    time.sleep(seconds)  # the main thread sleeps too: nothing but the three waits runs
    cpu_s, wall_s = time.process_time() - start_cpu, time.monotonic() - start
    stop.set()
    assert popen.stdin is not None
    popen.stdin.close()  # the agent ends; the supervision sees it
    for thread in threads:
        thread.join()
    process.stderr_tail()
    return 1000.0 * cpu_s / wall_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="idle window per round (default 5)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per way of waiting (default 5)")
    parser.add_argument("--quick", action="store_true", help="3 rounds of 2 s (the CI mode of run_all.py)")
    args = parser.parse_args(argv)
    seconds, rounds = (2.0, 3) if args.quick else (args.seconds, args.rounds)
    ways: dict[str, Callable[[LocalProcess, float], object]] = {
        "this checkout (blocking)": lambda p, t: p.wait(timeout_s=t),
        "before (Popen.wait timeout)": lambda p, t: p._popen.wait(timeout=t),
    }
    samples: dict[str, list[float]] = {name: [] for name in ways}
    for i in range(rounds):
        for name in list(ways) if i % 2 == 0 else list(reversed(ways)):
            samples[name].append(_idle(ways[name], seconds))
    print(f"CPU per idle second of a watched run, ms (min / median / max of {rounds} rounds of {seconds:g} s)")
    for name, values in samples.items():
        print(f"{name:<30}  {min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}")
    mine = statistics.median(samples["this checkout (blocking)"])
    print(
        f"goal: <= {GOAL_MS:g} ms CPU per idle second at the median: measured {mine:.3f} ms "
        f"({'met' if mine <= GOAL_MS else 'NOT met'})"
    )
    print(goal_line("idle.cpu_per_idle_second", f"{mine:.3f}ms", f"<={GOAL_MS:g}ms", mine <= GOAL_MS))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
