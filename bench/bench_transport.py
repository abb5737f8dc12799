"""Transport benchmarks (issue 5): steer → ack latency of the live feed, and the Codex interrupt.

    python bench/bench_transport.py [--steers 20] [--interrupts 3]

1. Live feed: ClaudeRuntime on the local sandbox with the scripted stream-json agent (eager
   echo).  Each steer's latency is ``delivered_at`` (the runner's clock when it read the echo)
   minus the time just before ``steer()`` was called.  Prints the median and p90 in ms.
2. Codex: CodexExecRuntime on the local sandbox with the scripted codex.  A steer during a running
   turn stops and starts the sandbox, waits out the settle window (default policy: 2 s) and
   resumes; the latency is ``delivered_at`` (the resumed process's ``thread.started``) minus the
   time just before ``steer()``.  Prints the median in ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
from datetime import UTC, datetime
from pathlib import Path

from fullsend.adapters.runtimes.claude.runtime import ClaudeRuntime
from fullsend.adapters.runtimes.codex.exec.runtime import CodexExecRuntime
from fullsend.core.watch.steer import SteerMessage
from fullsend.errors import NoSteerSession
from fullsend.ports import AgentParams


def _cli(tmp: Path) -> str:
    path = tmp / "scripted-agent"
    path.write_text(
        f"#!{sys.executable}\nimport sys\n"
        "from fullsend.simulator.agent.main import main\nsys.exit(main(sys.argv[1:]))\n"
    )
    path.chmod(0o755)
    return str(path)


def _now() -> datetime:
    return datetime.now(UTC)


def _wait(predicate, limit_s: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    tick = threading.Event()
    for _ in range(int(limit_s * 1000)):
        if predicate():
            return
        tick.wait(0.001)
    raise RuntimeError("benchmark step timed out")


def _params(cli: str, tmp: Path, turn_s: str) -> AgentParams:
    return AgentParams(
        sandbox_name="bench",
        agent_cli=cli,
        prompt="bench",
        workdir=tmp,
        timeout_s=300,
        env={"SCRIPTED_AGENT_TURN_S": turn_s},
        steerable=True,
    )


def _registered(runtime, attr: str) -> bool:  # type: ignore[no-untyped-def]
    return getattr(runtime, attr).lookup("bench") is not None


def bench_live(n: int, tmp: Path) -> list[float]:
    """Latencies (ms) of ``n`` steers into one running Claude-protocol turn."""
    runtime = ClaudeRuntime(sandbox_root_parent=tmp)
    box: dict[str, object] = {}
    worker = threading.Thread(
        target=lambda: box.setdefault("r", runtime.run(_params(_cli(tmp), tmp, str(5 + n * 0.1)), lambda at: None))
    )
    worker.start()
    _wait(lambda: _registered(runtime, "_feeds"))
    feed = runtime._feeds.lookup("bench")
    sent: list[datetime] = []
    for i in range(n):
        sent.append(_now())
        runtime.steer("bench", SteerMessage(i + 1, f"steer number {i}"))
        _wait(lambda i=i: len(feed.steer_results()) == i + 1)  # type: ignore[union-attr]
    results = feed.steer_results()  # type: ignore[union-attr]
    runtime.settle("bench")
    worker.join(60)
    return [(r.delivered_at - s).total_seconds() * 1000 for r, s in zip(results, sent, strict=False)]


def bench_codex(n: int, tmp: Path) -> list[float]:
    """Latencies (ms) from ``steer()`` to the resumed process's ``thread.started``."""
    latencies: list[float] = []
    for i in range(n):
        runtime = CodexExecRuntime(sandbox_root_parent=tmp)
        box: dict[str, object] = {}
        worker = threading.Thread(
            target=lambda box=box, runtime=runtime: box.setdefault(
                "r", runtime.run(_params(_cli(tmp), tmp, "1.0"), lambda at: runtime.settle("bench"))
            )
        )
        worker.start()
        _wait(
            lambda runtime=runtime: _registered(runtime, "_queues") and bool(runtime._queues.lookup("bench").thread_id)
        )
        sent = _now()
        try:
            runtime.steer("bench", SteerMessage(100 + i, "head moved"))
        except NoSteerSession:
            continue
        worker.join(60)
        steers = box["r"].steers  # type: ignore[attr-defined]
        latencies += [(steers[0].delivered_at - sent).total_seconds() * 1000] if steers else []
    return latencies


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steers", type=int, default=20)
    parser.add_argument("--interrupts", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="5 steers, 1 interrupt (the CI mode of run_all.py)")
    args = parser.parse_args()
    if args.quick:
        args.steers, args.interrupts = 5, 1
    with tempfile.TemporaryDirectory() as tmp:
        live = bench_live(args.steers, Path(tmp))
        print(
            f"live feed steer->ack: n={len(live)} median={statistics.median(live):.1f} ms "
            f"p90={sorted(live)[int(0.9 * (len(live) - 1))]:.1f} ms"
        )
        codex = bench_codex(args.interrupts, Path(tmp))
        if codex:
            print(
                f"codex steer->resumed thread.started (local sandbox, 2 s settle window): n={len(codex)} "
                f"median={statistics.median(codex):.0f} ms"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
