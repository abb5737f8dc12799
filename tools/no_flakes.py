"""Run the default test tier with every core kept busy, and list each test that failed.

    python tools/no_flakes.py [--runs N] [--burners K] [-- <extra pytest arguments>]

A test that passes on an idle machine and fails under load waits on the wall clock or races a
process without a bound it controls (docs/contributing.md "Flaky tests").  This tool starts one
CPU burner per core (or ``--burners K``), runs the README's test command (``python -m pytest``,
the default tier) ``--runs`` times in a row, and prints, per run, the tests that failed or errored
with the first line of their message.  It exits 0 only when every run passed with no failure.

The burners are child processes that spin until this tool stops them, or until their own deadline
(the runs' time limit plus a minute), so none outlives the tool.  Nothing is rerun: a test that
fails once is reported.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RUN_LIMIT_S = 40 * 60  # one run of the default tier under full load, with room to spare


def _burn(deadline_monotonic: float) -> None:
    """Spin on one core until ``deadline_monotonic`` (time.monotonic seconds)."""
    x = 0
    while time.monotonic() < deadline_monotonic:
        for _ in range(100_000):
            x = (x * 31 + 7) % 1_000_003


def failures(junit: Path) -> list[str]:
    """``<test id>: <first line of the message>`` for each failed or errored test in a JUnit XML file."""
    found = []
    for case in ElementTree.parse(junit).iter("testcase"):
        for child in case:
            if child.tag in ("failure", "error"):
                first = ((child.get("message") or child.text or "").strip().splitlines() or [""])[0]
                found.append(f"{case.get('classname', '')}::{case.get('name', '')}: {first[:200]}")
    return found


def one_run(index: int, extra: list[str]) -> tuple[int, list[str]]:
    """One default-tier run; returns (pytest's exit code, the failures it reported)."""
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}", *extra]
        print(f"[no_flakes] run {index}: {' '.join(command[1:])}", flush=True)
        started = time.monotonic()
        proc = subprocess.run(command, cwd=REPO, timeout=RUN_LIMIT_S, check=False)
        found = failures(junit) if junit.exists() else [f"no JUnit report (pytest exit {proc.returncode})"]
        print(
            f"[no_flakes] run {index}: exit {proc.returncode} after {time.monotonic() - started:.0f} s, "
            f"{len(found)} failed",
            flush=True,
        )
        return proc.returncode, found


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, start the burners, run the tier ``--runs`` times; 0 when nothing failed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, choices=range(1, 11), metavar="N", help="runs (1-10)")
    parser.add_argument("--burners", type=int, default=os.cpu_count() or 1, help="busy processes (default: cores)")
    parser.add_argument("extra", nargs="*", help="arguments for pytest, after --")
    args = parser.parse_args(argv)
    deadline = time.monotonic() + args.runs * RUN_LIMIT_S + 60
    burners = [multiprocessing.Process(target=_burn, args=(deadline,), daemon=True) for _ in range(args.burners)]
    for burner in burners:
        burner.start()
    results = []
    try:
        results = [one_run(i + 1, args.extra) for i in range(args.runs)]
    finally:
        for burner in burners:
            burner.terminate()
            burner.join()
    for i, (code, found) in enumerate(results, start=1):
        print(f"run {i}: exit {code}, {len(found)} failed" + "".join(f"\n  {line}" for line in found))
    return 0 if all(code == 0 and not found for code, found in results) else 1


if __name__ == "__main__":
    sys.exit(main())
