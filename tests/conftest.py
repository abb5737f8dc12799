"""Session-wide test settings: Hypothesis profiles (select with ``HYPOTHESIS_PROFILE``), and the
time per test tier printed at the end of every run.

``dev`` (default, 200 examples) for the default tier, ``ci`` (2,000; what the full tier of
``.ci/run`` selects, README "Run the tests"; the long profiles that issues named keep their own
counts) and ``slow`` (50,000).  No example database is
written into the working tree; a failure prints the blob that reproduces it.

A tier is the first directory under ``tests/`` (``core``, ``adapters``, ``app``, ``container``,
``act``, ``faults`` …); its time is the sum of its tests' setup, call and teardown durations, so
the table says where a run's time goes (collection and start-up are not in it).  Under
pytest-xdist the workers' reports reach the controller, which prints one table for the run.  The
ten slowest tests follow the table, so the next regression is visible.
"""

from __future__ import annotations

import os
import subprocess
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

_COMMON = dict(deadline=None, database=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=200, **_COMMON)
settings.register_profile("ci", max_examples=2_000, **_COMMON)
settings.register_profile("slow", max_examples=50_000, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

TOP_LEVEL = "(top level)"
_tier_seconds: dict[str, float] = defaultdict(float)
_tier_tests: dict[str, set[str]] = defaultdict(set)
_test_seconds: dict[str, float] = defaultdict(float)
SLOWEST_SHOWN = 10


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (pyproject's addopts) starts two workers per core: most tests wait on a child
    process or a loopback server rather than compute (measured on 2 cores: the default tier in
    6.5 min with four workers, about 11 with two)."""
    return 2 * len(os.sched_getaffinity(0))


def tier_of(nodeid: str) -> str:
    """``tests/<folder>/…/test_<name>.py::test_y`` → ``<folder>``; a module directly in ``tests/`` → ``(top level)``."""
    parts = nodeid.split("::", 1)[0].split("/")
    if "tests" in parts:
        parts = parts[parts.index("tests") + 1 :]
    return parts[0] if len(parts) > 1 else TOP_LEVEL


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    tier = tier_of(report.nodeid)
    _tier_seconds[tier] += report.duration
    _tier_tests[tier].add(report.nodeid)
    _test_seconds[report.nodeid] += report.duration


def format_tier_table(seconds: dict[str, float], tests: dict[str, set[str]]) -> list[str]:
    """The table's lines: one row per tier, slowest first, then the total."""
    rows = sorted(seconds, key=lambda t: (-seconds[t], t))
    lines = [f"{'tier':<16} {'tests':>6} {'seconds':>9}"]
    lines += [f"{t:<16} {len(tests[t]):>6} {seconds[t]:>9.1f}" for t in rows]
    lines.append(f"{'total':<16} {sum(len(tests[t]) for t in rows):>6} {sum(seconds.values()):>9.1f}")
    return lines


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _tier_seconds:
        return
    terminalreporter.write_sep("-", "time per test tier (setup + call + teardown)")
    for line in format_tier_table(_tier_seconds, _tier_tests):
        terminalreporter.write_line(line)
    terminalreporter.write_line(f"the {SLOWEST_SHOWN} slowest tests (setup + call + teardown):")
    for line in format_slowest(_test_seconds, SLOWEST_SHOWN):
        terminalreporter.write_line(line)


def format_slowest(seconds: dict[str, float], count: int) -> list[str]:
    """``count`` lines ``  <seconds>s <test id>``, slowest first (ties by test id)."""
    ranked = sorted(seconds.items(), key=lambda item: (-item[1], item[0]))[:count]
    return [f"{took:9.1f}s {nodeid}" for nodeid, took in ranked]


@pytest.fixture(scope="session")
def released(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The session's steer-action release (tests/support/release.py: release.sh build and publish
    --local on a snapshot of this checkout, a registry on 127.0.0.1, both images pulled by digest),
    shared by the release test (the ``podman`` xdist group) and the adopter-path plays (the
    ``adopter`` group, a worker of its own beside it): the images are built once per content under
    a lock (tests/support/release.py), so a second worker waits for them and publishes its own
    release commits."""
    from tests.support.release import REPO_ROOT, make_release

    made = subprocess.run(
        [str(REPO_ROOT / "tools" / "container" / "make-base.sh")], capture_output=True, text=True, timeout=1200
    )
    if made.returncode != 0:
        pytest.fail(f"tools/container/make-base.sh failed:\n{made.stderr[-3000:]}", pytrace=False)
    with make_release(tmp_path_factory.mktemp("release")) as (release, _registry):
        yield release
