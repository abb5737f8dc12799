"""The standard scenario ("FIX", docs/architecture.md "The simulator"), built in a ``GitHubSimulator``.

Typical end-to-end use::

    with GitHubSimulator(clock=fix_clock()) as sim:
        fix = standard_pr_scenario(sim)                 # PR #7 at aaa111, my run, its jobs, tokens
        sim.on_request(
            sim.match("GET", rf"/actions/runs/{fix.my_run_id}/jobs$"),
            lambda s: add_comment_follow_up(s, "/fs-review please re-check the migration"),
        )
        ...run the action with GITHUB_API_URL=sim.api_url, INPUT_GITHUB_TOKEN=fix.job_token,
           INPUT_ROLE_TOKEN=fix.role_token, GITHUB_RUN_ID=str(fix.my_run_id) ...

Everything here is data from FIX: repository ``org/repo``, my run ``33740015232`` created
``2026-09-03T10:00:00Z`` from ``.github/workflows/fullsend.yml`` (event ``issue_comment``, actor
``reviewer``, ``display_title`` ``org/repo#7``, ``referenced_workflows`` [REF]), jobs
``dispatch / Route`` (completed/success) and ``dispatch / Review`` (in_progress).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from fullsend.core.receipt.signed import receipt_audience, signed_receipt_body
from fullsend.core.scalars import parse_time
from fullsend.simulator.issuer import JobIdentity
from fullsend.simulator.server import GitHubSimulator

FIX_RUN_ID = 33740015232
FIX_CREATED_AT = "2026-09-03T10:00:00Z"
#: How long before my run's ``created_at`` FIX opens the pull request.
ITEM_OPENED_BEFORE_RUN_S = 3600
FIX_HEAD = "aaa111"
SHIM_PATH = ".github/workflows/fullsend.yml"
REF: dict[str, str] = {
    "path": "fullsend-ai/fullsend/.github/workflows/reusable-dispatch.yml@main",
    "ref": "refs/heads/main",
    "sha": "2a103497ee1e9a1b3c4d5e6f7a8b9c0d1e2f3a4b",
}
#: The ``job_workflow_ref`` of a job of the dispatch in REF (the reusable workflow's file at REF's ref).
DISPATCH_JOB_REF = REF["path"].rpartition("@")[0] + "@" + REF["ref"]
#: The OIDC request token of FIX's run (``ACTIONS_ID_TOKEN_REQUEST_TOKEN``; ``oidc_request_token``).
OIDC_REQUEST_TOKEN = "sim-oidc-request-token-0003"
ROUTE_JOB = "dispatch / Route"
STAGE_JOB = "dispatch / Review"
# Installation-style fake tokens (prefix ghs_) and their logins.
JOB_TOKEN = "ghs_sim-job-token-0001"
ROLE_TOKEN = "ghs_sim-role-token-0002"
JOB_LOGIN = "github-actions[bot]"
ROLE_LOGIN = "fullsend-ai-review[bot]"


@dataclass(frozen=True)
class StandardScenario:
    """What ``standard_pr_scenario`` built: ids, names and credentials a test needs.

    ``run_name`` is the work-item half of the shim's run-name (``org/repo#7``);
    ``shim_file`` the basename the watcher lists runs of; ``*_job_id`` the ids of my two jobs.
    """

    pr: int
    my_run_id: int
    head: str
    run_name: str
    created_at: str
    route_job_id: int
    stage_job_id: int
    shim_file: str = SHIM_PATH.rsplit("/", 1)[-1]
    route_job_name: str = ROUTE_JOB
    stage_job_name: str = STAGE_JOB
    referenced_workflows: tuple[dict[str, str], ...] = field(default_factory=lambda: (dict(REF),))
    job_token: str = JOB_TOKEN
    role_token: str = ROLE_TOKEN
    job_login: str = JOB_LOGIN
    role_login: str = ROLE_LOGIN


def standard_pr_scenario(
    sim: GitHubSimulator,
    *,
    pr: int = 7,
    my_run_id: int = FIX_RUN_ID,
    head: str = FIX_HEAD,
    title: str = "Add the orders migration",
    created_at: str = FIX_CREATED_AT,
    **my_run: Any,
) -> StandardScenario:
    """Build FIX in ``sim``: PR ``pr`` at ``head`` (no labels, opened an hour before my run's
    ``created_at``), my run and its two jobs, and the job/role tokens (``JOB_TOKEN`` →
    ``github-actions[bot]``, ``ROLE_TOKEN`` → ``fullsend-ai-review[bot]``, both Apps).  ``my_run``
    overrides fields of my run (FIX has status ``completed``).  Returns the ids and names as a ``StandardScenario``."""
    sim.add_token(JOB_TOKEN, JOB_LOGIN, "Bot")
    sim.add_token(ROLE_TOKEN, ROLE_LOGIN, "Bot")
    run_name = f"{sim.urls.owner}/{sim.urls.repo}#{pr}"
    sim.add_pull_request(pr, head, title=title, body="Adds the orders table.", user="author")
    opened = parse_time(created_at)
    if opened is not None:  # the pull request exists before the comment that started my run
        opened -= timedelta(seconds=ITEM_OPENED_BEFORE_RUN_S)
        sim.update_issue(pr, created_at=opened, updated_at=opened)
    fields: dict[str, Any] = {
        "id": my_run_id,
        "path": SHIM_PATH,
        "event": "issue_comment",
        "status": "completed",
        "created_at": created_at,
        "display_title": run_name,
        "actor": "reviewer",
        "triggering_actor": "reviewer",
        "run_attempt": 1,
        "pull_requests": [],
        "referenced_workflows": [dict(REF)],
        "name": "fullsend",
        "head_sha": head,
    }
    sim.add_workflow_run(**{**fields, **my_run})
    oidc_request_token(sim, my_run_id, token=OIDC_REQUEST_TOKEN)
    route = sim.add_job(my_run_id, ROUTE_JOB, "completed", "success")
    stage = sim.add_job(my_run_id, STAGE_JOB, "in_progress")
    return StandardScenario(pr, my_run_id, head, run_name, created_at, route["id"], stage["id"])


def shim_workflow_ref(sim: GitHubSimulator, ref: str = "refs/heads/main") -> str:
    """The shim's ``workflow_ref`` (``GITHUB_WORKFLOW_REF``) in ``sim``'s repository at ``ref``."""
    return f"{sim.urls.owner}/{sim.urls.repo}/{SHIM_PATH}@{ref}"


def stage_job_identity(sim: GitHubSimulator, run_id: int, **changes: Any) -> JobIdentity:
    """Who the stage job of run ``run_id`` is to the OIDC issuer: the shim at main calling the
    dispatch of REF; ``changes`` replace fields (another workflow, a branch, another dispatch)."""
    base = JobIdentity(
        repository=f"{sim.urls.owner}/{sim.urls.repo}",
        run_id=run_id,
        workflow_ref=shim_workflow_ref(sim),
        job_workflow_ref=DISPATCH_JOB_REF,
        job_workflow_sha=REF["sha"],
    )
    return replace(base, **changes)


def oidc_request_token(sim: GitHubSimulator, run_id: int, token: str = "", **changes: Any) -> str:
    """Register, and return, the ``ACTIONS_ID_TOKEN_REQUEST_TOKEN`` of run ``run_id``'s stage job
    (``stage_job_identity``; default token ``sim-oidc-request-<run_id>``)."""
    token = token or f"sim-oidc-request-{run_id}"
    sim.issuer.add_request_token(token, stage_job_identity(sim, run_id, **changes))
    return token


def genuine_receipt(
    sim: GitHubSimulator,
    ids: Sequence[int],
    head: str,
    *,
    writer_run_id: int = FIX_RUN_ID,
    item: int = 7,
    identity: dict[str, Any] | None = None,
    issued_at: str | None = None,
    **claims: Any,
) -> str:
    """A signed receipt body as run ``writer_run_id``'s stage job writes it for ``item``: the
    simulator's issuer signs a token for the receipt's audience, issued now or at ``issued_at``
    (RFC 3339; a receipt posted at a scripted time is signed just before it); ``identity`` changes
    the job's ``stage_job_identity``, ``claims`` override claims (a forger's variations).  Post it
    as the job login to make it a receipt."""
    repository = f"{sim.urls.owner}/{sim.urls.repo}"
    audience = receipt_audience(repository, item, writer_run_id, ids, head)
    at = parse_time(issued_at) if issued_at else None
    times = {} if at is None else {"iat": int(at.timestamp()), "nbf": int(at.timestamp()) - 600}
    times.update({"exp": times["iat"] + 300} if times else {})
    token = sim.issuer.issue(stage_job_identity(sim, writer_run_id, **(identity or {})), audience, **times, **claims)
    return signed_receipt_body(ids, head, writer_run_id, token)


def add_follow_up_run(
    sim: GitHubSimulator,
    *,
    comment_id: int | None = None,
    event: str = "issue_comment",
    route: str | None = "success",
    stage_status: str | None = "queued",
    pull_requests: tuple[int, ...] = (),
    title: str | None = None,
    created_at: datetime | str | None = None,
    actor: str = "reviewer",
    pr: int = 7,
    stage_conclusion: str | None = None,
    status: str | None = None,
    run_id: int | None = None,
    **run_fields: Any,
) -> dict[str, Any]:
    """Add a shim run (a follow-up event) and its jobs the way GitHub shows them; returns the run JSON.

    - ``display_title``: ``title`` if given, else ``org/repo#<pr>`` plus `` comment:<comment_id>``
      when ``comment_id`` is given (the WIRE run-name contract,
      docs/architecture.md "Binding").
    - ``route``: conclusion of ``dispatch / Route`` (``success``, ``failure`` … ⇒ completed), or
      ``queued``/``in_progress`` (not concluded), or ``None`` for no Route job.
    - ``stage_status``: status of ``dispatch / Review`` (``queued`` = waiting behind my run, the
      common case), with ``stage_conclusion`` once completed (e.g. ``skipped``); ``None`` ⇒ no job.
    - ``status``: the run's status; default ``completed`` when every job is, else ``in_progress``.
    - ``created_at``: default the simulator's now; ``run_id``: default the next id.
    - Chain ``[REF]``, path ``.github/workflows/fullsend.yml``, ``run_attempt`` 1; ``run_fields``
      override any run field (e.g. ``referenced_workflows=[]``, ``path=...``).
    """
    if title is None:
        title = f"{sim.urls.owner}/{sim.urls.repo}#{pr}" + (f" comment:{comment_id}" if comment_id else "")
    jobs = _shim_jobs(route, stage_status, stage_conclusion)
    if status is None:
        status = "completed" if jobs and all(s == "completed" for _, s, _ in jobs) else "in_progress"
    fields: dict[str, Any] = {
        "path": SHIM_PATH,
        "event": event,
        "status": status,
        "display_title": title,
        "actor": actor,
        "triggering_actor": actor,
        "run_attempt": 1,
        "pull_requests": list(pull_requests),
        "referenced_workflows": [dict(REF)],
        "name": "fullsend",
    }
    if created_at is not None:
        fields["created_at"] = created_at
    if run_id is not None:
        fields["id"] = run_id
    run = sim.add_workflow_run(**{**fields, **run_fields})
    for name, job_status, conclusion in jobs:
        sim.add_job(run["id"], name, job_status, conclusion)
    return run


def _shim_jobs(
    route: str | None, stage_status: str | None, stage_conclusion: str | None
) -> list[tuple[str, str, str | None]]:
    """``(name, status, conclusion)`` of a shim run's Route and stage jobs (``add_follow_up_run``)."""
    jobs: list[tuple[str, str, str | None]] = []
    if route is not None:
        done = route not in ("queued", "in_progress")
        jobs.append((ROUTE_JOB, "completed" if done else route, route if done else None))
    if stage_status is not None:
        jobs.append((STAGE_JOB, stage_status, stage_conclusion if stage_status == "completed" else None))
    return jobs


def add_comment_follow_up(
    sim: GitHubSimulator, body: str, *, login: str = "reviewer", pr: int = 7, **follow_up: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Add a comment by ``login`` on ``pr`` and the shim run it triggers (``display_title``
    ``org/repo#<pr> comment:<id>``, Route success, Review queued unless ``follow_up`` says
    otherwise, actor = ``login``); returns ``(comment, run)``."""
    comment = sim.add_comment(pr, body, login)
    follow_up.setdefault("actor", login)
    run = add_follow_up_run(sim, comment_id=comment["id"], pr=pr, **follow_up)
    return comment, run


def fix_clock(start: str = "2026-09-03T10:01:00Z", *, speed: float = 1.0) -> Callable[[], datetime]:
    """A simulator clock that starts at ``start`` (default one minute after my run's creation)
    and advances ``speed`` times as fast as real time."""
    origin = parse_time(start)
    if origin is None:
        raise ValueError(f"start {start!r} is not RFC 3339")
    t0 = time.monotonic()
    return lambda: origin + timedelta(seconds=(time.monotonic() - t0) * speed)
