"""tools/no_flakes.py: the JUnit reading that decides what it reports, and one real run under load."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tools.no_flakes import failures

REPO = Path(__file__).resolve().parents[1]

JUNIT = """<?xml version="1.0"?>
<testsuites><testsuite>
  <testcase classname="tests.a" name="test_ok"/>
  <testcase classname="tests.b" name="test_bad"><failure message="assert 1 == 2&#10;more">trace</failure></testcase>
  <testcase classname="tests.c" name="test_err"><error message="fixture broke">trace</error></testcase>
  <testcase classname="tests.d" name="test_skip"><skipped message="needs jq"/></testcase>
</testsuite></testsuites>
"""


def test_failures_lists_failed_and_errored_tests_with_the_first_line(tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text(JUNIT, encoding="utf-8")
    assert failures(junit) == ["tests.b::test_bad: assert 1 == 2", "tests.c::test_err: fixture broke"]


def test_a_run_under_load_reports_a_failing_test_and_exits_1(tmp_path: Path) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text("def test_fails():\n    assert 1 + 1 == 3\n\n\ndef test_passes():\n    assert True\n")
    proc = subprocess.run(
        [sys.executable, "tools/no_flakes.py", "--runs", "1", "--burners", "1", "--", "-n", "0", str(probe)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "run 1: exit 1, 1 failed" in proc.stdout
    assert "test_probe::test_fails: assert (1 + 1) == 3" in proc.stdout, proc.stdout
