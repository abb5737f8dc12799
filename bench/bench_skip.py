"""The queued run's two pre-flight skips against a bare client: process start → decision.

    python bench/bench_skip.py [--runs 21] [--baseline REF] [--quick]

Two scenarios on one simulator: the receipt skip (a job-token receipt lists the queued run,
started by a comment) and the head-reviewed skip (a ``pull_request`` ``synchronize`` run of the
review stage; the review App reviewed the head after the run was created; its receipt check
finds no receipt first, as the pre-flight's order has it).  Each runs through the real
entrypoint as a subprocess — ``fullsend run``'s re-execution, the fast skip of
docs/architecture.md "Fast skip", its outputs and step summary — with the environment a runner
gives the container, against the simulator on 127.0.0.1, on an interpreter laid out as the image's
(:func:`image_like_python`: no editable-install hook).  Runs of this checkout and of
``--baseline`` (default :data:`BASELINE_REF`, main before issue 33, exported with ``git
archive``) alternate, so both see the same load.  Per run, from process start: the first API
request, the last one (the decision needs its answer), the process exit (the decision made and
written: the figure the goal is on), the CPU seconds of both interpreters of the re-execution,
and the number of requests.

The floor, in the same run: a bare client (``BARE_CLIENT``: the interpreter alone, ``http.client``,
no action code) that replays exactly the requests the skip sent — the same methods, paths, tokens
and bodies, sent at once as the skip sends them — from its process start to its exit.  Goals (the
one-client issue), each a ``GOAL`` line with its verdict (bench/README.md "Goals"): per scenario,
CPU from process start to decision (both interpreters of the re-execution) ≤ 0.3 s at the
median, and wall time to the decision ≤ 2× the bare client's, medians of the same run.  Prints
min/median/max; exits 0 either way (1 when a run did not skip or skipped for another reason).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._goals import goal_line  # noqa: E402
from bench.bench_start import Arrivals, export_tree, run_skip, skip_scenario  # noqa: E402
from fullsend.simulator.fixtures import FIX_RUN_ID, StandardScenario  # noqa: E402
from fullsend.simulator.server import GitHubSimulator  # noqa: E402
from tests.support.action_run import parse_outputs  # noqa: E402

THIS, BARE = "this checkout", "bare client"
#: main before issue 33: the skip decided after pydantic, requests and jinja2 were loaded.
BASELINE_REF = "1f5c034c2669c514314a25a3869f9ce26ccfd90e"
#: main with the receipt skip fast and the head-reviewed skip on the full path (BASELINE_REF's
#: REST client, PyGithub, is no longer installed, so that tree cannot read a review).
HEAD_BASELINE_REF = "1a99cc8528aa01dbdabc54b138b1f26b4e15b394"
CPU_GOAL_S = 0.3  # process start -> decision, CPU seconds of both interpreters, median
WALL_GOAL_RATIO = 2.0  # process start -> decision, against the bare client's, medians of one run
#: The floor: a process that sends the given requests at once over ``http.client`` and exits.
BARE_CLIENT = """
import http.client, json, sys, threading
base, requests = sys.argv[1], json.load(open(sys.argv[2]))
host, port = base.split("//", 1)[1].split("/", 1)[0].split(":")

def one(r):
    conn = http.client.HTTPConnection(host, int(port), timeout=15)
    conn.request(r["method"], r["path"], body=r["body"].encode() or None, headers=r["headers"])
    conn.getresponse().read()

threads = [threading.Thread(target=one, args=(r,)) for r in requests]
for t in threads: t.start()
for t in threads: t.join()
"""
REVIEWED_AT = "2026-09-03T10:00:05Z"  # 5 s after FIX's run was created (FIX_CREATED_AT)
#: Per scenario: the ``runner`` arguments of ``run_skip`` and the ``skip_reason`` expected.
SCENARIOS: dict[str, tuple[dict[str, Any], str]] = {
    "receipt": ({}, "receipt"),
    "head-reviewed": (
        {
            "run_id": FIX_RUN_ID,
            "event": {"action": "synchronize", "pull_request": {"number": 7}},
            "env": {"GITHUB_EVENT_NAME": "pull_request"},
        },
        "head-reviewed",
    ),
}


@dataclass(frozen=True)
class Sample:
    """One skip, in seconds from process start, and its CPU seconds and request count."""

    first_request_s: float
    last_request_s: float
    exit_s: float
    cpu_s: float
    requests: int


def image_like_python(tmp: Path) -> str:
    """An interpreter laid out as the image's: a venv whose site-packages holds only a path to
    this one's libraries, so neither pays for this checkout's editable install (a ``.pth`` hook
    that imports ``pathlib`` at every start; the image copies the code to ``/app`` instead)."""
    import sysconfig
    import venv

    venv.EnvBuilder(with_pip=False, symlinks=True).create(tmp / "venv")
    site = Path(sysconfig.get_path("purelib", vars={"base": str(tmp / "venv"), "platbase": str(tmp / "venv")}))
    (site / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return str(tmp / "venv" / "bin" / "python")


def one_skip(
    entrypoint: Path,
    sim: GitHubSimulator,
    fix: StandardScenario,
    arrivals: Arrivals,
    tmp: Path,
    python: str = sys.executable,
    scenario: str = "receipt",
) -> Sample:
    """Run the entrypoint once as the queued run of ``scenario``; raises ``RuntimeError`` unless
    it skipped for that scenario's reason."""
    runner, reason = SCENARIOS[scenario]
    t0, exit_s, cpu_s = run_skip(entrypoint, sim, fix, tmp, python, runner)
    written = parse_outputs((tmp / "file_commands" / "output").read_text()).get("skip_reason")
    if written != reason:
        raise RuntimeError(f"{entrypoint} ({scenario}): skip_reason {written!r}, expected {reason!r}")
    seen = arrivals.since(t0)
    return Sample(min(seen), max(seen), exit_s, cpu_s, len(seen))


def recorded(sim: GitHubSimulator, since: int) -> list[dict[str, Any]]:
    """The requests the simulator got from index ``since`` on, as the bare client sends them."""
    keep = ("authorization", "content-type", "accept", "x-github-api-version")
    return [
        {
            "method": r.method,
            "path": r.raw_path or r.path,
            "body": r.body.decode(),
            "headers": {k: v for k, v in r.headers.items() if k in keep},
        }
        for r in sim.requests[since:]
    ]


def bare_run(python: str, base: str, requests_file: Path) -> tuple[float, float]:
    """``(wall_s, cpu_s)`` of one bare-client process, start to exit."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run([python, "-c", BARE_CLIENT, base, str(requests_file)], check=True, timeout=60)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def both_scenarios(sim: GitHubSimulator) -> StandardScenario:
    """The receipt scenario, and a review of FIX's head by the review App after FIX's run was
    created: the queued run skips on the receipt, FIX's own run (a ``pull_request`` event) on the review."""
    fix = skip_scenario(sim)
    sim.add_review(fix.pr, fix.role_login, "COMMENTED", submitted_at=REVIEWED_AT)
    return fix


def paired(entrypoints: dict[str, dict[str, Path]], runs: int) -> dict[tuple[str, str], list[Sample]]:
    """``runs`` skips of each scenario's entrypoints (``{scenario: {label: path}}``) and of the bare
    client replaying each scenario's requests (label ``bare client``), alternating the order each
    round, after one warm-up each."""
    keys = [(scenario, label) for scenario, paths in entrypoints.items() for label in paths]
    keys += [(scenario, BARE) for scenario in entrypoints]
    samples: dict[tuple[str, str], list[Sample]] = {key: [] for key in keys}
    with GitHubSimulator() as sim, tempfile.TemporaryDirectory() as tmp:
        fix = both_scenarios(sim)
        arrivals = Arrivals(sim)
        python = image_like_python(Path(tmp))
        replays: dict[str, Path] = {}

        def sample(n: int, scenario: str, label: str, where: Path) -> Sample:
            if label == BARE:
                t0 = time.monotonic()
                wall, cpu = bare_run(python, sim.api_url, replays[scenario])
                seen = arrivals.since(t0)
                return Sample(min(seen), max(seen), wall, cpu, len(seen))
            return one_skip(entrypoints[scenario][label], sim, fix, arrivals, where, python, scenario)

        for n, (scenario, label) in enumerate(keys):  # page cache, .pyc files; the skip's requests
            if label == BARE:
                continue
            since = len(sim.requests)
            sample(n, scenario, label, Path(tmp) / f"warm-{n}")
            if label == THIS:
                replays[scenario] = Path(tmp) / f"requests-{scenario}.json"
                replays[scenario].write_text(json.dumps(recorded(sim, since)))
        for i in range(runs):
            for n in range(len(keys)) if i % 2 == 0 else reversed(range(len(keys))):
                scenario, label = keys[n]
                samples[keys[n]].append(sample(n, scenario, label, Path(tmp) / f"run-{i}-{n}"))
    return samples


def _stat(values: list[float]) -> str:
    return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"


def report(samples: dict[tuple[str, str], list[Sample]]) -> None:
    """The table (min / median / max, seconds) and a goal line per scenario."""
    runs = len(next(iter(samples.values())))
    print(f"pre-flight skip, process start -> ..., min / median / max of {runs} paired runs, seconds")
    head = f"{'skip':<14}  {'code':<22}  {'first request':<21}  {'last request':<21}  {'exit (decided)':<21}"
    print(f"{head}  {'cpu':<21}  requests")
    print("-" * 140)
    for (scenario, label), rows in samples.items():
        print(
            f"{scenario:<14}  {label:<22}  {_stat([s.first_request_s for s in rows]):<21}  "
            f"{_stat([s.last_request_s for s in rows]):<21}  {_stat([s.exit_s for s in rows]):<21}  "
            f"{_stat([s.cpu_s for s in rows]):<21}  {statistics.median(s.requests for s in rows):g}"
        )
    for scenario in SCENARIOS:
        mine = samples[(scenario, THIS)]
        cpu = statistics.median(s.cpu_s for s in mine)
        wall = statistics.median(s.exit_s for s in mine)
        bare = statistics.median(s.exit_s for s in samples[(scenario, BARE)])
        ratio = wall / bare
        name = f"skip.{scenario.replace('-', '_')}"
        print(
            f"goal ({scenario}): CPU to the decision <= {CPU_GOAL_S:g} s at the median: {cpu:.3f} s "
            f"({'met' if cpu <= CPU_GOAL_S else 'NOT met'}); wall time {wall:.3f} s = {ratio:.2f} x the bare "
            f"client's {bare:.3f} s (goal <= {WALL_GOAL_RATIO:g} x: {'met' if ratio <= WALL_GOAL_RATIO else 'NOT met'})"
        )
        print(goal_line(f"{name}.cpu_to_decision", f"{cpu:.3f}s", f"<={CPU_GOAL_S:g}s", cpu <= CPU_GOAL_S))
        print(
            goal_line(
                f"{name}.wall_vs_bare_client", f"{ratio:.2f}x", f"<={WALL_GOAL_RATIO:g}x", ratio <= WALL_GOAL_RATIO
            )
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=21, help="skips per entrypoint (default 21)")
    parser.add_argument("--quick", action="store_true", help="5 skips each (the CI mode of run_all.py)")
    parser.add_argument("--baseline", default=BASELINE_REF, help="receipt skip: git ref to compare with")
    parser.add_argument(
        "--head-baseline", default=HEAD_BASELINE_REF, help="head-reviewed skip: git ref to compare with"
    )
    args = parser.parse_args(argv)
    runs = 5 if args.quick else args.runs
    with tempfile.TemporaryDirectory() as tmp:
        refs = {"receipt": args.baseline, "head-reviewed": args.head_baseline}
        entrypoints: dict[str, dict[str, Path]] = {}
        for scenario, ref in refs.items():
            entrypoints[scenario] = {THIS: ROOT / "entrypoint.py"}
            tree = Path(tmp) / f"baseline-{scenario}"
            if export_tree(ref, tree, ["fullsend", "entrypoint.py"]):
                entrypoints[scenario][f"baseline {ref[:12]}"] = tree / "entrypoint.py"
            else:
                print(f"(baseline {ref} is not in this clone: this checkout only for the {scenario} skip)")
        try:
            report(paired(entrypoints, runs))
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            print(f"a run did not skip: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
