"""CPU per steady-state poll of a 400-run listing through the real GitHub adapter (issue 22).

A plain script, not a test: ``python bench/bench_poll.py [--quick]``.  The simulator serves 400
shim runs (4 pages of 100, the page cap: docs/architecture.md "Listing"); ``GitHubForge.
list_workflow_runs`` reads them once (four 200s), then polls again and again with nothing new, so
every page answers ``304 Not Modified``.  Measured: the polling thread's CPU time
(``time.thread_time``: the client's HTTP handling, the cached-page lookup and building the
listing; the simulator serves from its own process, so it neither counts nor holds the GIL), the median over the polls.
Goal: <= 5 ms CPU per 304 poll.  Exits 0 whether or not the goal is met; the verdict is printed.
"""

from __future__ import annotations

import multiprocessing
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from multiprocessing.connection import Connection

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.github.forge import GitHubForge
from fullsend.core.identity import Identity
from fullsend.core.model import Repo
from fullsend.simulator.server import GitHubSimulator

LISTING_SIZE = 400
GOAL_MS = 5.0
TOKEN = "ghs_bench_job_token"
WORKFLOW = "fullsend.yml"
START = datetime(2026, 9, 3, 10, 0, tzinfo=UTC)


def serve(conn: Connection) -> None:
    """The simulator with 400 shim runs, in its own process (so its threads neither share the GIL
    with the measured poll nor count in its CPU time); sends its API URL, serves until told."""
    with GitHubSimulator(tokens={TOKEN: Identity("github-actions[bot]")}, clock=lambda: START) as sim:
        for i in range(LISTING_SIZE):
            sim.add_workflow_run(
                path=f".github/workflows/{WORKFLOW}",
                event="issue_comment",
                status="completed",
                created_at=START + timedelta(seconds=5 * (i + 1)),
                display_title=f"org/repo#7 comment:{9000 + i}",
            )
        conn.send(sim.api_url)
        conn.recv()
        conn.send(sim.request_count(status=304))


def poll_cpu_ms(polls: int) -> tuple[float, float, int]:
    """(median CPU ms of a 304 poll, CPU ms of the first full poll, 304 answers seen)."""
    ours, theirs = multiprocessing.Pipe()
    server = multiprocessing.Process(target=serve, args=(theirs,), daemon=True)
    server.start()
    try:
        api_url = ours.recv()
        forge = GitHubForge(Repo("org", "repo"), api_url, api_url + "/graphql", TOKEN, "", SystemClock())
        started = time.thread_time()
        assert len(forge.list_workflow_runs(WORKFLOW, START).runs) == LISTING_SIZE
        first_ms = (time.thread_time() - started) * 1000
        samples = []
        for _ in range(polls):
            started = time.thread_time()
            runs = forge.list_workflow_runs(WORKFLOW, START)
            samples.append((time.thread_time() - started) * 1000)
            assert len(runs.runs) == LISTING_SIZE
        ours.send("done")
        return statistics.median(samples), first_ms, ours.recv()
    finally:
        server.join(timeout=30)


def main(argv: list[str]) -> int:
    polls = 20 if "--quick" in argv else 200
    median_ms, first_ms, not_modified = poll_cpu_ms(polls)
    assert not_modified == 4 * polls, not_modified  # every steady-state page was a 304
    print(f"{'poll of ' + str(LISTING_SIZE) + ' listed runs (4 pages)':<44}  CPU ms")
    print("-" * 52)
    print(f"{'first poll (four 200s, parsed)':<44}  {first_ms:6.2f}")
    print(f"{'steady poll (four 304s), median of ' + str(polls):<44}  {median_ms:6.2f}")
    print(f"goal <= {GOAL_MS:g} ms CPU per 304 poll: {'met' if median_ms <= GOAL_MS else 'NOT met'}")
    print(
        f"GOAL poll.cpu_per_304_cycle measured={median_ms:.2f}ms goal=<=1ms "
        f"verdict={'met' if median_ms <= 1.0 else 'not met'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
