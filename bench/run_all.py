"""Run every benchmark in ``bench/`` and print one summary.

    python bench/run_all.py [--quick] [--only NAME ...] [--skip NAME ...] [--markdown]

Each ``bench/*.py`` script other than this one (``bench_provenance``, ``bench_envelope``,
``bench_transport``, ``policies``, ``api_cost``, ``skip_requests`` and any added later) runs as its own process
with this interpreter, from the repository root with it on ``PYTHONPATH`` (the policy and API
benchmarks import the test doubles, ``tests.doubles``); its table is printed under its name, then a
summary lists every benchmark with its exit status and wall time, then the goals: every ``GOAL``
line the benchmarks printed (``bench/_goals.py``: measured, goal, verdict), and each goal of ``bench/_goals.py``
whose benchmark ran without reporting it, marked missing.  ``--markdown`` prints the
tables as fenced blocks with the date, ready to paste into ``bench/README.md``.  The container
figures are measured by ``tests/container`` (see the "Container" section of the README), not
here.  ``--quick`` (the CI mode) passes ``--quick`` to every benchmark: fewer repeats and
smaller grids, the same tables; without it the full mode runs (the one recorded in the README).
Exits 0 when every benchmark exited 0, else 1.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))

from bench._goals import collect, summary  # noqa: E402

TIMEOUT_S = 900


def benchmarks() -> list[Path]:
    """Every benchmark script, in name order (``run_all.py`` and ``_private.py`` excluded)."""
    return sorted(p for p in BENCH.glob("*.py") if p.name != Path(__file__).name and not p.name.startswith("_"))


def run(path: Path, quick: bool = False) -> tuple[int, float, str]:
    """(exit status, wall seconds, stdout + stderr) of one benchmark; ``quick`` passes ``--quick``."""
    started = time.monotonic()
    try:
        command = [sys.executable, str(path), *(["--quick"] if quick else [])]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
        code, out = proc.returncode, proc.stdout + (f"\n[stderr]\n{proc.stderr}" if proc.returncode else "")
    except subprocess.TimeoutExpired:
        code, out = -1, f"timed out after {TIMEOUT_S} s"
    return code, time.monotonic() - started, out.rstrip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--only", nargs="*", default=[], help="run just these (names without .py)")
    parser.add_argument("--skip", nargs="*", default=[], help="leave these out")
    parser.add_argument("--quick", action="store_true", help="the CI mode: fewer repeats, smaller grids")
    parser.add_argument("--markdown", action="store_true", help="fenced blocks with the date")
    args = parser.parse_args(argv)
    chosen = [p for p in benchmarks() if (not args.only or p.stem in args.only) and p.stem not in args.skip]
    results, outputs = [], {}
    for path in chosen:
        code, seconds, out = run(path, args.quick)
        results.append((path.stem, code, seconds))
        outputs[path.stem] = out
        if args.markdown:
            print(f"### {path.stem} ({date.today().isoformat()})\n\n```text\n{out}\n```\n")
        else:
            print(f"=== {path.stem}\n{out}\n")
    width = max([len(name) for name, _, _ in results] + [9])
    print(f"{'benchmark':<{width}}  {'status':<12}  {'wall s':>7}")
    print("-" * (width + 23))
    for name, code, seconds in results:
        status = "ok" if code == 0 else ("timed out" if code == -1 else f"exit {code}")
        print(f"{name:<{width}}  {status:<12}  {seconds:>7.1f}")
    print('\ngoals (GOAL lines, bench/README.md "Goals")')
    print("\n".join(summary(collect(outputs), list(outputs))))
    return 0 if all(code == 0 for _, code, _ in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
