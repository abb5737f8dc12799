"""CPU per steady-state poll cycle of a watched pull request with 400 listed runs, through the
real watcher and adapter (issues 22, 33).

A plain script, not a test: ``PYTHONPATH=. python bench/bench_poll.py [--quick]``.  The simulator
serves, from its own process (so its threads neither share the GIL with the measured cycle nor
count in its CPU time), the standard pull request #7 with my run and 399 other shim runs of other
items: 400 listed runs, 4 pages of 100 (the page cap: docs/architecture.md "Listing").  A real
``Watcher`` (``GitHubForge``, Start, the cycle of ``fullsend.app.watch.cycle``) makes its first
listing (four 200s, every run judged), then, with nothing changing:

* the quiet gated cycle, ``poll_and_steer(forced=False)``: the listing gate's conditional reads of
  the issue and pull records (two 304s), the gate shut, no listing (docs/architecture.md
  "Listing gate");
* the forced listing (the backstop's, a turn end's), ``poll_and_steer(forced=True)``: four 304
  pages, the listing unchanged and nothing pending, so no run is judged again.

Measured: the polling thread's CPU time (``time.thread_time``), the median over the cycles.
For comparison, the floor: the same conditional GETs over one bare ``http.client`` connection
(no adapter, no ``requests``).
Goals, as ratios to that floor measured in the same run (CPU on a shared machine moves with its
load; a ratio in one run does not): the quiet cycle <= 1.5x the floor's two item reads, the
forced listing <= 1.5x the floor's four pages.  Exits 0 whether or not a goal is met; the
verdicts are printed.
"""

from __future__ import annotations

import http.client
import multiprocessing
import statistics
import sys
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from multiprocessing.connection import Connection
from urllib.parse import urlsplit

from bench._goals import goal_line
from fullsend.adapters.clock import SystemClock
from fullsend.adapters.github.forge import GitHubForge
from fullsend.adapters.github.transport import next_link
from fullsend.app.timeline import Timeline
from fullsend.app.watch.watcher import WatchConfig, Watcher
from fullsend.core.model import Repo
from fullsend.core.scalars import format_time, parse_time
from fullsend.core.watch.settle import Outcome
from fullsend.core.watch.steer import SteerMessage
from fullsend.simulator.fixtures import (
    FIX_CREATED_AT,
    FIX_HEAD,
    FIX_RUN_ID,
    JOB_TOKEN,
    ROLE_LOGIN,
    ROLE_TOKEN,
    SHIM_PATH,
    standard_pr_scenario,
)
from fullsend.simulator.server import GitHubSimulator

LISTING_SIZE = 400
GOAL_RATIO = 1.5  # CPU per cycle against the bare client's same requests, medians of one run
STARTED = parse_time(FIX_CREATED_AT)
assert STARTED is not None
NOW = STARTED + timedelta(hours=2)  # the simulator's and the watcher's "now": after every run


class BenchClock(SystemClock):
    """Real monotonic time and waits; ``now`` runs from :data:`NOW` (the simulator's day)."""

    def __init__(self) -> None:
        self._t0 = time.monotonic()

    def now(self):  # type: ignore[no-untyped-def]
        return NOW + timedelta(seconds=time.monotonic() - self._t0)


class NoSteer:
    """A steerer the bench never reaches (nothing is accepted): any call is a bench error."""

    def steer(self, sandbox_name: str, msg: SteerMessage) -> None:
        raise AssertionError("nothing should be steered")

    def settle(self, sandbox_name: str) -> None:
        raise AssertionError("nothing should settle")


def serve(conn: Connection) -> None:
    """The simulator: pull request #7, my run and 399 shim runs of other items; sends its API URL,
    serves until told, then sends its request counts (304s, others)."""
    with GitHubSimulator(clock=lambda: NOW) as sim:
        standard_pr_scenario(sim)
        for i in range(LISTING_SIZE - 1):
            sim.add_workflow_run(
                path=SHIM_PATH,
                event="pull_request_target",
                status="completed",
                conclusion="success",
                created_at=STARTED + timedelta(seconds=5 * (i + 1)),
                display_title=f"org/repo#{100 + i % 50}",
                pull_requests=[100 + i % 50],
            )
        conn.send(sim.api_url)
        conn.recv()
        sim.reset_requests()
        conn.send("counting")
        conn.recv()
        conn.send((sim.request_count(status=304), len(sim.requests)))
        conn.recv()  # the bare floor's requests, then stop


def _watcher(api_url: str) -> Watcher:
    clock = BenchClock()
    forge = GitHubForge(Repo("org", "repo"), api_url, api_url + "/graphql", JOB_TOKEN, ROLE_TOKEN, clock)
    config = WatchConfig(
        run_id=FIX_RUN_ID,
        run_name="org/repo#7",
        item_number=7,
        self_logins=frozenset({ROLE_LOGIN}),
        started_at=STARTED,
        poll_interval_s=5.0,
        env_head_sha=FIX_HEAD,
        stage_hints=("review",),
    )
    w = Watcher(forge, NoSteer(), "sandbox", threading.Lock(), clock, config, lambda lv, m: None, Timeline())  # type: ignore[arg-type]
    w.start()
    return w


def _cpu_ms(cycle: Callable[[], Outcome], times: int) -> list[float]:
    samples = []
    for _ in range(times):
        started = time.thread_time()
        outcome = cycle()
        samples.append((time.thread_time() - started) * 1000)
        assert outcome is Outcome.EMPTY, outcome
    return samples


def bare_ms(api_url: str, cycles: int) -> tuple[float, float]:
    """The floor, for comparison: the same conditional GETs (the two item reads; the four listing
    pages) over one bare ``http.client`` connection, no adapter: CPU medians per cycle."""
    base = urlsplit(api_url)
    conn = http.client.HTTPConnection(base.hostname or "", base.port)
    auth = {"Authorization": f"Bearer {ROLE_TOKEN}", "Accept": "application/vnd.github+json"}

    def get(target: str, etag: str = "") -> tuple[int, dict[str, str]]:
        conn.request("GET", target, headers={**auth, **({"If-None-Match": etag} if etag else {})})
        resp = conn.getresponse()
        resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}

    def pages(first: str) -> list[str]:
        found, target = [], first
        while target:
            found.append(target)
            link = next_link(get(target)[1])
            target = urlsplit(link).path + "?" + urlsplit(link).query if link else ""
        return found

    created = format_time(STARTED)
    items = [f"{base.path}/repos/org/repo/issues/7", f"{base.path}/repos/org/repo/pulls/7"]
    listing = pages(
        f"{base.path}/repos/org/repo/actions/workflows/fullsend.yml/runs?created=%3E%3D{created}&per_page=100"
    )
    medians = []
    for targets in (items, listing):
        etags = {t: get(t)[1]["etag"] for t in targets}
        samples = []
        for _ in range(cycles):
            started = time.thread_time()
            assert all(get(t, etags[t])[0] == 304 for t in targets)
            samples.append((time.thread_time() - started) * 1000)
        medians.append(statistics.median(samples))
    conn.close()
    return medians[0], medians[1]


def measure(cycles: int) -> dict[str, float]:
    """CPU medians (ms) of ``cycles`` cycles each: ``first`` (the first listing), ``quiet`` (the
    gated cycle), ``forced`` (the 304 listing), ``bare_items`` and ``bare_pages`` (the floor);
    and the counts over the measured cycles: ``listings`` made, ``not_modified``, ``requests``."""
    ours, theirs = multiprocessing.Pipe()
    server = multiprocessing.Process(target=serve, args=(theirs,), daemon=True)
    server.start()
    try:
        api_url = ours.recv()
        w = _watcher(api_url)
        started = time.thread_time()
        assert w.poll_and_steer(forced=False) is Outcome.EMPTY  # the first listing: the backstop's
        got = {"first": (time.thread_time() - started) * 1000}
        polls = w.state.polls
        ours.send("reset")
        ours.recv()
        got["quiet"] = statistics.median(_cpu_ms(lambda: w.poll_and_steer(forced=False), cycles))
        assert w.state.polls == polls, "a quiet gated cycle listed"
        got["forced"] = statistics.median(_cpu_ms(lambda: w.poll_and_steer(forced=True), cycles))
        got["listings"] = w.state.polls - polls
        ours.send("done")
        got["not_modified"], got["requests"] = ours.recv()
        got["bare_items"], got["bare_pages"] = bare_ms(api_url, cycles)
        ours.send("stop")
        return got
    finally:
        server.join(timeout=30)


def main(argv: list[str]) -> int:
    cycles = 20 if "--quick" in argv else 200
    got = measure(cycles)
    assert got["listings"] == cycles, got  # every forced cycle listed
    assert got["not_modified"] == got["requests"] == cycles * (2 + 4), got  # all 304s
    title = f"cycle, pull request with {LISTING_SIZE} listed runs"
    print(f"{title:<56}  CPU ms  floor ms  ratio  goal  verdict")
    print("-" * 98)
    print(f"{'first listing (four 200s, 400 runs judged)':<56}  {got['first']:6.2f}         -      -     -  -")
    rows = (
        (
            "poll.cpu_per_304_cycle_vs_bare_client",
            f"quiet gated cycle (two 304 item reads), median of {cycles}",
            got["quiet"],
            got["bare_items"],
        ),
        (
            "poll.cpu_per_forced_304_listing_vs_bare_client",
            f"forced listing (four 304 pages), median of {cycles}",
            got["forced"],
            got["bare_pages"],
        ),
    )
    for _, what, ms, floor in rows:
        ratio = ms / floor
        verdict = "met" if ratio <= GOAL_RATIO else "NOT met"
        print(f"{what:<56}  {ms:6.2f}  {floor:8.2f}  {ratio:5.2f}  {GOAL_RATIO:4.1f}x  {verdict}")
    print("(floor: the same conditional GETs over one bare http.client connection, no adapter)")
    print(f"\n{got['requests']:g} requests in the measured cycles, {got['not_modified']:g} answered 304 (free).")
    for name, _, ms, floor in rows:
        ratio = ms / floor
        print(goal_line(name, f"{ratio:.2f}x", f"<={GOAL_RATIO:g}x", ratio <= GOAL_RATIO))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
