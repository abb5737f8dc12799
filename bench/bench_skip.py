"""The queued run's two pre-flight skips at their floor: process start → decision (issue 33).

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
and the number of requests.  Prints min/median/max and, per scenario, the goal with its verdict
as a ``GOAL`` line (bench/README.md "Goals"); exits 0 either way (1 when a run did not skip or
skipped for another reason).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
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

#: main before issue 33: the skip decided after pydantic, requests and jinja2 were loaded.
BASELINE_REF = "1f5c034c2669c514314a25a3869f9ce26ccfd90e"
#: main with the receipt skip fast and the head-reviewed skip on the full path (BASELINE_REF's
#: REST client, PyGithub, is no longer installed, so that tree cannot read a review).
HEAD_BASELINE_REF = "1a99cc8528aa01dbdabc54b138b1f26b4e15b394"
GOAL_S = 0.15  # issue 33: process start -> decision, median, on this machine class
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


def both_scenarios(sim: GitHubSimulator) -> StandardScenario:
    """The receipt scenario, and a review of FIX's head by the review App after FIX's run was
    created: the queued run skips on the receipt, FIX's own run (a ``pull_request`` event) on the review."""
    fix = skip_scenario(sim)
    sim.add_review(fix.pr, fix.role_login, "COMMENTED", submitted_at=REVIEWED_AT)
    return fix


def paired(entrypoints: dict[str, dict[str, Path]], runs: int) -> dict[tuple[str, str], list[Sample]]:
    """``runs`` skips of each scenario's entrypoints (``{scenario: {label: path}}``), alternating
    the order each round, after one warm-up each."""
    keys = [(scenario, label) for scenario, paths in entrypoints.items() for label in paths]
    samples: dict[tuple[str, str], list[Sample]] = {key: [] for key in keys}
    with GitHubSimulator() as sim, tempfile.TemporaryDirectory() as tmp:
        fix = both_scenarios(sim)
        arrivals = Arrivals(sim)
        python = image_like_python(Path(tmp))
        for n, (scenario, label) in enumerate(keys):  # page cache, .pyc files
            one_skip(entrypoints[scenario][label], sim, fix, arrivals, Path(tmp) / f"warm-{n}", python, scenario)
        for i in range(runs):
            for n in range(len(keys)) if i % 2 == 0 else reversed(range(len(keys))):
                scenario, label = keys[n]
                path = entrypoints[scenario][label]
                samples[keys[n]].append(
                    one_skip(path, sim, fix, arrivals, Path(tmp) / f"run-{i}-{n}", python, scenario)
                )
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
        mine = statistics.median(s.exit_s for s in samples[(scenario, "this checkout")])
        print(
            f"goal ({scenario}): process start -> decision (exit) <= {GOAL_S:g} s at the median: measured "
            f"{mine:.3f} s ({'met' if mine <= GOAL_S else 'NOT met'})"
        )
        name = f"skip.{scenario.replace('-', '_')}.start_to_decision"
        print(goal_line(name, f"{mine:.3f}s", f"<={GOAL_S:g}s", mine <= GOAL_S))


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
            entrypoints[scenario] = {"this checkout": ROOT / "entrypoint.py"}
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
