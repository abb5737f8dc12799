"""Codex steer latency (issue 17): steer → the first model request that carries it, on the live
``codex app-server`` transport and on ``codex exec`` interrupt-and-resume, side by side in one run.

    python bench/bench_codex_steer.py [--samples 8] [--quick]

Both columns run the product's runtimes (``CodexAppServerRuntime``, ``CodexExecRuntime`` with the
production ``SettlePolicy``) on the local sandbox with the REAL pinned Codex CLI
(``tools/install_agent_clis.sh``) against the scripted Responses API of ``tests/doubles``.  Stated
before the results: the agent's turn is a chain of shell steps of one length (the model calls the
shell tool again until it sees the update, then answers), 0.5 s and 2 s in the full mode, 1 s in
the quick mode; sample ``i`` steers ``OFFSETS[i]`` steps after the first step started, so the
steer lands at a different point of a step each time.  The latency is the wall time from just
before ``steer()`` to the moment the scripted server received the first request whose input
holds the update.  The live transport waits for the running step to end (at most one step):
Codex takes new input between a tool call and the next model request; exec stops and restarts
the sandbox (which also kills the running step), waits out its settle window (2 s) and starts
``codex exec … resume``.  So the live path wins by more the shorter the steps are.

Goal (issue 17): the live path at least 5× faster at the median, printed as met or not met for
each step length.
Without the Codex CLI the benchmark says so and exits 0 (CI installs it first).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from fullsend.adapters.runtimes.codex.appserver.runtime import CodexAppServerRuntime
from fullsend.adapters.runtimes.codex.exec.runtime import CodexExecRuntime
from fullsend.core.watch.steer import SteerMessage
from fullsend.ports import AgentParams
from tests.doubles.model_server import Reply, ToolCall, texts_in
from tests.doubles.openai_server import FakeOpenAI, config_toml

FULL_STEPS_S = (0.5, 2.0)
QUICK_STEPS_S = (1.0,)
OFFSETS = (0.25, 0.5, 0.75, 1.1, 1.35, 1.6, 1.85, 2.1, 2.35, 2.6)  # in steps
MARKER = "bench-codex-steer-marker"
GOAL_RATIO = 5.0
BOUND_S = 60.0


def codex_cli() -> Path:
    """Where ``tools/install_agent_clis.sh`` puts the pinned codex."""
    import os

    cache = Path(os.environ.get("FULLSEND_CLI_CACHE") or Path.home() / ".cache" / "fullsend-clis")
    return cache / "node_modules" / ".bin" / "codex"


class _Model:
    """The scripted model: shell steps until the update shows up; the arrival time of that request."""

    def __init__(self, step_s: float) -> None:
        self.step_s = step_s
        self.carried_at: float | None = None
        self._lock = threading.Lock()

    def script(self, body: dict[str, Any]) -> Reply:
        if not body.get("tools"):
            return Reply(text="title")
        if any(MARKER in text for text in texts_in(body.get("input"))):
            with self._lock:
                self.carried_at = self.carried_at or time.monotonic()
            return Reply(text="Update applied.")
        return Reply(text="Working.", tool=ToolCall("bash", f"touch step.flag; sleep {self.step_s}"))


def _params(cli: Path, tmp: Path, base_url: str) -> AgentParams:
    work, home = tmp / "work", tmp / "home"
    work.mkdir(parents=True, exist_ok=True)
    (home / "codex").mkdir(parents=True, exist_ok=True)
    (home / "codex" / "config.toml").write_text(config_toml(base_url))
    env = {
        "PATH": f"{cli.parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "CODEX_HOME": str(home / "codex"),
        "FAKE_OPENAI_KEY": "sk-fake",
        "LANG": "C.UTF-8",
        "TMPDIR": str(home),
    }
    return AgentParams(
        sandbox_name=f"bench-{tmp.name}",
        agent_cli=str(cli),
        prompt="Work through the steps.",
        workdir=work,
        env=env,
        steerable=True,
        timeout_s=BOUND_S * 2,
    )


def one_sample(runtime_cls: type, cli: Path, tmp: Path, step_s: float, offset: float) -> float | None:
    """Seconds from ``steer()`` to the first model request carrying the update (None: never)."""
    model = _Model(step_s)
    with FakeOpenAI(model.script, max_requests=200) as server:
        params = _params(cli, tmp, server.base_url)
        runtime = runtime_cls(sandbox_root_parent=tmp)
        worker = threading.Thread(target=runtime.run, args=(params, lambda at: None), daemon=True)
        worker.start()
        flag = params.workdir / "step.flag"
        deadline = time.monotonic() + BOUND_S
        while not flag.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(offset * step_s)
        sent = time.monotonic()
        runtime.steer(params.sandbox_name, SteerMessage(4242, f"Also do this ({MARKER})."))
        while model.carried_at is None and time.monotonic() < sent + BOUND_S:
            time.sleep(0.01)
        runtime.settle(params.sandbox_name)
        worker.join(BOUND_S)
        if worker.is_alive():
            runtime.cancel(params.sandbox_name)
            worker.join(10)
        return None if model.carried_at is None else model.carried_at - sent


def _row(name: str, latencies: list[float]) -> str:
    ordered = sorted(latencies)
    p90 = ordered[int(0.9 * (len(ordered) - 1))]
    return (
        f"{name:<34} {len(latencies):>3} {statistics.median(latencies):>9.2f} {p90:>8.2f} "
        f"{ordered[0]:>8.2f} {ordered[-1]:>8.2f}"
    )


def measure(cli: Path, root: Path, step_s: float, samples: int) -> dict[str, list[float | None]]:
    """Per transport, one latency per sample (None: the update never reached the model)."""
    columns: dict[str, list[float | None]] = {"app-server (turn/steer)": [], "exec (interrupt and resume)": []}
    for i in range(samples):
        for name, cls in zip(columns, (CodexAppServerRuntime, CodexExecRuntime), strict=True):
            tmp = root / f"{step_s:g}-{i}-{cls.__name__}"
            tmp.mkdir()
            columns[name].append(one_sample(cls, cli, tmp, step_s, OFFSETS[i]))
    return columns


def report(step_s: float, columns: dict[str, list[float | None]]) -> None:
    print(f"{step_s:g} s shell steps")
    print(f"{'transport':<34} {'n':>3} {'median':>9} {'p90':>8} {'min':>8} {'max':>8}")
    medians = []
    for name, values in columns.items():
        latencies = [v for v in values if v is not None]
        print(_row(name, latencies) if latencies else f"{name:<34} no sample reached the model")
        if len(latencies) < len(values):
            print(f"  {len(values) - len(latencies)} sample(s) never reached the model within {BOUND_S:g} s")
        medians.append(statistics.median(latencies) if latencies else None)
    live, resumed = medians
    if live and resumed:
        ratio = resumed / live
        print(
            f"goal at {step_s:g} s steps: live at least {GOAL_RATIO:g}x faster at the median: {ratio:.1f}x "
            f"({'met' if ratio >= GOAL_RATIO else 'NOT met'})"
        )
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--quick", action="store_true", help="3 samples, 1 s steps (the CI mode of run_all.py)")
    args = parser.parse_args()
    samples = 3 if args.quick else max(1, min(args.samples, len(OFFSETS)))
    cli = codex_cli()
    if not cli.exists():
        print(f"skipped: the pinned codex CLI is not installed at {cli} (bash tools/install_agent_clis.sh)")
        return 0
    print("Codex steer -> first model request carrying it (real codex, local sandbox), seconds")
    with tempfile.TemporaryDirectory() as root:
        for step_s in QUICK_STEPS_S if args.quick else FULL_STEPS_S:
            report(step_s, measure(cli, Path(root), step_s, samples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
