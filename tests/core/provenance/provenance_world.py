"""Shared fixtures for the provenance tests: the FIX scenario and the past-bug scenarios.

Records are built from REST-shaped dicts by ``prov_records``, so the fixtures keep GitHub's field
names and can hold the unknown values the core must fail safe on.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime
from typing import Any

from fullsend.core.model import Comment, Job, WorkflowRun
from fullsend.core.provenance.verdicts import MyRun, Verdict, judge_jobs, judge_record
from fullsend.core.scalars import parse_time
from fullsend.core.watch.start import my_run_facts
from tests.core.provenance import prov_records as rest

# --- FIX: PR #7 of org/repo and my run --------------------------------------------------------

MY_ID = 33740015232
SHIM = ".github/workflows/fullsend.yml"
REF = {
    "path": "fullsend-ai/fullsend/.github/workflows/reusable-dispatch.yml@main",
    "ref": "refs/heads/main",
    "sha": "2a103497ee1e9a1b3c4d5e6f7a8b9c0d1e2f3a4b",
}
MY_RUN_JSON: dict[str, Any] = {
    "id": MY_ID,
    "path": SHIM,
    "event": "issue_comment",
    "status": "completed",
    "created_at": "2026-09-03T10:00:00Z",
    "display_title": "org/repo#7",
    "actor": {"login": "reviewer"},
    "triggering_actor": {"login": "reviewer"},
    "run_attempt": 1,
    "pull_requests": [],
    "referenced_workflows": [REF],
}
MY_JOBS_JSON = [
    {"id": 1, "name": "dispatch / Route", "status": "completed", "conclusion": "success"},
    {"id": 2, "name": "dispatch / Review", "status": "in_progress", "conclusion": None},
]
ACCEPT_JOBS_JSON = [
    {"id": 11, "name": "dispatch / Route", "status": "completed", "conclusion": "success"},
    {"id": 12, "name": "dispatch / Review", "status": "queued", "conclusion": None},
]


def t(clock: str, day: str = "2026-09-03") -> datetime:
    """An instant on the fixture day: ``t("10:05:03")``."""
    parsed = parse_time(f"{day}T{clock}Z")
    assert parsed is not None
    return parsed


def jobs(*specs: tuple[str, str, str | None]) -> list[Job]:
    """Jobs from (name, status, conclusion) triples."""
    return [rest.job({"id": i + 100, "name": n, "status": s, "conclusion": c}) for i, (n, s, c) in enumerate(specs)]


ACCEPT_JOBS = [rest.job(j) for j in ACCEPT_JOBS_JSON]


def candidate_json(**changes: Any) -> dict[str, Any]:
    """A candidate run ``C(...)`` of FIX as REST JSON; ``pull_requests`` may be given as a list of numbers."""
    base: dict[str, Any] = {
        "id": 42,
        "path": SHIM,
        "event": "issue_comment",
        "status": "completed",
        "conclusion": "",
        "created_at": "2026-09-03T10:05:00Z",
        "display_title": "",
        "actor": {"login": "reviewer"},
        "triggering_actor": {"login": "reviewer"},
        "run_attempt": 1,
        "pull_requests": [],
        "referenced_workflows": [REF],
    }
    base.update(changes)
    prs = base["pull_requests"]
    if isinstance(prs, list) and all(isinstance(n, int) for n in prs):
        base["pull_requests"] = [{"number": n} for n in prs]
    return base


def C(**changes: Any) -> WorkflowRun:
    """A candidate run of FIX with the given changes."""
    return rest.workflow_run(candidate_json(**changes))


def me_fix(display_title: str = "org/repo#7") -> MyRun:
    """Start on FIX: freshAfter 10:00:00Z, route "dispatch / Route", stage "dispatch / Review"."""
    run = rest.workflow_run({**MY_RUN_JSON, "display_title": display_title})
    me, _ = my_run_facts(
        run,
        [rest.job(j) for j in MY_JOBS_JSON],
        run_name="org/repo#7",
        item_number=7,
        started_at=t("10:00:00"),
        stage_hints=["review"],
    )
    return me


# --- the past-bug scenarios: acme/widget PR #42 ------------------------------------------------

ACME_SHIM = ".github/workflows/fullsend.yaml"
REUSABLE = {
    "path": "fullsend-ai/fullsend/.github/workflows/reusable-dispatch.yml@refs/heads/main",
    "ref": "refs/heads/main",
    "sha": "s1",
}
ACME_MY_RUN_JSON: dict[str, Any] = {
    "id": 1000,
    "path": ACME_SHIM,
    "event": "pull_request_target",
    "status": "in_progress",
    "created_at": "2026-09-18T12:00:00Z",
    "display_title": "acme/widget#42",
    "run_attempt": 1,
    "pull_requests": [{"number": 42}],
    "referenced_workflows": [REUSABLE],
}
ACME_MY_JOBS = [
    rest.job({"id": 1, "name": "dispatch / Route", "status": "completed", "conclusion": "success"}),
    rest.job({"id": 2, "name": "dispatch / Review", "status": "in_progress", "conclusion": None}),
]


def bt(clock: str) -> datetime:
    """An instant on the day of the acme/widget scenarios (2026-09-18)."""
    return t(clock, "2026-09-18")


def me_acme(display_title: str = "acme/widget#42") -> MyRun:
    """Start on the acme/widget MY_RUN (item PR #42)."""
    run = rest.workflow_run({**ACME_MY_RUN_JSON, "display_title": display_title})
    me, _ = my_run_facts(
        run, ACME_MY_JOBS, run_name="acme/widget#42", item_number=42, started_at=None, stage_hints=["review"]
    )
    return me


def acme_run(**fields: Any) -> WorkflowRun:
    """A bug-case candidate: shim path, chain [REUSABLE], attempt 1, completed, unless overridden."""
    base: dict[str, Any] = {
        "path": ACME_SHIM,
        "run_attempt": 1,
        "status": "completed",
        "pull_requests": [],
        "referenced_workflows": [REUSABLE],
    }
    base.update(fields)
    for key in ("actor", "triggering_actor"):
        if isinstance(base.get(key), str):
            base[key] = {"login": base[key]}
    if isinstance(base.get("created_at"), str) and len(base["created_at"]) <= 9:
        base["created_at"] = f"2026-09-18T{base['created_at']}"
    return rest.workflow_run(base)


def comment(
    cid: int, login: str, body: str, created: str, updated: str | None = None, day: str = "2026-09-03"
) -> Comment:
    """A comment from REST JSON with times on the given day (``updated`` omitted = absent)."""
    data: dict[str, Any] = {
        "id": cid,
        "body": body,
        "user": {"login": login, "type": "User"},
        "created_at": f"{day}T{created}Z",
    }
    if updated is not None:
        data["updated_at"] = f"{day}T{updated}Z"
    return rest.comment(data)


# --- a poll, as the watcher loop will run it -----------------------------------------------------


def judge(run: WorkflowRun, run_jobs: Sequence[Job], me: MyRun, judged: AbstractSet[int] = frozenset()) -> Verdict:
    """Phase A, then phase B when phase A passed."""
    verdict = judge_record(run, me, judged)
    if verdict.outcome != "accept":
        return verdict
    return judge_jobs(run, run_jobs, me)
