"""What the queued run's skip decision costs in GitHub requests (issue 18).

    python bench/skip_requests.py [--quick]

``--quick`` (``run_all.py``'s CI mode) changes nothing: the eight decisions take a few seconds.
Prints one table and exits 0 (1 when a decision came out wrong).  The real receipt check
(``fullsend.app.action.skip.receipt.check_receipt`` through ``GitHubForge`` over HTTP) decides
against the simulator, with installation tokens for both credentials as GitHub Actions hands
them out, in four situations: a receipt lists the run or not, on an item with a few comments or
with 250 (three pages), each over GraphQL's receipt view (the job token's login and the comments
with ``lastEditedAt`` in one request per 100 comments, then the role login) and where GraphQL
cannot answer (REST: both logins, then the comments, one request per 100).  Beside them, from
the start, go the signed receipt's proof reads (the issuer's keys, no credential, and this run's
record: docs/rules.md "Receipt proof"); the receipt that lists the run is the writer's signed one.
Every request is counted by the simulator; the last column names them in order of arrival
(docs/rules.md#receipt-lists-my-run).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.action.skip.facts import PreflightFacts
from fullsend.app.action.skip.receipt import check_receipt
from fullsend.core.model import Repo
from fullsend.simulator.fixtures import (
    JOB_LOGIN,
    JOB_TOKEN,
    ROLE_TOKEN,
    add_follow_up_run,
    genuine_receipt,
    shim_workflow_ref,
    standard_pr_scenario,
)
from fullsend.simulator.server import GitHubSimulator

QUEUED_RUN = 33740015300


def decide(listed: bool, comments: int, graphql: bool) -> tuple[bool, list[str]]:
    """(skipped, the requests made) for one situation, on a fresh simulator."""
    with GitHubSimulator() as sim, tempfile.TemporaryDirectory() as tmp:
        standard_pr_scenario(sim)
        add_follow_up_run(sim, run_id=QUEUED_RUN)  # its record: the shim and dispatch a proof must name
        for i in range(comments):
            sim.add_comment(7, f"remark {i}", "reviewer")
        if listed:
            sim.add_comment(7, genuine_receipt(sim, [QUEUED_RUN], "aaa111"), JOB_LOGIN)
        if not graphql:
            sim.graphql_errors(times=1, login=JOB_LOGIN)  # as a GHES without the receipt view's fields answers
        sim.reset_requests()
        forge = GitHubForge(Repo("org", "repo"), sim.api_url, sim.graphql_url, JOB_TOKEN, ROLE_TOKEN, SystemClock())
        facts = PreflightFacts(
            stage="review",
            run_id_raw=str(QUEUED_RUN),
            run_attempt="1",
            repository="org/repo",
            item_number=7,
            job_token=JOB_TOKEN,
            role_token=ROLE_TOKEN,
            minted=True,
            fullsend_dir=str(Path(tmp) / ".fullsend"),
            event_name="issue_comment",
            receipt_issuer=sim.issuer.url,
            workflow_ref=shim_workflow_ref(sim),
            default_branch="main",
        )
        skipped = check_receipt(forge, facts, lambda level, message: None) is not None
        made = [f"{r.method} {_short(r.path)} ({_credential(r.login)})" for r in sim.requests]
        return skipped, made


def _credential(login: str) -> str:
    """Which token a request carried: the job's, the role's, or none (the issuer's keys)."""
    return "job" if login == JOB_LOGIN else "role" if login else "no credential"


def _short(path: str) -> str:
    return path.replace("/repos/org/repo", "")


def main() -> int:
    head = f"{'situation':<44}  {'skips':>5}  {'requests':>8}  made"
    print(head)
    print("-" * len(head))
    wrong = 0
    for graphql in (True, False):
        for comments in (3, 250):
            for listed in (True, False):
                skipped, made = decide(listed, comments, graphql)
                wrong += skipped != listed
                what = (
                    f"{'GraphQL' if graphql else 'REST fallback'}, {comments} comments, "
                    f"{'listed' if listed else 'not listed'}"
                )
                print(f"{what:<44}  {'yes' if skipped else 'no':>5}  {len(made):>8}  {', '.join(made)}")
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
