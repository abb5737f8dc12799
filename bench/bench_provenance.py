"""CPU time to judge a 400-run listing (docs/architecture.md "Listing", "Provenance"): all
judged before vs. all new.

A plain script, not a test: ``python bench/bench_provenance.py``.  It prints one table and exits 0.
"All judged before" is the steady state of a long run (every listed id stops at the `once` check);
"all new" reads each run's jobs (phase B) and accepts it.  Times are process CPU time
(``time.process_time``), the median over the repeats, per listing of 400 runs.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from fullsend.core.model import Comment, Job, ReferencedWorkflow, WorkflowRun
from fullsend.core.provenance.binding import authorizations, bind_triggers, observed_authorizations
from fullsend.core.provenance.verdicts import MyRun, judge_jobs, judge_record, order_listing

LISTING_SIZE = 400  # the page cap: 4 pages of 100 (docs/architecture.md "Listing")
REPEATS = 30
MY_ID = 33740015232
START = datetime(2026, 9, 3, 10, 0, tzinfo=UTC)
REF = ReferencedWorkflow("fullsend-ai/fullsend/.github/workflows/reusable-dispatch.yml@main", "refs/heads/main", "s")
ME = MyRun(
    MY_ID, ".github/workflows/fullsend.yml", (REF,), START, "org/repo#7", 7, "dispatch / Route", "dispatch / Review"
)
JOBS = [
    Job(1, "dispatch / Route", "completed", "success"),
    Job(2, "dispatch / Review", "queued", None),
    Job(3, "Route", "completed", "success"),
    Job(4, "dispatch / Triage", "completed", "skipped"),
]


def listing() -> list[WorkflowRun]:
    """400 issue_comment follow-ups bound by title, newest first as GitHub returns them."""
    runs = [
        WorkflowRun(
            id=MY_ID + 1 + i,
            path=ME.path,
            event="issue_comment",
            status="completed",
            created_at=START + timedelta(seconds=5 * (i + 1)),
            run_attempt=1,
            display_title=f"org/repo#7 comment:{9000 + i}",
            actor=f"user-{i % 7}",
            referenced_workflows=(REF,),
        )
        for i in range(LISTING_SIZE)
    ]
    return runs[::-1]


def poll(runs: list[WorkflowRun], judged: set[int]) -> int:
    """Judge one listing as the watcher loop does; returns the batch size."""
    batch = 0
    for run in order_listing(runs):
        verdict = judge_record(run, ME, judged)
        if verdict.outcome == "accept" and judge_jobs(run, JOBS, ME).outcome == "accept":
            batch += 1
    return batch


def cpu_ms(work: Callable[[], object]) -> float:
    """Median process CPU time of ``work`` in milliseconds over REPEATS runs."""
    samples = []
    for _ in range(REPEATS):
        start = time.process_time()
        work()
        samples.append((time.process_time() - start) * 1000)
    return statistics.median(samples)


def main() -> int:
    runs = listing()
    all_ids = {r.id for r in runs}
    comments = [
        Comment(9000 + i, f"/fs-fix item {i}", f"user-{i % 7}", "User", r.created_at - timedelta(seconds=2))
        for i, r in enumerate(reversed(runs))
    ]
    assert poll(runs, all_ids) == 0 and poll(runs, set()) == LISTING_SIZE
    rows = [
        ("all judged before (phase A stops at `once`)", cpu_ms(lambda: poll(runs, all_ids))),
        ("all new (phase A + jobs, all accepted)", cpu_ms(lambda: poll(runs, set()))),
        (
            "bind 400 authorizations to 400 comments",
            cpu_ms(lambda: bind_triggers(comments, authorizations(runs), observed_authorizations(runs))),
        ),
    ]
    width = max(len(name) for name, _ in rows)
    print(f"{'case (listing of ' + str(LISTING_SIZE) + ' runs)':<{width}}  CPU ms (median of {REPEATS})")
    print("-" * width + "  " + "-" * 22)
    for name, ms in rows:
        print(f"{name:<{width}}  {ms:10.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
