"""Issue 6 acceptance: the forgery suite through the simulator, and the queued run's request budget.

The same well-formed signed receipt posted by the role App, by a human, by the job-token login but
edited, by the job-token login when role and job logins are equal, inside a review body, and in a
code fence — only the genuine unedited job-token receipt listing my run skips (issue 45: signed,
its proof checked against the simulator's issuer).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.action.skip.facts import PreflightFacts
from fullsend.app.action.skip.preflight import run_preflight
from fullsend.core.model import Repo
from fullsend.simulator.fixtures import (
    JOB_LOGIN,
    JOB_TOKEN,
    ROLE_LOGIN,
    ROLE_TOKEN,
    add_follow_up_run,
    genuine_receipt,
    shim_workflow_ref,
    standard_pr_scenario,
)
from fullsend.simulator.server import GitHubSimulator

QUEUED_RUN = 33740015299
SCRIPTED = "2026-09-25T10:00:00Z"  # a receipt posted at a scripted time is signed just before it


def _facts(sim: GitHubSimulator, tmp_path: Path, role_token: str = ROLE_TOKEN) -> PreflightFacts:
    return PreflightFacts(
        stage="review",
        run_id_raw=str(QUEUED_RUN),
        run_attempt="1",
        repository="org/repo",
        item_number=7,
        job_token=JOB_TOKEN,
        role_token=role_token,
        minted=True,
        fullsend_dir=str(tmp_path / ".fullsend"),
        event_name="issue_comment",
        event_payload={"issue": {"number": 7}},
        in_actions=True,
        receipt_issuer=sim.issuer.url,
        workflow_ref=shim_workflow_ref(sim),
    )


def _decide(sim: GitHubSimulator, facts: PreflightFacts) -> tuple[object, list[str]]:
    lines: list[str] = []
    forge = GitHubForge(
        Repo("org", "repo"), sim.api_url, sim.graphql_url, facts.job_token, facts.role_token, SystemClock()
    )
    skip = run_preflight(forge, facts, lambda level, msg: lines.append(f"{level}: {msg}"))
    return skip, lines


@pytest.fixture
def sim():
    with GitHubSimulator() as simulator:
        standard_pr_scenario(simulator)
        add_follow_up_run(simulator, run_id=QUEUED_RUN)  # the queued run: its record names its shim and chain
        yield simulator


@pytest.fixture
def genuine(sim):
    """The signed receipt the run in flight wrote, listing the queued run (signed before SCRIPTED)."""
    return genuine_receipt(sim, [QUEUED_RUN], "aaa111", issued_at="2026-09-25T09:59:58Z")


def test_the_genuine_receipt_skips_in_one_round_trip_of_the_receipt_query_and_its_proof(sim, tmp_path, genuine):
    """Issue 18: GraphQL reads the job login and the comments at once; the role login is the
    second request, sent beside it.  Issue 45: the issuer's keys (no credential) and this run's
    record (job token) are read beside the receipt query too: the first GraphQL answer is held
    until both have arrived."""
    sim.add_comment(7, genuine, JOB_LOGIN, created_at=SCRIPTED)
    proof_reads = threading.Event()
    seen: set[str] = set()

    def proof_read(name):
        def hook(_sim):
            seen.add(name)
            if seen == {"keys", "run"}:
                proof_reads.set()

        return hook

    sim.on_request(sim.match("GET", r"/_services/token/\.well-known/jwks$"), proof_read("keys"))
    sim.on_request(sim.match("GET", rf"/actions/runs/{QUEUED_RUN}$"), proof_read("run"))
    waited: list[bool] = []
    sim.on_request(sim.match("POST", "/graphql"), lambda _s: waited.append(proof_reads.wait(30)))
    sim.reset_requests()
    skip, _ = _decide(sim, _facts(sim, tmp_path))
    assert skip is not None and skip.rule_id == "receipt-lists-my-run"
    assert waited == [True]  # both proof reads arrived while the receipt view was held
    assert sorted((r.method, r.path, r.login) for r in sim.requests) == [
        ("GET", "/_services/token/.well-known/jwks", ""),
        ("GET", f"/repos/org/repo/actions/runs/{QUEUED_RUN}", JOB_LOGIN),
        ("POST", "/graphql", ROLE_LOGIN),
        ("POST", "/graphql", JOB_LOGIN),
    ]
    keys = next(r for r in sim.requests if r.path.endswith("/jwks"))
    assert "authorization" not in keys.headers  # the key host never sees a token


def test_without_graphql_the_genuine_receipt_skips_in_three_rest_reads(sim, tmp_path, genuine):
    sim.add_comment(7, genuine, JOB_LOGIN, created_at=SCRIPTED)
    sim.graphql_errors(login=JOB_LOGIN)  # as a GHES without fullDatabaseId answers the receipt view
    sim.reset_requests()
    skip, _ = _decide(sim, _facts(sim, tmp_path))
    assert skip is not None and skip.rule_id == "receipt-lists-my-run"
    assert sim.request_count() == 6 and sim.request_count("GET", r"/issues/7/comments$") == 1


@pytest.mark.parametrize(
    "forge_it",
    [
        pytest.param(lambda s, g: s.add_comment(7, g, ROLE_LOGIN), id="posted-by-the-role-app"),
        pytest.param(lambda s, g: s.add_comment(7, g, "mallory", user_type="User"), id="posted-by-a-human"),
        pytest.param(
            lambda s, g: s.add_comment(7, g, "github-actions", user_type="User"), id="human-named-like-the-bot"
        ),
        pytest.param(
            lambda s, g: s.add_comment(
                7,
                g,
                JOB_LOGIN,
                created_at="2026-09-25T10:00:00Z",
                updated_at="2026-09-25T10:05:00Z",
                last_edited_at="2026-09-25T10:05:00Z",
            ),
            id="job-login-but-edited",
        ),
        pytest.param(
            lambda s, g: s.edit_comment(int(s.add_comment(7, "working on it", JOB_LOGIN)["id"]), g),
            id="job-login-edited-into-a-receipt",
        ),
        pytest.param(lambda s, g: s.add_review(7, ROLE_LOGIN, "COMMENTED", body=g), id="inside-a-review-body"),
        pytest.param(lambda s, g: s.add_comment(7, "```\n" + g + "\n```", JOB_LOGIN), id="in-a-code-fence"),
        pytest.param(lambda s, g: s.add_comment(7, "Looks done:\n" + g, JOB_LOGIN), id="quoted-in-other-text"),
    ],
)
def test_forged_receipts_never_skip(sim, tmp_path, forge_it, genuine):
    forge_it(sim, genuine)
    skip, _ = _decide(sim, _facts(sim, tmp_path))
    assert skip is None


def test_equal_job_and_role_identities_never_skip(sim, tmp_path, genuine):
    sim.add_token("ghs_same-identity-token-09", JOB_LOGIN, "Bot")
    sim.add_comment(7, genuine, JOB_LOGIN, created_at=SCRIPTED)
    skip, lines = _decide(sim, _facts(sim, tmp_path, role_token="ghs_same-identity-token-09"))
    assert skip is None
    assert any(line.startswith("warning:") and "github-actions" in line for line in lines)


def test_an_edited_receipt_does_not_hide_an_unedited_one(sim, tmp_path, genuine):
    other = genuine_receipt(sim, [QUEUED_RUN + 1], "aaa111", issued_at="2026-09-25T09:59:58Z")
    sim.add_comment(7, genuine, JOB_LOGIN, created_at=SCRIPTED)
    sim.add_comment(7, other, JOB_LOGIN, created_at=SCRIPTED, updated_at="2026-09-25T10:01:00Z")
    skip, _ = _decide(sim, _facts(sim, tmp_path))
    assert skip is not None  # the union of unedited receipts (docs/rules.md#receipt-lists-my-run)


def test_a_user_named_like_the_bot_never_passes_for_a_plain_job_token(sim, tmp_path, genuine):
    """The job token resolves through /user (403) → /app → GraphQL; the identity is still an App."""
    sim.add_token("v1.job-plain-0001", JOB_LOGIN, "Bot")
    sim.add_comment(7, genuine, "github-actions", user_type="User", created_at=SCRIPTED)
    facts = _facts(sim, tmp_path)
    facts = PreflightFacts(**{**facts.__dict__, "job_token": "v1.job-plain-0001"})
    skip, _ = _decide(sim, facts)
    assert skip is None
    sim.add_comment(7, genuine, JOB_LOGIN, created_at=SCRIPTED)
    skip, _ = _decide(sim, facts)
    assert skip is not None and skip.rule_id == "receipt-lists-my-run"


def test_a_receipt_whose_updated_at_trails_by_a_second_but_never_edited_skips(sim, tmp_path, genuine):
    """Issue 18 (policy-bot, trailer): GitHub bumps updated_at a second past created_at on comments
    nobody edited.  GraphQL's lastEditedAt stays null: the receipt counts (docs/rules.md#receipt-lists-my-run)."""
    sim.add_comment(7, genuine, JOB_LOGIN, created_at=SCRIPTED, updated_at="2026-09-25T10:00:01Z")
    skip, _ = _decide(sim, _facts(sim, tmp_path))
    assert skip is not None and skip.rule_id == "receipt-lists-my-run"


def test_where_graphql_cannot_answer_the_trailing_updated_at_still_fails_open(sim, tmp_path, genuine):
    """The REST fallback stays as strict as before: every doubt does the work."""
    sim.add_comment(7, genuine, JOB_LOGIN, created_at=SCRIPTED, updated_at="2026-09-25T10:00:01Z")
    sim.graphql_errors(times=None, login=JOB_LOGIN)
    skip, _ = _decide(sim, _facts(sim, tmp_path))
    assert skip is None


def test_a_graphql_answer_of_the_wrong_shape_falls_back_to_rest(sim, tmp_path, genuine):
    sim.add_comment(7, genuine, JOB_LOGIN, created_at=SCRIPTED)
    sim.graphql_errors({"data": {"viewer": {"login": "github-actions"}, "repository": "x"}}, login=JOB_LOGIN)
    skip, _ = _decide(sim, _facts(sim, tmp_path))
    assert skip is not None and sim.request_count("GET", r"/issues/7/comments$") == 1
