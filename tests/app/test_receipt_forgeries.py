"""Issue 6 acceptance: the forgery suite through the simulator, and the queued run's request budget.

The same well-formed marker posted by the role App, by a human, by the job-token login but
edited, by the job-token login when role and job logins are equal, inside a review body, and in a
code fence — only the genuine unedited job-token receipt listing my run skips.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.action.skip.facts import PreflightFacts
from fullsend.app.action.skip.preflight import run_preflight
from fullsend.core.model import Repo
from fullsend.core.receipt.marker import receipt_body
from fullsend.simulator.fixtures import JOB_LOGIN, JOB_TOKEN, ROLE_LOGIN, ROLE_TOKEN, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator

QUEUED_RUN = 33740015299
GENUINE = receipt_body([QUEUED_RUN], "aaa111")


def _facts(tmp_path: Path, role_token: str = ROLE_TOKEN) -> PreflightFacts:
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
        yield simulator


def test_the_genuine_receipt_skips_in_two_requests(sim, tmp_path):
    """Issue 18: GraphQL reads the job login and the comments at once; the role login is the
    second request, sent beside it (the order they arrive in is the threads')."""
    sim.add_comment(7, GENUINE, JOB_LOGIN)
    sim.reset_requests()
    skip, _ = _decide(sim, _facts(tmp_path))
    assert skip is not None and skip.rule_id == "receipt-lists-my-run"
    assert sorted((r.method, r.path, r.login) for r in sim.requests) == sorted(
        [("POST", "/graphql", JOB_LOGIN), ("POST", "/graphql", ROLE_LOGIN)]
    )


def test_without_graphql_the_genuine_receipt_skips_in_three_rest_reads(sim, tmp_path):
    sim.add_comment(7, GENUINE, JOB_LOGIN)
    sim.graphql_errors(login=JOB_LOGIN)  # as a GHES without fullDatabaseId answers the receipt view
    sim.reset_requests()
    skip, _ = _decide(sim, _facts(tmp_path))
    assert skip is not None and skip.rule_id == "receipt-lists-my-run"
    assert sim.request_count() == 4 and sim.request_count("GET", r"/issues/7/comments$") == 1


@pytest.mark.parametrize(
    "forge_it",
    [
        pytest.param(lambda s: s.add_comment(7, GENUINE, ROLE_LOGIN), id="posted-by-the-role-app"),
        pytest.param(lambda s: s.add_comment(7, GENUINE, "mallory", user_type="User"), id="posted-by-a-human"),
        pytest.param(
            lambda s: s.add_comment(7, GENUINE, "github-actions", user_type="User"), id="human-named-like-the-bot"
        ),
        pytest.param(
            lambda s: s.add_comment(
                7,
                GENUINE,
                JOB_LOGIN,
                created_at="2026-09-25T10:00:00Z",
                updated_at="2026-09-25T10:05:00Z",
                last_edited_at="2026-09-25T10:05:00Z",
            ),
            id="job-login-but-edited",
        ),
        pytest.param(
            lambda s: s.edit_comment(int(s.add_comment(7, "working on it", JOB_LOGIN)["id"]), GENUINE),
            id="job-login-edited-into-a-receipt",
        ),
        pytest.param(lambda s: s.add_review(7, ROLE_LOGIN, "COMMENTED", body=GENUINE), id="inside-a-review-body"),
        pytest.param(lambda s: s.add_comment(7, "```\n" + GENUINE + "\n```", JOB_LOGIN), id="in-a-code-fence"),
        pytest.param(lambda s: s.add_comment(7, "Looks done:\n" + GENUINE, JOB_LOGIN), id="quoted-in-other-text"),
    ],
)
def test_forged_receipts_never_skip(sim, tmp_path, forge_it):
    forge_it(sim)
    skip, _ = _decide(sim, _facts(tmp_path))
    assert skip is None


def test_equal_job_and_role_identities_never_skip(sim, tmp_path):
    sim.add_token("ghs_same-identity-token-09", JOB_LOGIN, "Bot")
    sim.add_comment(7, GENUINE, JOB_LOGIN)
    skip, lines = _decide(sim, _facts(tmp_path, role_token="ghs_same-identity-token-09"))
    assert skip is None
    assert any(line.startswith("warning:") and "github-actions" in line for line in lines)


def test_an_edited_receipt_does_not_hide_an_unedited_one(sim, tmp_path):
    other = receipt_body([QUEUED_RUN + 1], "aaa111")
    sim.add_comment(7, GENUINE, JOB_LOGIN)
    sim.add_comment(7, other, JOB_LOGIN, created_at="2026-09-25T10:00:00Z", updated_at="2026-09-25T10:01:00Z")
    skip, _ = _decide(sim, _facts(tmp_path))
    assert skip is not None  # the union of unedited receipts (docs/rules.md#receipt-lists-my-run)


def test_a_user_named_like_the_bot_never_passes_for_a_plain_job_token(sim, tmp_path):
    """The job token resolves through /user (403) → /app → GraphQL; the identity is still an App."""
    sim.add_token("v1.job-plain-0001", JOB_LOGIN, "Bot")
    sim.add_comment(7, GENUINE, "github-actions", user_type="User")
    facts = _facts(tmp_path)
    facts = PreflightFacts(**{**facts.__dict__, "job_token": "v1.job-plain-0001"})
    skip, _ = _decide(sim, facts)
    assert skip is None
    sim.add_comment(7, GENUINE, JOB_LOGIN)
    skip, _ = _decide(sim, facts)
    assert skip is not None and skip.rule_id == "receipt-lists-my-run"


def test_a_receipt_whose_updated_at_trails_by_a_second_but_never_edited_skips(sim, tmp_path):
    """Issue 18 (policy-bot, trailer): GitHub bumps updated_at a second past created_at on comments
    nobody edited.  GraphQL's lastEditedAt stays null: the receipt counts (docs/rules.md#receipt-lists-my-run)."""
    sim.add_comment(7, GENUINE, JOB_LOGIN, created_at="2026-09-25T10:00:00Z", updated_at="2026-09-25T10:00:01Z")
    skip, _ = _decide(sim, _facts(tmp_path))
    assert skip is not None and skip.rule_id == "receipt-lists-my-run"


def test_where_graphql_cannot_answer_the_trailing_updated_at_still_fails_open(sim, tmp_path):
    """The REST fallback stays as strict as before: every doubt does the work."""
    sim.add_comment(7, GENUINE, JOB_LOGIN, created_at="2026-09-25T10:00:00Z", updated_at="2026-09-25T10:00:01Z")
    sim.graphql_errors(times=None, login=JOB_LOGIN)
    skip, _ = _decide(sim, _facts(tmp_path))
    assert skip is None


def test_a_graphql_answer_of_the_wrong_shape_falls_back_to_rest(sim, tmp_path):
    sim.add_comment(7, GENUINE, JOB_LOGIN)
    sim.graphql_errors({"data": {"viewer": {"login": "github-actions"}, "repository": "x"}}, login=JOB_LOGIN)
    skip, _ = _decide(sim, _facts(tmp_path))
    assert skip is not None and sim.request_count("GET", r"/issues/7/comments$") == 1
