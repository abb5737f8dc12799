"""The queued run's receipt skip at its floor: process start → decision (issue 33).

    python bench/bench_skip.py [--runs 21] [--baseline REF] [--quick]

The receipt-skip scenario (a job-token receipt lists the queued run) runs through the real
entrypoint as a subprocess — ``fullsend run``'s re-execution, the fast skip of
docs/architecture.md "Fast skip", its outputs and step summary — with the environment a runner
gives the container, against the simulator on 127.0.0.1, on an interpreter laid out as the image's
(:func:`image_like_python`: no editable-install hook).  Runs of this checkout and of
``--baseline`` (default :data:`BASELINE_REF`, main before issue 33, exported with ``git
archive``) alternate, so both see the same load.  Per run, from process start: the first API
request, the last one (the decision needs its answer), the process exit (the decision made and
written: the figure the goal is on), the CPU seconds of both interpreters of the re-execution,
and the number of requests.  Prints min/median/max and the goal with its verdict; exits 0
either way (1 when a run did not skip).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_start import Arrivals, export_tree, run_skip, skip_scenario  # noqa: E402
from fullsend.simulator.fixtures import StandardScenario  # noqa: E402
from fullsend.simulator.server import GitHubSimulator  # noqa: E402

#: main before issue 33: the skip decided after pydantic, requests and jinja2 were loaded.
BASELINE_REF = "1f5c034c2669c514314a25a3869f9ce26ccfd90e"
GOAL_S = 0.15  # issue 33: process start -> decision, median, on this machine class


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
) -> Sample:
    """Run the entrypoint once as the queued run; raises ``RuntimeError`` unless it skipped."""
    t0, exit_s, cpu_s = run_skip(entrypoint, sim, fix, tmp, python)
    seen = arrivals.since(t0)
    return Sample(min(seen), max(seen), exit_s, cpu_s, len(seen))


def paired(entrypoints: dict[str, Path], runs: int) -> dict[str, list[Sample]]:
    """``runs`` skips of each entrypoint, alternating the order each round, after one warm-up each."""
    samples: dict[str, list[Sample]] = {label: [] for label in entrypoints}
    with GitHubSimulator() as sim, tempfile.TemporaryDirectory() as tmp:
        fix = skip_scenario(sim)
        arrivals = Arrivals(sim)
        python = image_like_python(Path(tmp))
        labels = list(entrypoints)
        for n, path in enumerate(entrypoints.values()):  # page cache, .pyc files
            one_skip(path, sim, fix, arrivals, Path(tmp) / f"warm-{n}", python)
        for i in range(runs):
            for n in range(len(labels)) if i % 2 == 0 else reversed(range(len(labels))):
                samples[labels[n]].append(
                    one_skip(entrypoints[labels[n]], sim, fix, arrivals, Path(tmp) / f"run-{i}-{n}", python)
                )
    return samples


def _stat(values: list[float]) -> str:
    return f"{min(values):.3f} / {statistics.median(values):.3f} / {max(values):.3f}"


def report(samples: dict[str, list[Sample]]) -> None:
    """The table (min / median / max, seconds) and the goal line."""
    runs = len(next(iter(samples.values())))
    print(f"receipt skip, process start -> ..., min / median / max of {runs} paired runs, seconds")
    print(f"{'code':<22}  {'first request':<21}  {'last request':<21}  {'exit (decided)':<21}  {'cpu':<21}  requests")
    print("-" * 124)
    for label, rows in samples.items():
        print(
            f"{label:<22}  {_stat([s.first_request_s for s in rows]):<21}  "
            f"{_stat([s.last_request_s for s in rows]):<21}  {_stat([s.exit_s for s in rows]):<21}  "
            f"{_stat([s.cpu_s for s in rows]):<21}  {statistics.median(s.requests for s in rows):g}"
        )
    mine = statistics.median(s.exit_s for s in samples["this checkout"])
    print(
        f"goal: process start -> decision (exit) <= {GOAL_S:g} s at the median: measured {mine:.3f} s "
        f"({'met' if mine <= GOAL_S else 'NOT met'})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=21, help="skips per entrypoint (default 21)")
    parser.add_argument("--quick", action="store_true", help="5 skips each (the CI mode of run_all.py)")
    parser.add_argument("--baseline", default=BASELINE_REF, help="git ref to compare with (default: before issue 33)")
    args = parser.parse_args(argv)
    runs = 5 if args.quick else args.runs
    with tempfile.TemporaryDirectory() as tmp:
        entrypoints = {"this checkout": ROOT / "entrypoint.py"}
        if export_tree(args.baseline, Path(tmp) / "baseline", ["fullsend", "entrypoint.py"]):
            entrypoints[f"baseline {args.baseline[:12]}"] = Path(tmp) / "baseline" / "entrypoint.py"
        else:
            print(f"(baseline {args.baseline} is not in this clone: this checkout only)")
        try:
            report(paired(entrypoints, runs))
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            print(f"a run did not skip: {exc}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
