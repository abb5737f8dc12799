"""Issue 45 acceptance: a receipt only its own workflow could have written, through the whole action.

Each case runs the queued run as a runner starts the container action (``entrypoint.py`` in a
subprocess, the runner's environment) against the simulator, which plays GitHub and its OIDC
issuer (``fullsend.simulator.issuer``: published keys, tokens signed with them).  A comment the
reader must not honour makes the queued run do the work, with the rule id of why in its log
(docs/rules.md "Receipt proof"); the genuine signed receipt makes it skip, also long after its
token expired; and the writer sends the receipt's token nowhere but in the comment.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fullsend.core.receipt.marker import receipt_body
from fullsend.core.receipt.signed import receipt_audience, signed_receipt_body, whole_body_signed_receipt
from fullsend.core.scalars import format_time
from fullsend.simulator.fixtures import (
    DISPATCH_JOB_REF,
    JOB_LOGIN,
    add_comment_follow_up,
    add_follow_up_run,
    genuine_receipt,
    shim_workflow_ref,
    stage_job_identity,
    standard_pr_scenario,
)
from fullsend.simulator.issuer import PREVIOUS_KEY, STRANGER_KEY, claims_for, sign_jwt
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import ActionRun, run_entrypoint, runner_env

pytestmark = pytest.mark.timeout(180)
QUEUED = 33740015299
OTHER_WORKFLOW_RUN = 33740015111
#: The queued run's agent, when it works, ends at once.
FAST_AGENT = {"SCRIPTED_AGENT_TURN_S": "0.2"}


@pytest.fixture
def sim():
    with GitHubSimulator() as simulator:
        yield simulator


def _world(sim: GitHubSimulator):
    fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
    add_follow_up_run(sim, run_id=QUEUED)
    return fix


def _queued(tmp_path: Path, sim: GitHubSimulator, fix, **inputs: str) -> ActionRun:
    tmp_path.mkdir(parents=True, exist_ok=True)
    env = runner_env(tmp_path, sim, fix, run_id=QUEUED, inputs=inputs or None)
    env.update(FAST_AGENT)
    return run_entrypoint(env, tmp_path)


def _not_honoured(run: ActionRun, rule_id: str) -> None:
    assert run.exit_code == 0, run.stdout + run.stderr
    assert run.outputs["outcome"] == "succeeded" and run.outputs["skip_reason"] == "", run.stdout
    assert f"[{rule_id}]" in run.stdout, run.stdout


def _token_for(sim: GitHubSimulator, run_id: int, audience: str, **identity: str) -> str:
    return sim.issuer.issue(stage_job_identity(sim, run_id, **identity), audience)


def test_the_genuine_signed_receipt_is_honoured_also_after_its_token_expired(sim, tmp_path):
    fix = _world(sim)
    hour_ago = datetime.now(UTC) - timedelta(hours=1)
    body = genuine_receipt(sim, [QUEUED], fix.head, issued_at=format_time(hour_ago))
    sim.add_comment(fix.pr, body, JOB_LOGIN, created_at=hour_ago + timedelta(seconds=2))
    run = _queued(tmp_path, sim, fix)
    assert run.exit_code == 0, run.stdout + run.stderr
    assert (run.outputs["outcome"], run.outputs["skip_reason"]) == ("skipped", "receipt")
    assert f"lists run {QUEUED}; signed by run {fix.my_run_id}, its proof holds" in run.stdout, run.stdout
    assert run.agent_messages == []


def test_another_workflow_posting_as_the_job_tokens_login_is_not_honoured_unsigned_or_signed(sim, tmp_path):
    """Any workflow's GITHUB_TOKEN posts as github-actions[bot]: an unsigned receipt proves no
    writer; one signed with that workflow's own token names that workflow, not the dispatch."""
    fix = _world(sim)
    sim.add_comment(fix.pr, receipt_body([QUEUED], fix.head), JOB_LOGIN)
    _not_honoured(_queued(tmp_path / "unsigned", sim, fix), "receipt-unsigned")
    other = "org/repo/.github/workflows/triage-bot.yml@refs/heads/main"
    token = _token_for(
        sim,
        OTHER_WORKFLOW_RUN,
        receipt_audience("org/repo", fix.pr, OTHER_WORKFLOW_RUN, [QUEUED], fix.head),
        workflow_ref=other,
        job_workflow_ref=other,
    )
    sim.add_comment(fix.pr, signed_receipt_body([QUEUED], fix.head, OTHER_WORKFLOW_RUN, token), JOB_LOGIN)
    _not_honoured(_queued(tmp_path / "signed", sim, fix), "receipt-proof-workflow")


def test_a_genuine_proof_pasted_into_a_comment_listing_other_runs_is_not_honoured(sim, tmp_path):
    fix = _world(sim)
    genuine = whole_body_signed_receipt(genuine_receipt(sim, [QUEUED + 1], fix.head))
    assert genuine is not None
    forged = signed_receipt_body([QUEUED, QUEUED + 1], fix.head, fix.my_run_id, genuine.proof)
    sim.add_comment(fix.pr, forged, JOB_LOGIN)
    _not_honoured(_queued(tmp_path, sim, fix), "receipt-proof-audience")


def test_a_genuine_proof_from_another_item_is_not_honoured(sim, tmp_path):
    fix = _world(sim)
    sim.add_comment(fix.pr, genuine_receipt(sim, [QUEUED], fix.head, item=fix.pr + 1), JOB_LOGIN)
    _not_honoured(_queued(tmp_path, sim, fix), "receipt-proof-audience")


@pytest.mark.parametrize(
    ("identity", "rule_id"),
    [
        ({"workflow_ref": "org/repo/.github/workflows/nightly.yml@refs/heads/main"}, "receipt-proof-workflow"),
        ({"workflow_ref": "org/repo/.github/workflows/fullsend.yml@refs/heads/evil"}, "receipt-proof-workflow"),
        ({"job_workflow_ref": "org/repo/.github/workflows/fullsend.yml@refs/heads/main"}, "receipt-proof-dispatch"),
    ],
    ids=["dispatch-called-by-another-workflow", "branch-run-of-the-shim", "a-job-of-the-shim-itself"],
)
def test_a_proof_from_another_caller_a_branch_run_or_another_job_is_not_honoured(sim, tmp_path, identity, rule_id):
    fix = _world(sim)
    sim.add_comment(fix.pr, genuine_receipt(sim, [QUEUED], fix.head, identity=identity), JOB_LOGIN)
    _not_honoured(_queued(tmp_path, sim, fix), rule_id)


def test_a_proof_signed_by_an_unknown_key_or_another_issuer_is_not_honoured(sim, tmp_path):
    fix = _world(sim)
    audience = receipt_audience("org/repo", fix.pr, fix.my_run_id, [QUEUED], fix.head)
    claims = claims_for(stage_job_identity(sim, fix.my_run_id), audience, sim.issuer.url, datetime.now(UTC))
    for key, kid in ((STRANGER_KEY, None), (STRANGER_KEY, sim.issuer.signing.kid)):
        body = signed_receipt_body([QUEUED], fix.head, fix.my_run_id, sign_jwt(claims, key, kid=kid))
        sim.add_comment(fix.pr, body, JOB_LOGIN)
    run = _queued(tmp_path / "key", sim, fix)
    _not_honoured(run, "receipt-proof-key-unknown")
    assert "[receipt-proof-signature]" in run.stdout
    other_issuer = {**claims, "iss": "https://token.actions.example.com"}
    sim.add_comment(
        fix.pr,
        signed_receipt_body([QUEUED], fix.head, fix.my_run_id, sign_jwt(other_issuer, sim.issuer.signing)),
        JOB_LOGIN,
    )
    _not_honoured(_queued(tmp_path / "issuer", sim, fix), "receipt-proof-issuer")


def test_a_receipt_whose_key_rotated_away_says_so_and_the_run_works(sim, tmp_path):
    fix = _world(sim)
    sim.add_comment(fix.pr, genuine_receipt(sim, [QUEUED], fix.head), JOB_LOGIN)
    sim.issuer.rotate(PREVIOUS_KEY)  # GitHub no longer publishes the key the receipt was signed with
    sim.reset_requests()
    run = _queued(tmp_path, sim, fix)
    _not_honoured(run, "receipt-proof-key-unknown")
    assert "rotated away" in run.stdout
    assert sim.request_count("GET", r"/\.well-known/jwks$") == 2  # read, and read once more for the unknown key


def test_a_key_host_that_cannot_be_reached_is_warned_once_and_the_run_works(sim, tmp_path):
    fix = _world(sim)
    for writer in (fix.my_run_id, fix.my_run_id + 1):
        sim.add_comment(fix.pr, genuine_receipt(sim, [QUEUED], fix.head, writer_run_id=writer), JOB_LOGIN)
    sim.fail("GET", r"/\.well-known/jwks$", 503, times=None)
    run = _queued(tmp_path, sim, fix)
    _not_honoured(run, "receipt-keys-unreachable")
    warned = [line for line in run.stdout.splitlines() if line.startswith("::warning") and "issuer's keys" in line]
    assert len(warned) == 1, run.stdout


def test_the_writer_sends_the_receipts_token_nowhere_but_the_comment(sim, tmp_path):
    """Run A absorbs a follow-up and signs its receipt; the token it requested for the receipt's
    audience is in the body of the receipt's POST and in no other request, log line, output or
    summary; the queued run that skips on it sends it nowhere either."""
    fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
    added = {}

    def follow_up(s):
        added["run"] = add_comment_follow_up(s, "/fs-review please re-check the migration")[1]

    sim.on_request(sim.match("GET", r"/actions/workflows/fullsend\.yml/runs"), follow_up)
    first = tmp_path / "first"
    first.mkdir()
    run = run_entrypoint(runner_env(first, sim, fix), first)
    assert run.exit_code == 0 and run.outputs["consumed_run_ids"] == str(added["run"]["id"]), run.stdout
    receipt_tokens = [token for audience, token in sim.issuer.issued if audience.startswith("fullsend-receipt:")]
    assert len(receipt_tokens) == 1
    (token,) = receipt_tokens
    carrying = [r for r in sim.requests if token in (r.raw_path + str(r.query) + str(r.headers) + r.body.decode())]
    assert [(r.method, r.path) for r in carrying] == [("POST", f"/repos/org/repo/issues/{fix.pr}/comments")]
    written = run.stdout + run.stderr + run.summary + "".join(run.outputs.values())
    assert token not in written and token.split(".")[2] not in written
    sim.reset_requests()
    queued = tmp_path / "queued"
    queued.mkdir()
    skip = run_entrypoint(runner_env(queued, sim, fix, run_id=int(added["run"]["id"])), queued)
    assert skip.outputs["outcome"] == "skipped", skip.stdout
    assert not [r for r in sim.requests if token in (r.raw_path + str(r.headers) + r.body.decode())]
    assert token not in skip.stdout + skip.stderr + skip.summary


def test_the_receipts_token_is_refused_by_a_relying_party_of_another_audience(sim):
    """A live token in a public comment: the simulator's mint, a relying party for fullsend-mint,
    refuses it (SECURITY.md "What a receipt proves")."""
    from fullsend.core.receipt.proof.rs256 import parse_jwks
    from fullsend.simulator.issuer import relying_party_claims

    fix = _world(sim)
    receipt = whole_body_signed_receipt(genuine_receipt(sim, [QUEUED], fix.head))
    assert receipt is not None
    keys = parse_jwks(sim.issuer.jwks())
    assert relying_party_claims(receipt.proof, sim.issuer.url, "fullsend-mint", keys, sim.issuer.now()) is None
    audience = receipt_audience("org/repo", fix.pr, fix.my_run_id, [QUEUED], fix.head)
    assert relying_party_claims(receipt.proof, sim.issuer.url, audience, keys, sim.issuer.now()) is not None
    claims = relying_party_claims(receipt.proof, sim.issuer.url, audience, keys, sim.issuer.now())
    assert (claims["workflow_ref"], claims["job_workflow_ref"]) == (shim_workflow_ref(sim), DISPATCH_JOB_REF)
