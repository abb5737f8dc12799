"""The GOAL line: how a benchmark states one goal and its measurement for ``run_all.py``.

One line per goal, anywhere in a benchmark's output (bench/README.md, "Goals")::

    GOAL <name> measured=<value><unit> goal=<op><value><unit> verdict=<met|not met|not measured>

``name`` is lower-case letters, digits, ``.``, ``_`` and ``-``; ``measured`` and ``goal`` hold no
space (``0.144s``, ``<=0.15s``, ``>=20runs``); ``verdict`` is ``met``, ``not met`` or ``not
measured`` (the run could not measure it, e.g. a quick grid below the goal).  A goal not met is
printed as not met, never left out.  ``run_all.py`` collects the lines of every benchmark it ran
and prints them together at the end, with each goal of :data:`GOALS` a benchmark that ran did not report
marked as missing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GOAL_RE = re.compile(
    r"^GOAL (?P<name>[a-z0-9_.-]+) measured=(?P<measured>\S+) goal=(?P<goal>\S+) "
    r"verdict=(?P<verdict>met|not met|not measured)$"
)
#: The goals we hold the benchmarks to and the benchmark that measures each (bench/README.md,
#: "Goals"); a time or CPU goal is a ratio to a floor measured in the same run where one exists.
GOALS = {
    "skip.receipt.cpu_to_decision": "bench_skip",
    "skip.receipt.wall_vs_bare_client": "bench_skip",
    "skip.head_reviewed.cpu_to_decision": "bench_skip",
    "skip.head_reviewed.wall_vs_bare_client": "bench_skip",
    "idle.cpu_per_idle_second": "bench_idle",
    "poll.cpu_per_304_cycle_vs_bare_client": "bench_poll",
    "poll.cpu_per_forced_304_listing_vs_bare_client": "bench_poll",
    "latency.default_poll_p95": "latency",
    "scale.watched_runs_in_job_budget": "scale",
}


@dataclass(frozen=True)
class Goal:
    """One GOAL line, and the benchmark that printed it."""

    name: str
    measured: str
    goal: str
    verdict: str
    bench: str


def goal_line(name: str, measured: str, goal: str, met: bool | None) -> str:
    """The GOAL line of one goal; ``met`` ``None`` is "not measured"."""
    verdict = "not measured" if met is None else ("met" if met else "not met")
    return f"GOAL {name} measured={measured} goal={goal} verdict={verdict}"


def collect(outputs: dict[str, str]) -> list[Goal]:
    """Every GOAL line of every benchmark's output (``{bench: output}``), in output order."""
    found = []
    for bench, text in outputs.items():
        for line in text.splitlines():
            match = GOAL_RE.match(line.strip())
            if match:
                found.append(Goal(bench=bench, **match.groupdict()))
    return found


def summary(goals: list[Goal], ran: list[str]) -> list[str]:
    """The goals table: each goal found, then each goal of :data:`GOALS` whose benchmark ran
    without printing it (``missing``)."""
    seen = {g.name for g in goals}
    rows = [(g.name, g.measured, g.goal, g.verdict, g.bench) for g in goals]
    rows += [(name, "-", "-", "missing", bench) for name, bench in GOALS.items() if bench in ran and name not in seen]
    width = max([len(r[0]) for r in rows] + [4])
    lines = [f"{'goal':<{width}}  {'measured':>10}  {'goal':>10}  {'verdict':<12}  benchmark", "-" * (width + 52)]
    lines += [f"{n:<{width}}  {m:>10}  {g:>10}  {v:<12}  {b}" for n, m, g, v, b in rows]
    return lines
