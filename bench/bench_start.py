"""What the queued run's skip costs: process start → first API request, and the image (issue 20).

    python bench/bench_start.py [--runs 15] [--baseline REF] [--images] [--container-runs 7] [--quick]

1. Process (always): the receipt-skip scenario (job-token receipts list the queued run) run
   through the real entrypoint as a subprocess, with the environment a runner gives the
   container, against the simulator on 127.0.0.1.  For this checkout and for ``--baseline``
   (a git ref, default :data:`BASELINE_REF`, the last commit before issue 20; its ``fullsend/``
   and ``entrypoint.py`` are exported with ``git archive``), runs alternate so both see the same
   load.  Per run: process start → the simulator's first request, start → exit, and the CPU
   seconds of the process (both images of the re-exec).  Prints the medians and ranges.
2. Images (``--images``; needs podman, runc and the local base, tools/container/): the image a
   runner builds from the baseline's ``Dockerfile`` against this checkout's default and full
   images — compressed bytes a pull fetches (layers gzip-compressed as a registry push does,
   measured by ``podman push`` into an OCI layout) and ``podman run`` → exit of the skip
   scenario, run the way a runner runs a container action (tests/support/runner_container.py).

Exits 0 after printing; 1 when a run did not skip.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fullsend.core.receipt.marker import receipt_body  # noqa: E402
from fullsend.simulator.fixtures import (  # noqa: E402
    StandardScenario,
    add_follow_up_run,
    genuine_receipt,
    standard_pr_scenario,
)
from fullsend.simulator.server import GitHubSimulator  # noqa: E402
from tests.support.action_run import parse_outputs, runner_env  # noqa: E402

#: The last commit of main before issue 20 ("today's" action).
BASELINE_REF = "a5817394ff1e8ffed6e2c28277bf7e2454b7ef29"
QUEUED_RUN_ID = 33740099999


@dataclass(frozen=True)
class Sample:
    """One skip: seconds from process start to the first request and to exit, CPU seconds."""

    first_request_s: float
    exit_s: float
    cpu_s: float


class Arrivals:
    """The monotonic time of every request the simulator answers (the skip benches' one recorder)."""

    def __init__(self, sim: GitHubSimulator) -> None:
        self._times: list[float] = []
        self._lock = threading.Lock()
        sim.on_request(lambda r: True, self._seen, once=False)

    def _seen(self, sim: GitHubSimulator) -> None:
        with self._lock:
            self._times.append(time.monotonic())

    def since(self, t0: float) -> list[float]:
        """Seconds from ``t0`` to each request recorded at or after it, in arrival order."""
        with self._lock:
            return [t - t0 for t in self._times if t >= t0]

    def first_after(self, t0: float) -> float:
        """Seconds from ``t0`` to the first request recorded at or after it; ``ValueError`` if none."""
        return min(self.since(t0))


def skip_scenario(sim: GitHubSimulator) -> StandardScenario:
    """FIX plus two job-token receipts that list :data:`QUEUED_RUN_ID`: the unsigned one, on which
    a baseline from before signed receipts skips, and FIX's signed one, the only one this checkout
    honours (it refuses the unsigned one first: docs/rules.md "Receipt proof"), so its skip
    includes the proof (the issuer's keys and this run's record read beside the receipt query,
    the RS256 check)."""
    fix = standard_pr_scenario(sim)
    add_follow_up_run(sim, run_id=QUEUED_RUN_ID)  # its record: the shim and dispatch a proof must name
    sim.add_comment(fix.pr, receipt_body([QUEUED_RUN_ID], fix.head), fix.job_login)
    signed = genuine_receipt(sim, [QUEUED_RUN_ID], fix.head, writer_run_id=fix.my_run_id, item=fix.pr)
    sim.add_comment(fix.pr, signed, fix.job_login)
    return fix


def export_tree(ref: str, dest: Path, paths: list[str]) -> bool:
    """``git archive ref paths | tar -x -C dest``; False when the ref is not in this clone."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", ref, *paths], capture_output=True)
    if archive.returncode != 0:
        return False
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return True


def run_skip(
    entrypoint: Path,
    sim: GitHubSimulator,
    fix: StandardScenario,
    tmp: Path,
    python: str = sys.executable,
    runner: dict[str, Any] | None = None,
) -> tuple[float, float, float]:
    """Run the entrypoint once as the queued run under ``python``, in a fresh ``tmp``; ``runner``
    replaces the queued run's ``runner_env`` arguments and adds ``GITHUB_*`` variables
    (``env``), for another skip than the receipt's.

    Returns ``(t0, exit_s, cpu_s)``: the monotonic start, seconds to exit and the CPU seconds of
    the process and its children.  Raises ``RuntimeError`` unless the run skipped.
    """
    tmp.mkdir(parents=True)
    given = dict(runner or {})
    extra = given.pop("env", {})
    env = {**runner_env(tmp, sim, fix, **{"run_id": QUEUED_RUN_ID, **given}), **extra}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    proc = subprocess.run(
        [python, str(entrypoint)], env=env, cwd=env["GITHUB_WORKSPACE"], capture_output=True, text=True, timeout=120
    )
    exit_s = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = Path(env["GITHUB_OUTPUT"])
    outputs = parse_outputs(out.read_text()) if out.exists() else {}
    if proc.returncode != 0 or outputs.get("outcome") != "skipped":
        raise RuntimeError(
            f"{entrypoint}: exit {proc.returncode}, outputs {outputs}\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        )
    return t0, exit_s, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def one_skip(entrypoint: Path, sim: GitHubSimulator, fix: StandardScenario, arrivals: Arrivals, tmp: Path) -> Sample:
    """Run the entrypoint once as the queued run; raises ``RuntimeError`` unless it skipped."""
    t0, exit_s, cpu_s = run_skip(entrypoint, sim, fix, tmp)
    return Sample(arrivals.first_after(t0), exit_s, cpu_s)


def bench_process(entrypoints: dict[str, Path], runs: int) -> dict[str, list[Sample]]:
    """``runs`` skips of each entrypoint, alternating; returns the samples per label."""
    samples: dict[str, list[Sample]] = {label: [] for label in entrypoints}
    with GitHubSimulator() as sim, tempfile.TemporaryDirectory() as tmp:
        fix, arrivals = skip_scenario(sim), Arrivals(sim)
        labels = list(entrypoints)
        for n, path in enumerate(entrypoints.values()):  # one warm-up each (page cache, .pyc files)
            one_skip(path, sim, fix, arrivals, Path(tmp) / f"warm-{n}")
        for i in range(runs):
            for n in range(len(labels)) if i % 2 == 0 else reversed(range(len(labels))):
                label = labels[n]
                samples[label].append(one_skip(entrypoints[label], sim, fix, arrivals, Path(tmp) / f"run-{i}-{n}"))
    return samples


#: Issue 20's goal for the skip path on this machine class (the image goals are printed by ``--images``).
START_GOAL_S = 0.5


def _stat(values: list[float]) -> str:
    return f"{statistics.median(values):6.3f}  ({min(values):.3f}-{max(values):.3f})"


def print_process(samples: dict[str, list[Sample]]) -> None:
    print(
        "process start -> first API request / exit, CPU (receipt skip, median (range) of "
        f"{len(next(iter(samples.values())))} runs, seconds)"
    )
    print(f"{'code':<28}  {'first request':<22}  {'exit':<22}  {'cpu':<22}")
    print("-" * 100)
    for label, rows in samples.items():
        print(
            f"{label:<28}  {_stat([s.first_request_s for s in rows]):<22}  {_stat([s.exit_s for s in rows]):<22}  "
            f"{_stat([s.cpu_s for s in rows]):<22}"
        )
    mine = statistics.median(s.first_request_s for s in samples["this checkout"])
    verdict = "met" if mine <= START_GOAL_S else "NOT met"
    print(f"goal: process start -> first request <= {START_GOAL_S:g} s at the median: {mine:.3f} s ({verdict})")


def missing_dependency(tree: Path) -> str:
    """The first third-party package ``tree``'s code imports at module level that this interpreter
    cannot import (a baseline from before a dependency was dropped, e.g. PyGithub), or ``""``."""
    import importlib.util
    import re

    for path in sorted(tree.rglob("*.py")):
        for name in re.findall(
            r"(?m)^(?:from|import) (github|requests|pydantic|jinja2|yaml)\b", path.read_text("utf-8")
        ):
            if importlib.util.find_spec(name) is None:
                return name
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=15, help="skips per entrypoint (default 15)")
    parser.add_argument("--quick", action="store_true", help="3 skips each, no images (the CI mode of run_all.py)")
    parser.add_argument("--baseline", default=BASELINE_REF, help="git ref of today's action (default: before issue 20)")
    parser.add_argument("--images", action="store_true", help="also build and compare the images (podman)")
    parser.add_argument("--container-runs", type=int, default=7, help="container skips per image (default 7)")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.images = 3, False
    with tempfile.TemporaryDirectory() as tmp:
        entrypoints = {"this checkout": ROOT / "entrypoint.py"}
        baseline_dir = Path(tmp) / "baseline"
        if not export_tree(args.baseline, baseline_dir, ["fullsend", "entrypoint.py"]):
            print(f"(baseline {args.baseline} is not in this clone: this checkout only)")
        elif missing := missing_dependency(baseline_dir):
            print(
                f"(baseline {args.baseline} imports {missing}, which the locked dependencies no longer "
                "hold: this checkout only)"
            )
        else:
            entrypoints[f"baseline {args.baseline[:12]}"] = baseline_dir / "entrypoint.py"
        try:
            print_process(bench_process(entrypoints, args.runs))
        except RuntimeError as exc:
            print(f"a run did not skip: {exc}", file=sys.stderr)
            return 1
        if args.images:
            from bench._images import bench_images  # podman only when asked for

            return bench_images(args.baseline, Path(tmp), args.container_runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
