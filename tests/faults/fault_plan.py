"""The fault matrix of issue 9: which fault, at which phase, and what must come of it.

Phases (the watcher's reads and the receipt's two halves; docs/architecture.md "Watcher" and
"Receipt"):

=============  ================================================  ========  ===============
phase          requests                                          token     follow-up
=============  ================================================  ========  ===============
start          GET my run, GET my run's jobs                     job       a comment
listing        GET …/workflows/fullsend.yml/runs                 job       a comment
jobs           GET the follow-up's jobs                          job       a comment
item-reads     GET …/issues/7/comments, the delta's first read   role      a comment
compare        GET …/compare/{old}...{new}                       role      a push
receipt-read   the queued run's GET …/issues/7/comments          job       a comment
receipt-post   POST …/issues/7/comments, the receipt             job       a comment
=============  ================================================  ========  ===============

Faults: 500/502/503 and a connection reset, a truncated body and a non-JSON body each fail a
whole retry budget (5 attempts, docs/architecture.md "GitHub access") once; 429 and the secondary 403 carry
``Retry-After``, the primary 403 ``X-RateLimit-Remaining: 0`` and ``X-RateLimit-Reset``, and
fire once (the retry honours the wait: recorded, never slept); a read timeout hangs once past
the client's timeout; a 403 "Resource not accessible by integration" and a 404 fail for good (a
permanent error, never retried); a missing field and a page that shifts between two requests are
phase-specific (see ``_special``).  ``page-shift`` at ``receipt-post`` has no meaning
(a POST has no pages) and is not generated.

``expected_fate(fault, phase)``: ``absorbed`` (acknowledged and in the receipt: the queued run
skips) or ``left`` (in no receipt: the queued run does the work); for ``receipt-read`` it says
whether the queued run skips.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from fullsend.simulator.faults import drop_field, not_json
from fullsend.simulator.fixtures import STAGE_JOB, StandardScenario, add_comment_follow_up, add_follow_up_run
from fullsend.simulator.server import GitHubSimulator

PHASES = ("start", "listing", "jobs", "item-reads", "compare", "receipt-read", "receipt-post")
TRANSIENT = ("http-500", "http-502", "http-503", "reset", "truncated", "non-json")
RATE_LIMITS = ("rate-429", "secondary-403", "primary-403")
PERMANENT = ("forbidden-403", "not-found")
FAULTS = TRANSIENT + RATE_LIMITS + ("timeout", "missing-field", "page-shift") + PERMANENT
VECTORS = {  # cells that are named cases of the watcher or past bugs
    ("forbidden-403", "listing"): "S10-listing-forbidden",
    ("not-found", "listing"): "listing-shim-renamed",
    ("http-502", "listing"): "listing-transient",
    ("http-500", "listing"): "S9",
    ("not-found", "jobs"): "J15",
    ("http-500", "jobs"): "J16",
    ("forbidden-403", "receipt-post"): "receipt-post-forbidden",
}
RETRY_BUDGET = 5  # docs/architecture.md "GitHub access": 5 attempts
SECONDARY_WAIT_S, RATE_429_WAIT_S, PRIMARY_RESET_IN_S = 60, 3, 30
COMMAND = "/fs-review please re-check the migration"
PUSH_HEAD, SECOND_HEAD = "b" * 40, "c" * 40


@dataclass
class Case:
    """One cell of the matrix while it runs: the simulator, FIX, the follow-ups made so far."""

    fault: str
    phase: str
    sim: GitHubSimulator
    fix: StandardScenario
    follow_ups: list[int] = field(default_factory=list)
    graphql: bool = False  # the receipt-read twin: the same fault on GraphQL's receipt view
    after_preflight: bool = False  # a start fault, armed once the pre-flight read this run

    @property
    def login(self) -> str:
        return self.fix.role_login if self.phase in ("item-reads", "compare") else self.fix.job_login

    @property
    def method(self) -> str:
        return "POST" if self.phase == "receipt-post" or self.graphql else "GET"

    def path(self) -> str:
        """The regex of the phase's requests."""
        if self.graphql:
            return r"^/graphql$"
        return {
            "start": rf"/actions/runs/{self.fix.my_run_id}(/jobs)?$",
            "listing": r"/actions/workflows/fullsend\.yml/runs$",
            "jobs": rf"/actions/runs/{self.follow_ups[0] if self.follow_ups else 0}/jobs$",
            "item-reads": r"/issues/7/comments$",
            "compare": r"/compare/",
            "receipt-read": r"/issues/7/comments$",
            "receipt-post": r"/issues/7/comments$",
        }[self.phase]


def cases() -> list[tuple[str, str]]:
    """Every (fault, phase) pair that has a meaning (all but page-shift × receipt-post)."""
    return [(f, p) for f in FAULTS for p in PHASES if not (f == "page-shift" and p == "receipt-post")]


def expected_fate(fault: str, phase: str) -> str:
    """``absorbed`` / ``left`` for the follow-up (``skipped`` / ``works`` for the queued run at receipt-read)."""
    recovers = fault in RATE_LIMITS or fault == "timeout"
    if phase == "receipt-read":
        return "skipped" if recovers else "works"
    if phase == "receipt-post":  # the POST took effect, or a rate limit was waited out (issue 18)
        return "absorbed" if fault in ("truncated", "non-json", "missing-field", *RATE_LIMITS) else "left"
    if phase == "start":
        return "absorbed" if recovers else "left"  # steering disabled for the run
    if phase == "compare":
        return "absorbed"  # an unreadable head move still steers, with its reason
    if fault in PERMANENT:  # a missing field is a malformed read now (issue 18): retried next poll
        return "left"
    return "absorbed"  # a transient failure costs one poll; the next poll steers


def add_follow_up(case: Case) -> None:
    """The phase's follow-up event: an authorized ``/fs-review`` comment present before the run
    starts, or (compare) a push that lands right after Start read the item's baseline head.
    (page-shift × listing makes its own, between two page reads.)"""
    if (case.fault, case.phase) == ("page-shift", "listing"):
        return
    if case.phase != "compare":
        case.follow_ups.append(int(add_comment_follow_up(case.sim, COMMAND)[1]["id"]))
        return

    def push(sim: GitHubSimulator) -> None:
        sim.move_head(
            7,
            PUSH_HEAD,
            files=[
                {
                    "filename": "db/migrate.sql",
                    "additions": 2,
                    "deletions": 0,
                    "patch": "@@ -0,0 +1,2 @@\n+ALTER TABLE orders;\n+-- done",
                }
            ],
        )
        run = add_follow_up_run(sim, event="pull_request_target", pull_requests=(7,), actor="author")
        case.follow_ups.append(int(run["id"]))

    role = case.fix.role_login
    case.sim.on_request(lambda r: r.method == "GET" and r.path.endswith("/issues/7") and r.login == role, push)


def arm(case: Case) -> None:
    """Inject the case's fault (before the run; the receipt-read fault before the queued run).

    The receipt check reads GraphQL's receipt view first and REST where GraphQL cannot answer
    (issue 18), so a receipt-read fault is armed on both; page-shift there keeps GraphQL out, so
    the REST pages shift as before.  The pre-flight reads this run's record beside the receipt
    query (a signed receipt's proof, issue 45): a start fault is armed once that read was
    answered, so it meets the watcher's start."""
    if case.phase == "start" and not case.after_preflight:
        later = replace(case, after_preflight=True)
        case.sim.on_request(case.sim.match("GET", rf"/actions/runs/{case.fix.my_run_id}$"), lambda _s: arm(later))
        return
    if case.phase == "receipt-read" and not case.graphql:
        arm(replace(case, graphql=True))
    sim, method, path, login = case.sim, case.method, case.path(), case.login
    if case.fault in TRANSIENT:
        if case.fault == "reset":
            sim.fail_connection(method, path, "reset", times=RETRY_BUDGET, login=login)
        elif case.fault == "truncated":
            sim.fail_connection(method, path, "truncate", times=RETRY_BUDGET, login=login)
        elif case.fault == "non-json":
            sim.mutate(method, path, not_json(), times=RETRY_BUDGET, login=login)
        else:
            sim.fail(method, path, int(case.fault.split("-")[1]), times=RETRY_BUDGET, login=login)
    elif case.fault == "rate-429":
        sim.fail(method, path, 429, headers={"Retry-After": str(RATE_429_WAIT_S)}, login=login)
    elif case.fault == "secondary-403":
        sim.fail(
            method,
            path,
            403,
            headers={"Retry-After": str(SECONDARY_WAIT_S)},
            login=login,
            body={
                "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
            },
        )
    elif case.fault == "primary-403":
        reset = int(datetime.now(UTC).timestamp()) + PRIMARY_RESET_IN_S
        sim.fail(
            method,
            path,
            403,
            headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)},
            body={"message": "API rate limit exceeded for installation ID 1."},
            login=login,
        )
    elif case.fault == "timeout":
        from tests.support.fault_harness import HANG_S

        sim.fail_connection(method, path, "hang", times=1, hang_s=HANG_S, login=login)
    elif case.fault == "not-found":
        sim.fail(method, path, 404, times=None, login=login)
    elif case.fault == "forbidden-403":
        sim.fail(method, path, 403, times=None, login=login, body={"message": "Resource not accessible by integration"})
    elif case.graphql:
        _graphql_special(case)
    else:
        _special[(case.fault, case.phase)](case)


def _graphql_special(case: Case) -> None:
    """The receipt view's missing field (``updatedAt`` of every comment), or GraphQL unavailable."""
    if case.fault == "page-shift":
        case.sim.graphql_errors(times=None, login=case.login)
        return

    def drop_updated_at(body: Any) -> Any:
        item = ((body.get("data") or {}).get("repository") or {}).get("issueOrPullRequest") or {}
        for node in (item.get("comments") or {}).get("nodes") or []:
            node.pop("updatedAt", None)
        return body

    case.sim.mutate("POST", r"^/graphql$", drop_updated_at, times=1, login=case.login)


# ---- missing fields: one per phase, each a field the phase's decision reads -------------------
def _drop(key: str) -> Callable[[Case], None]:
    return lambda case: case.sim.mutate(case.method, case.path(), drop_field(key), times=1, login=case.login)


def _drop_from_my_run(case: Case) -> None:
    case.sim.mutate("GET", rf"/actions/runs/{case.fix.my_run_id}$", drop_field("referenced_workflows"), times=1)


# ---- pages that shift between two requests ---------------------------------------------------
def _filler_jobs(sim: GitHubSimulator, run_id: int, count: int) -> list[int]:
    """``count`` finished decoy jobs, so the run's job listing spans two pages."""
    return [int(sim.add_job(run_id, f"dispatch / Lint {i}", "completed", "success")["id"]) for i in range(count)]


def _shift_my_jobs(case: Case) -> None:
    """My run: Route, 99 decoys, then my stage job first on page 2; a decoy is deleted once page 1
    is read, so page 2 comes back empty and Start finds no stage job (steering disabled)."""
    sim, my = case.sim, case.fix.my_run_id
    sim.delete_job(case.fix.stage_job_id)
    fillers = _filler_jobs(sim, my, 99)
    sim.add_job(my, STAGE_JOB, "in_progress")
    sim.on_request(sim.match("GET", rf"/actions/runs/{my}/jobs$", page=1), lambda s: s.delete_job(fillers[0]))


def _shift_listing(case: Case) -> None:
    """100 runs of another PR make the listing two pages; the follow-up is created between the
    first poll's two page reads, so that poll sees a duplicate and misses it (the next sees it)."""
    sim = case.sim
    sim.add_pull_request(8, "d" * 40, title="Another PR")
    for _ in range(100):
        add_follow_up_run(sim, event="pull_request_target", pull_requests=(8,), actor="author")

    def land(s: GitHubSimulator) -> None:
        case.follow_ups.append(int(add_comment_follow_up(s, COMMAND)[1]["id"]))

    sim.on_request(sim.match("GET", r"/actions/workflows/fullsend\.yml/runs$", page=1), land)


def _shift_candidate_jobs(case: Case) -> None:
    """The follow-up's stage job sits first on page 2 behind 99 decoys; a decoy is deleted after
    page 1, so the first read misses it (stage pending: the run is not complete) and the next finds it."""
    sim, run_id = case.sim, case.follow_ups[0]
    stage = next(j["id"] for j in sim.jobs_of(run_id) if j["name"] == STAGE_JOB)
    sim.delete_job(stage)
    fillers = _filler_jobs(sim, run_id, 99)
    sim.add_job(run_id, STAGE_JOB, "queued")
    sim.on_request(sim.match("GET", rf"/actions/runs/{run_id}/jobs$", page=1), lambda s: s.delete_job(fillers[0]))


def _shift_item(case: Case) -> None:
    """A second authorized comment (and its run) lands right after the delta's comment read."""

    def land(s: GitHubSimulator) -> None:
        case.follow_ups.append(int(add_comment_follow_up(s, "/fs-review and the rollback too")[1]["id"]))

    case.sim.on_request(_by(case.fix.role_login), land)


def _shift_head(case: Case) -> None:
    """The head moves again right after the watcher read it for the delta (once it has read the
    follow-up's jobs: the listing gate's item reads come earlier), before the compare."""

    def judged(case: Case) -> bool:
        jobs = f"/actions/runs/{case.follow_ups[0]}/jobs"
        return any(r.path.endswith(jobs) for r in case.sim.requests)

    def land(s: GitHubSimulator) -> None:
        s.move_head(7, SECOND_HEAD, files=[{"filename": "db/rollback.sql", "additions": 1, "deletions": 0}])
        case.follow_ups.append(
            int(add_follow_up_run(s, event="pull_request_target", pull_requests=(7,), actor="author")["id"])
        )

    case.sim.on_request(
        lambda r: (
            r.method == "GET"
            and r.path.endswith("/pulls/7")
            and r.login == case.fix.role_login
            and bool(case.follow_ups)
            and judged(case)
        ),
        land,
    )


def _shift_receipt_page(case: Case) -> None:
    """The queued run's timeline read spans two pages with the receipt first on page 2 (older
    comments are slotted in before it); a comment of page 1 is deleted between the two reads, so
    the receipt slides onto page 1 and is missed: the check fails open."""
    sim = case.sim
    before = sim.comments(7)
    for i in range(101 - len(before)):
        sim.add_comment(7, f"an older remark {i}", "someone", created_at="2026-01-01T00:00:00Z", id=1000 + i)
    comments = sim.comments(7)
    assert len(comments) == 101 and comments[100]["id"] == before[-1]["id"], "the receipt must be first on page 2"
    sim.on_request(sim.match("GET", r"/issues/7/comments$", page=1), lambda s: s.delete_comment(comments[0]["id"]))


def _by(login: str) -> Callable[[Any], bool]:
    return lambda r: r.method == "GET" and r.path.endswith("/issues/7/comments") and r.login == login


_special: dict[tuple[str, str], Callable[[Case], None]] = {
    ("missing-field", "start"): _drop_from_my_run,
    ("missing-field", "listing"): _drop("created_at"),
    ("missing-field", "jobs"): _drop("conclusion"),
    ("missing-field", "item-reads"): _drop("user"),
    ("missing-field", "compare"): _drop("files"),
    ("missing-field", "receipt-read"): _drop("updated_at"),
    ("missing-field", "receipt-post"): _drop("html_url"),
    ("page-shift", "start"): _shift_my_jobs,
    ("page-shift", "listing"): _shift_listing,
    ("page-shift", "jobs"): _shift_candidate_jobs,
    ("page-shift", "item-reads"): _shift_item,
    ("page-shift", "compare"): _shift_head,
    ("page-shift", "receipt-read"): _shift_receipt_page,
}
