"""The reader's verdict on a signed receipt's proof (``fullsend.core.receipt.proof.verify``):
one test per rule id (docs/rules.md "Receipt proof"), the genuine proof passing, also long after
its expiry, and the documented token shape read as GitHub writes it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from fullsend.core.model import ReferencedWorkflow
from fullsend.core.receipt.marker import Marker
from fullsend.core.receipt.proof import verify as v
from fullsend.core.receipt.proof.jwt import decode_jwt
from fullsend.core.receipt.proof.rs256 import parse_jwks
from fullsend.core.receipt.signed import SignedReceipt, receipt_audience, whole_body_signed_receipt
from fullsend.simulator.issuer import (
    CURRENT_KEY,
    PREVIOUS_KEY,
    STRANGER_KEY,
    JobIdentity,
    claims_for,
    sign_jwt,
)

ISSUER = "https://token.actions.githubusercontent.com"
REPO, ITEM, WRITER, READER = "org/repo", 7, 33740015232, 33740099999
SHIM = "org/repo/.github/workflows/fullsend.yml@refs/heads/main"
DISPATCH_PATH = "fullsend-ai/steer-action/.github/workflows/dispatch.yml@v1"
CHAIN = (ReferencedWorkflow(DISPATCH_PATH, "refs/tags/v1", "2a10" * 10),)
CREATED = datetime(2026, 9, 3, 10, 30, tzinfo=UTC)
IDS, HEAD = (1001, 1002), "aaa111"
DOCS_TOKEN = Path(__file__).resolve().parents[3] / "data" / "oidc" / "github-docs-token.json"


def context(**changes):
    base = dict(
        issuer=ISSUER,
        repository=REPO,
        item=ITEM,
        reader_run_id=READER,
        workflow_refs=v.shim_workflow_refs(REPO, ".github/workflows/fullsend.yml", ["refs/heads/main"]),
        chain=CHAIN,
        keys=parse_jwks({"keys": [CURRENT_KEY.jwk()]}),
    )
    return v.ProofContext(**{**base, **changes})


def identity(**changes):
    base = dict(
        repository=REPO,
        run_id=WRITER,
        workflow_ref=SHIM,
        job_workflow_ref="fullsend-ai/steer-action/.github/workflows/dispatch.yml@refs/tags/v1",
    )
    return JobIdentity(**{**base, **changes})


def receipt(*, ids=IDS, head=HEAD, writer=WRITER, key=CURRENT_KEY, kid=None, alg="RS256", issued=None, **claims):
    """A signed receipt whose proof the writer run ``writer`` requested for its content."""
    audience = receipt_audience(REPO, ITEM, writer, ids, head)
    token_claims = {**claims_for(identity(run_id=writer), audience, ISSUER, issued or CREATED - timedelta(seconds=3))}
    token_claims.update(claims)
    return SignedReceipt(Marker(tuple(ids), head), writer, sign_jwt(token_claims, key, kid=kid, alg=alg))


def verdict(rec, ctx=None, created=CREATED):
    return v.verify_proof(rec, created, ctx or context())


def test_the_genuine_proof_holds_also_long_after_it_expired():
    genuine = receipt()
    assert verdict(genuine).ok
    assert verdict(genuine, created=CREATED + timedelta(days=30)).ok  # expired: still evidence
    assert decode_jwt(genuine.proof).claims["exp"] < (CREATED + timedelta(days=30)).timestamp()


def test_malformed():
    bad = SignedReceipt(Marker(IDS, HEAD), WRITER, "a.b.c")
    assert verdict(bad).rule_id == v.RULE_PROOF_MALFORMED
    no_run = receipt(run_id=33740015232)  # a number, not GitHub's string
    assert verdict(no_run).rule_id == v.RULE_PROOF_MALFORMED and '"run_id"' in verdict(no_run).why
    no_iat = receipt(iat="1632493567")
    assert verdict(no_iat).rule_id == v.RULE_PROOF_MALFORMED


def test_algorithm():
    assert verdict(receipt(alg="HS256")).rule_id == v.RULE_PROOF_ALGORITHM
    assert verdict(receipt(alg="none")).rule_id == v.RULE_PROOF_ALGORITHM


def test_issuer_comes_from_configuration_never_from_the_token():
    other = receipt(iss="https://token.actions.example.com")
    got = verdict(other)
    assert got.rule_id == v.RULE_PROOF_ISSUER and ISSUER in got.why
    enterprise = context(issuer=ISSUER + "/octocat-inc")
    assert verdict(receipt(), enterprise).rule_id == v.RULE_PROOF_ISSUER
    assert verdict(receipt(iss=ISSUER + "/octocat-inc"), enterprise).ok


def test_key_unknown_names_the_key_and_says_it_may_have_rotated_away():
    rotated = receipt(key=PREVIOUS_KEY)
    got = verdict(rotated)
    assert got.rule_id == v.RULE_PROOF_KEY_UNKNOWN and got.kid == PREVIOUS_KEY.kid and "rotated away" in got.why
    assert verdict(rotated, context(keys=parse_jwks({"keys": [PREVIOUS_KEY.jwk()]}))).ok
    assert verdict(receipt(key=STRANGER_KEY)).rule_id == v.RULE_PROOF_KEY_UNKNOWN
    assert verdict(receipt(kid="")).rule_id == v.RULE_PROOF_KEY_UNKNOWN


def test_signature_by_a_stranger_naming_the_issuers_key():
    forged = receipt(key=STRANGER_KEY, kid=CURRENT_KEY.kid)
    assert verdict(forged).rule_id == v.RULE_PROOF_SIGNATURE


def test_audience_binds_ids_head_item_and_writer_run():
    genuine = receipt()
    for changed in (
        SignedReceipt(Marker((1001, 1002, 1003), HEAD), WRITER, genuine.proof),
        SignedReceipt(Marker((1001,), HEAD), WRITER, genuine.proof),
        SignedReceipt(Marker(IDS, "bbb222"), WRITER, genuine.proof),
    ):
        assert verdict(changed).rule_id == v.RULE_PROOF_AUDIENCE
    assert verdict(genuine, context(item=8)).rule_id == v.RULE_PROOF_AUDIENCE
    assert verdict(receipt(aud="fullsend-mint")).rule_id == v.RULE_PROOF_AUDIENCE


def test_run_repository_and_run_id_are_the_writer_run_the_receipt_names():
    genuine = receipt()
    named_other = SignedReceipt(genuine.marker, WRITER + 1, genuine.proof)
    assert verdict(named_other).rule_id == v.RULE_PROOF_AUDIENCE  # the writer run is in the audience too
    other_run = receipt(run_id=str(WRITER + 5))
    assert verdict(other_run).rule_id == v.RULE_PROOF_RUN
    assert verdict(receipt(repository="org/other")).rule_id == v.RULE_PROOF_RUN
    assert verdict(receipt(repository="Org/Repo")).ok  # repository names are case-insensitive
    itself = receipt(writer=READER)
    assert verdict(itself).rule_id == v.RULE_PROOF_RUN


@pytest.mark.parametrize(
    "workflow_ref",
    [
        "org/repo/.github/workflows/other.yml@refs/heads/main",  # another workflow of the repository
        "org/repo/.github/workflows/fullsend.yml@refs/heads/evil",  # a branch run of the shim
        "org/other/.github/workflows/fullsend.yml@refs/heads/main",
    ],
)
def test_workflow_is_the_readers_shim_at_a_ref_it_runs_from(workflow_ref):
    assert verdict(receipt(workflow_ref=workflow_ref)).rule_id == v.RULE_PROOF_WORKFLOW


def test_a_pull_requests_merge_ref_counts_when_the_reader_lists_it():
    merge = receipt(workflow_ref="org/repo/.github/workflows/fullsend.yml@refs/pull/7/merge")
    assert verdict(merge).rule_id == v.RULE_PROOF_WORKFLOW
    refs = v.shim_workflow_refs(REPO, ".github/workflows/fullsend.yml", ["refs/heads/main", "refs/pull/7/merge"])
    assert verdict(merge, context(workflow_refs=refs)).ok


@pytest.mark.parametrize(
    "job_workflow_ref",
    [
        SHIM,  # a job of the shim itself, not of the dispatch
        "fullsend-ai/steer-action/.github/workflows/dispatch.yml@refs/heads/main",  # another ref
        "evil/steer-action/.github/workflows/dispatch.yml@refs/tags/v1",
    ],
)
def test_dispatch_is_in_the_readers_chain(job_workflow_ref):
    assert verdict(receipt(job_workflow_ref=job_workflow_ref)).rule_id == v.RULE_PROOF_DISPATCH


def test_chain_entries_match_by_path_or_by_their_file_and_ref():
    sha = "1595d4b6de6a9e9751fb270a41019ce507d4099e"
    pinned = (ReferencedWorkflow(f"fullsend-ai/steer-action/.github/workflows/dispatch.yml@{sha}", "", sha),)
    assert v.chain_matches(f"fullsend-ai/steer-action/.github/workflows/dispatch.yml@{sha}", pinned)
    assert v.chain_matches("fullsend-ai/steer-action/.github/workflows/dispatch.yml@refs/tags/v1", CHAIN)
    assert v.chain_matches("Fullsend-AI/Steer-Action/.github/workflows/dispatch.yml@v1", CHAIN)
    assert not v.chain_matches("fullsend-ai/steer-action/.github/workflows/dispatch.yml@refs/tags/v1", pinned)
    assert not v.chain_matches("fullsend-ai/steer-action/.github/workflows/dispatch.yml@v1", ())


LOCAL_DISPATCH = "org/repo/.github/workflows/fullsend-dispatch.yml"


def test_a_local_dispatch_signs_at_its_callers_ref_though_the_readers_event_differs():
    # a Fix run started by a review (refs/pull/7/merge) writes; the queued issue_comment run reads
    refs = v.shim_workflow_refs(REPO, ".github/workflows/fullsend.yml", ["refs/heads/main", "refs/pull/7/merge"])
    reader_chain = (ReferencedWorkflow(f"{LOCAL_DISPATCH}@refs/heads/main", "refs/heads/main", "2a10" * 10),)
    ctx = context(workflow_refs=refs, chain=reader_chain)
    at_merge = "org/repo/.github/workflows/fullsend.yml@refs/pull/7/merge"
    assert verdict(receipt(workflow_ref=at_merge, job_workflow_ref=f"{LOCAL_DISPATCH}@refs/pull/7/merge"), ctx).ok
    refused = [
        f"{LOCAL_DISPATCH}@refs/heads/evil",  # a ref neither the writer's shim's nor a chain entry's
        "org/repo/.github/workflows/other.yml@refs/pull/7/merge",  # a file not in the chain
        "org/other/.github/workflows/fullsend-dispatch.yml@refs/pull/7/merge",  # another repository
    ]
    for job_workflow_ref in refused:
        rec = receipt(workflow_ref=at_merge, job_workflow_ref=job_workflow_ref)
        assert verdict(rec, ctx).rule_id == v.RULE_PROOF_DISPATCH, job_workflow_ref
    # a dispatch hosted elsewhere keeps the exact chain entry
    hosted = receipt(job_workflow_ref="fullsend-ai/steer-action/.github/workflows/dispatch.yml@refs/pull/7/merge")
    assert verdict(hosted, context(workflow_refs=refs)).rule_id == v.RULE_PROOF_DISPATCH


def test_a_run_records_path_with_a_ref_names_the_shim_by_its_path_alone():
    # GitHub's documented "Get a workflow run" example: "path": ".github/workflows/build.yml@main"
    written = v.shim_workflow_refs(REPO, ".github/workflows/fullsend.yml@main", ["refs/heads/main"])
    assert written == v.shim_workflow_refs(REPO, ".github/workflows/fullsend.yml", ["refs/heads/main"])
    assert verdict(receipt(), context(workflow_refs=written)).ok


def test_issued_late_allows_the_stated_leeway():
    leeway = timedelta(seconds=v.ISSUED_LEEWAY_S)
    assert verdict(receipt(issued=CREATED + leeway)).ok
    late = receipt(issued=CREATED + leeway + timedelta(seconds=1))
    assert verdict(late).rule_id == v.RULE_PROOF_ISSUED_LATE
    assert verdict(receipt(), created=None).rule_id == v.RULE_PROOF_ISSUED_LATE


def test_every_rule_id_is_listed_once():
    assert len(set(v.PROOF_RULE_IDS)) == len(v.PROOF_RULE_IDS) == 12


def test_the_documented_token_shape_is_what_the_reader_reads_and_the_simulator_issues():
    """GitHub's example token: ``alg`` RS256 with a ``kid``; ``run_id`` and the other ids are
    strings, the times whole numbers.  The simulator issues the same claim names with the same types."""
    doc = json.loads(DOCS_TOKEN.read_text(encoding="utf-8"))
    assert doc["header"]["alg"] == v.ALGORITHM and isinstance(doc["header"]["kid"], str)
    claims = doc["claims"]
    for name in ("iss", "repository", "run_id", "job_workflow_ref"):
        assert isinstance(claims[name], str)
    assert all(isinstance(claims[t], int) for t in ("iat", "exp", "nbf"))
    ours = claims_for(identity(), "aud", ISSUER, CREATED)
    shared = set(claims) & set(ours)
    assert shared >= {"run_id", "repository", "job_workflow_ref", "iat", "exp", "nbf", "iss", "aud"}
    assert {name: type(claims[name]) for name in shared} == {name: type(ours[name]) for name in shared}
    signed = sign_jwt({**claims, "workflow_ref": SHIM}, CURRENT_KEY, kid=CURRENT_KEY.kid)
    documented = SignedReceipt(Marker(IDS, HEAD), WRITER, signed)
    ctx = context(issuer=claims["iss"], repository=claims["repository"])
    assert verdict(documented, ctx).rule_id == v.RULE_PROOF_AUDIENCE  # read through, to the first claim it fails


def test_the_body_round_trips_through_the_signed_grammar():
    genuine = receipt()
    from fullsend.core.receipt.signed import signed_receipt_body

    body = signed_receipt_body(IDS, HEAD, WRITER, genuine.proof)
    assert whole_body_signed_receipt(body) == genuine
