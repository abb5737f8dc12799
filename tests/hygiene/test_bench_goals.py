"""The GOAL lines ``bench/run_all.py`` collects at the end of a run (bench/README.md "Goals")."""

from __future__ import annotations

from pathlib import Path

from bench._goals import GOALS, Goal, collect, goal_line, summary

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_goal_lines_are_collected_in_order_and_anything_else_is_ignored() -> None:
    outputs = {
        "bench_skip": "\n".join(
            [
                "goal (receipt): process start -> decision (exit) <= 0.15 s at the median: measured 0.144 s (met)",
                "GOAL skip.receipt.start_to_decision measured=0.144s goal=<=0.15s verdict=met",
                "  GOAL skip.head_reviewed.start_to_decision measured=0.161s goal=<=0.15s verdict=not met  ",
            ]
        ),
        "scale": "\n".join(
            [
                "GOAL scale.watched_runs_in_job_budget measured=10runs goal=>=20runs verdict=not measured",
                "GOAL scale.x measured=1 goal=2 verdict=NOT met",  # the verdict is lower-case
                "GOAL Scale.y measured=1 goal=2 verdict=met",  # the name is lower-case
                "GOAL scale.z measured=1 s goal=2 verdict=met",  # no space in a value
                "GOAL scale.w measured=1 goal=2",  # no verdict
            ]
        ),
    }
    assert collect(outputs) == [
        Goal("skip.receipt.start_to_decision", "0.144s", "<=0.15s", "met", "bench_skip"),
        Goal("skip.head_reviewed.start_to_decision", "0.161s", "<=0.15s", "not met", "bench_skip"),
        Goal("scale.watched_runs_in_job_budget", "10runs", ">=20runs", "not measured", "scale"),
    ]


def test_goal_line_is_read_back_as_written() -> None:
    lines = [
        goal_line("idle.cpu_per_idle_second", "0.042ms", "<=0.1ms", True),
        goal_line("poll.cpu_per_304_cycle", "2.40ms", "<=1ms", False),
        goal_line("scale.watched_runs_in_job_budget", "10runs", ">=20runs", None),
    ]
    assert [(g.name, g.measured, g.goal, g.verdict) for g in collect({"b": "\n".join(lines)})] == [
        ("idle.cpu_per_idle_second", "0.042ms", "<=0.1ms", "met"),
        ("poll.cpu_per_304_cycle", "2.40ms", "<=1ms", "not met"),
        ("scale.watched_runs_in_job_budget", "10runs", ">=20runs", "not measured"),
    ]


def test_the_summary_marks_an_goal_missing_only_when_its_benchmark_ran() -> None:
    goals = [Goal("latency.default_poll_p95", "9.6s", "<=10s", "met", "latency")]
    rows = summary(goals, ["latency", "bench_idle"])
    assert rows[0].split() == ["goal", "measured", "goal", "verdict", "benchmark"]
    assert rows[2].split() == ["latency.default_poll_p95", "9.6s", "<=10s", "met", "latency"]
    assert [r.split() for r in rows[3:]] == [["idle.cpu_per_idle_second", "-", "-", "missing", "bench_idle"]]


def test_every_goal_names_a_benchmark_that_prints_goal_lines() -> None:
    for bench in set(GOALS.values()):
        source = (BENCH / f"{bench}.py").read_text()
        assert "GOAL " in source or "goal_line(" in source, bench
