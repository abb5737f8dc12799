"""``fullsend/app/action/skip/preflight.py`` against a small fake Forge: the receipt check wiring, the head-reviewed
reads, the orchestration and the receipt writer (docs/architecture.md "Receipt reader"
and "Receipt writer"; only the job token's identity counts; the skip's request budget)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from fullsend.app.action.skip.facts import PreflightFacts
from fullsend.app.action.skip.preflight import check_head_reviewed, run_preflight
from fullsend.app.action.skip.receipt import PostState, check_receipt, post_receipt
from fullsend.context import load_context
from fullsend.core.model import Comment, WorkflowRun
from fullsend.core.receipt.marker import Marker
from fullsend.core.receipt.signed import receipt_audience
from fullsend.core.receipt.skips import RULE_HEAD_REVIEWED, RULE_RECEIPT
from fullsend.core.scalars import parse_time
from fullsend.errors import ForgeError, MintError, NotFoundError
from tests.core.receipt.receipt_forge import RB, A, FakeForge, LogSink, M, R, comment, forbidden, review

JOB = "ghs_JOBTOKENVALUE"
ROLE = "ghs_ROLETOKENVALUE"
RUN = "33740015232"
HEAD = "f3af8c5a" + "0" * 32


@pytest.fixture
def facts(tmp_path: Path) -> PreflightFacts:
    """The defaults: in Actions, run 33740015232 attempt 1, org/repo#7, minted, no providers dir,
    and the unsigned form's trust model (``allow_unsigned_receipts``): these tests hold its rules,
    which still apply under that input; the signed form's are tests/app/test_signed_receipts.py's."""
    return PreflightFacts(
        stage="triage",
        run_id_raw=RUN,
        run_attempt="1",
        repository="org/repo",
        item_number=7,
        job_token=JOB,
        role_token=ROLE,
        minted=True,
        fullsend_dir=str(tmp_path / ".fullsend"),
        allow_unsigned_receipts=True,
        proof_reads=False,
    )


PROOF = "aGVhZGVy.Y2xhaW1z.c2ln"  # the shape of an OIDC token; what it proves is test_signed_receipts.py's


class FakeSigner:
    """``sign(audience)`` that records the audiences it was asked for and answers ``PROOF``."""

    def __init__(self) -> None:
        self.audiences: list[str] = []

    def __call__(self, audience: str) -> str:
        self.audiences.append(audience)
        return PROOF


def handled_forge(run: str = RUN) -> FakeForge:
    return FakeForge(comments=[comment(RB(run, "abc"))])


def assert_no_tokens(log: LogSink) -> None:
    assert JOB not in log.text and ROLE not in log.text


# --- receipt check ----------------------------------------------------------------------------


def test_V44_V138_receipt_skip(facts: PreflightFacts) -> None:
    forge, log = handled_forge(), LogSink()
    skip = run_preflight(forge, facts, log)
    assert skip is not None and skip.rule_id == RULE_RECEIPT and skip.skip_reason == "receipt"
    assert (
        log.lines[-2][0] == "done"
        and f"already absorbed by the run in flight (follow-up run {RUN})" in log.lines[-2][1]
    )
    assert log.lines[-1] == ("info", skip.reason[:1].upper() + skip.reason[1:])  # which receipt, why it counts
    assert_no_tokens(log)


def test_skip_costs_three_requests_job_token_first(facts: PreflightFacts) -> None:
    """Where GraphQL cannot answer, the REST reads of the skip, job token first."""
    forge = handled_forge()
    assert run_preflight(forge, facts, LogSink()) is not None
    assert forge.calls == [
        ("receipt_view", 7, "job"),
        ("viewer_login", None, "job"),
        ("viewer_login", None, "role"),
        ("list_issue_comments", 7, "job"),
    ]


def test_the_graphql_receipt_view_decides_in_two_reads(facts: PreflightFacts) -> None:
    """Issue 18: the job login and the comments in one GraphQL read, the role login in a second."""
    receipt = replace(comment(RB(RUN, "abc")), updated_at_raw="2026-09-25T10:00:01Z", edited=False)
    forge = FakeForge(view=(R, [receipt]))
    assert run_preflight(forge, facts, LogSink()) is not None
    assert forge.calls == [("receipt_view", 7, "job"), ("viewer_login", None, "role")]
    assert forge.bounds == [(120.0, None)]


def test_a_receipt_graphql_reports_edited_never_counts(facts: PreflightFacts) -> None:
    """``lastEditedAt`` set: edited, whatever the timestamps say (docs/rules.md#receipt-lists-my-run)."""
    receipt = replace(comment(RB(RUN, "abc")), edited=True)
    assert run_preflight(FakeForge(view=(R, [receipt])), facts, LogSink()) is None


def test_over_rest_a_second_between_created_and_updated_still_counts_as_edited(facts: PreflightFacts) -> None:
    """Where GraphQL is unavailable the REST rule stays strict: every doubt fails open."""
    forge = FakeForge(comments=[comment(RB(RUN, "abc"), updated="2026-09-25T10:00:01Z")])
    assert run_preflight(forge, facts, LogSink()) is None


@pytest.mark.parametrize(
    ("vid", "forge", "expected"),
    [
        ("V24-listed", FakeForge(comments=[comment(RB("999,1000", "abc"))]), True),
        ("V25-not-listed", FakeForge(comments=[comment(RB("1000", "abc"))]), False),
        ("V26-attacker", FakeForge(comments=[comment(M("999", "abc"), login="attacker", user_type="User")]), False),
        ("V27-hello", FakeForge(comments=[comment("hello")]), False),
        (
            "V30-app-status",
            FakeForge(comments=[comment("<!-- fullsend:status:terminal -->\n" + M("999", "abc"), login=A)]),
            False,
        ),
        ("V32-edited", FakeForge(comments=[comment(RB("999", "abc"), updated="2026-09-25T10:05:00Z")]), False),
        ("V33-unedited", FakeForge(comments=[comment(RB("999", "abc"))]), True),
        ("V33b-union", FakeForge(comments=[comment(RB("999", "abc"), cid=1), comment(RB("1000", "def"), cid=2)]), True),
    ],
)
def test_steer_already_handled(vid: str, forge: FakeForge, expected: bool, facts: PreflightFacts) -> None:
    log = LogSink()
    skip = check_receipt(forge, replace(facts, run_id_raw="999"), log)
    assert (skip is not None) is expected
    assert not [line for line in log.lines if line[0] == "warning"]


@pytest.mark.parametrize(
    ("vid", "logins", "why"),
    [
        ("V28-same-login", {"job": A, "role": A}, "both act as fullsend[bot]"),
        ("V29-case", {"job": "FullSend[Bot]", "role": A}, "both act as FullSend[Bot]"),
        ("V29b-suffix", {"job": "fullsend", "role": A}, "both act as fullsend"),
        ("V37-receipt-login-403", {"job": forbidden(), "role": A}, "resolving the receipt login: 403"),
        ("V38-role-login-403", {"job": R, "role": forbidden()}, "resolving the role login: 403"),
        ("V48-every-lookup-403", {"job": forbidden(), "role": forbidden()}, "resolving the receipt login"),
        ("empty-login", {"job": "", "role": A}, "empty login"),
    ],
)
def test_identity_errors_fail_open(vid: str, logins: dict, why: str, facts: PreflightFacts) -> None:
    forge, log = FakeForge(logins=logins, comments=[comment(RB(RUN, "abc"), login=A)]), LogSink()
    assert check_receipt(forge, facts, log) is None
    assert (
        log.lines == [("warning", log.lines[0][1])] and "already handled" in log.lines[0][1] and why in log.lines[0][1]
    )
    assert not [c for c in forge.calls if c[0] == "list_issue_comments"]


def test_V36_repo_not_owner_repo(facts: PreflightFacts) -> None:
    log = LogSink()
    assert check_receipt(handled_forge(), replace(facts, repository="norepo"), log) is None
    assert 'status repo "norepo" is not in owner/repo form' in log.text and log.lines[0][0] == "warning"


def test_V39_listing_comments_500(facts: PreflightFacts) -> None:
    log = LogSink()
    assert check_receipt(FakeForge(comments=ForgeError("502 Bad Gateway", 502)), facts, log) is None
    assert "listing comments on org/repo#7: 502" in log.text


@pytest.mark.parametrize(
    ("vid", "change"),
    [
        ("V40-steering-off", {"steering_enabled": False}),
        ("V41-not-in-actions", {"in_actions": False}),
        ("V42-receipt-token-empty", {"minted": False}),
        ("V58-same-token-both-ways", {"role_token": JOB}),
        ("no-role-token", {"role_token": ""}),
        ("no-repo", {"repository": ""}),
        ("no-item", {"item_number": 0}),
        ("V35-run-id-0", {"run_id_raw": "not-a-number"}),
    ],
)
def test_silent_guards(vid: str, change: dict, facts: PreflightFacts) -> None:
    forge, log = handled_forge(), LogSink()
    assert check_receipt(forge, replace(facts, **change), log) is None
    assert log.lines == [] and forge.calls == []


def test_V45_manual_rerun(facts: PreflightFacts) -> None:
    forge, log = handled_forge(), LogSink()
    assert check_receipt(forge, replace(facts, run_attempt="2"), log) is None
    assert log.lines == [("info", log.lines[0][1])] and "run attempt 2 is a manual re-run" in log.text
    assert forge.calls == []


def test_V47_provider_exposes_workflow_token(facts: PreflightFacts) -> None:
    providers = Path(facts.fullsend_dir) / "providers"
    providers.mkdir(parents=True)
    (providers / "github-packages.yaml").write_text(
        'name: github-packages\ntype: fullsend-github-packages\ncredentials: {GITHUB_TOKEN: "${GH_WORKFLOW_TOKEN}"}\n'
    )
    forge, log = handled_forge(), LogSink()
    assert check_receipt(forge, facts, log) is None
    assert log.lines[0][0] == "info" and "Not skipping on a steer receipt" in log.text
    assert 'provider "github-packages" delivers GH_WORKFLOW_TOKEN to a sandbox' in log.text
    assert forge.calls == []


def test_V55_unknown_providers_location(facts: PreflightFacts) -> None:
    log = LogSink()
    assert check_receipt(handled_forge(), replace(facts, fullsend_dir=""), log) is None
    assert "provider definitions location unknown" in log.text


def test_forged_markers_do_not_skip(facts: PreflightFacts) -> None:
    sha = "a" * 40
    forged = [
        comment(RB(RUN, sha), login="fs-coder-app[bot]", cid=1),
        comment(RB(RUN, sha), login="user-A", user_type="User", cid=2),
        comment(RB(RUN, sha), cid=3, updated="2026-09-25T11:00:00Z"),
        comment("```\n" + RB(RUN, sha) + "\n```", cid=4),
    ]
    assert check_receipt(FakeForge(comments=forged), facts, LogSink()) is None
    genuine = [*forged, comment(RB("1699," + RUN, sha), cid=5)]
    assert check_receipt(FakeForge(comments=genuine), facts, LogSink()) is not None


def test_unexpected_error_fails_open(facts: PreflightFacts) -> None:
    forge, log = FakeForge(comments=RuntimeError("boom")), LogSink()
    assert run_preflight(forge, facts, log) is None
    assert any(level == "warning" and "RuntimeError" in msg for level, msg in log.lines)


# --- head-reviewed wiring --------------------------------------------------------------------


def review_forge() -> FakeForge:
    run = WorkflowRun(id=int(RUN), created_at=parse_time("2026-09-23T16:14:04Z"))
    return FakeForge(comments=[], run=run, pr_head=HEAD, reviews=[review(commit=HEAD)])


@pytest.fixture
def review_facts(facts: PreflightFacts) -> PreflightFacts:
    return replace(
        facts,
        stage="review",
        item_number=1480,
        event_name="pull_request_target",
        event_payload={"action": "labeled", "pull_request": {"number": 1480}},
    )


def test_V117_normalised_event_steering_off_skips(review_facts: PreflightFacts) -> None:
    facts = replace(review_facts, normalized_kind="label_changed", event_payload=None, steering_enabled=False)
    log = LogSink()
    skip = run_preflight(review_forge(), facts, log)
    assert skip is not None and skip.rule_id == RULE_HEAD_REVIEWED and skip.skip_reason == "head-reviewed"
    assert log.lines[-1][0] == "done" and f"after run {RUN} was created" in log.lines[-1][1]


@pytest.mark.parametrize("action", ["opened", "labeled"])
def test_V120_builtin_stage_event_payload_skips(action: str, review_facts: PreflightFacts) -> None:
    log = LogSink()
    facts = replace(review_facts, event_payload={"action": action, "pull_request": {"number": 1480}})
    assert run_preflight(review_forge(), facts, log) is not None
    assert "not applied" not in log.text


def test_V125_token_routing(review_facts: PreflightFacts) -> None:
    forge = review_forge()
    assert check_head_reviewed(forge, review_facts, LogSink()) is not None
    assert forge.calls == [
        ("get_run", int(RUN), "job"),
        ("get_pull_request", 1480, "role"),
        ("list_reviews", 1480, "role"),
    ]


@pytest.mark.parametrize(
    ("vid", "change", "text"),
    [
        ("V118-comment-added", {"normalized_kind": "comment_added"}, 'event "comment_added"'),
        ("V118-no-event", {"event_payload": None}, 'event ""'),
        ("V118-attempt-2", {"run_attempt": "2"}, "run attempt 2 is a manual re-run"),
        ("V118-no-gha", {"in_actions": False}, "Head-reviewed skip not checked"),
        ("V118-no-role-token", {"role_token": ""}, "Head-reviewed skip not checked"),
        ("V121-other-pr", {"item_number": 1481}, "Head-reviewed skip not applied"),
        (
            "V122-issue-comment",
            {"event_name": "issue_comment", "event_payload": {"action": "created"}},
            'event "comment_added"',
        ),
        (
            "V123-dispatch",
            {"event_name": "workflow_dispatch", "event_payload": None},
            'Head-reviewed skip not applied: event "" is not one a duplicate review comes from',
        ),
        ("V124-no-job-token", {"job_token": ""}, "Head-reviewed skip not checked"),
        ("V97-stage-triage", {"stage": "triage"}, 'stage "triage" is not review'),
    ],
)
def test_head_reviewed_runs(vid: str, change: dict, text: str, review_facts: PreflightFacts) -> None:
    forge, log = review_forge(), LogSink()
    assert check_head_reviewed(forge, replace(review_facts, **change), log) is None
    assert text in log.text and log.lines[0][0] == "info"
    assert forge.calls == []


@pytest.mark.parametrize(
    ("vid", "attr", "error", "text"),
    [
        ("V116-run-403", "run", forbidden(), "reading this run: 403"),
        ("V116-head-404", "pr_head", NotFoundError("404 Not Found"), "reading the pull request head: 404"),
        ("V119-head-error", "pr_head", ForgeError("boom", None), "reading the pull request head"),
        ("V116-reviews-502", "reviews", ForgeError("502 Bad Gateway", 502), "listing reviews: 502"),
    ],
)
def test_head_reviewed_read_errors_fail_open(
    vid: str, attr: str, error: Exception, text: str, review_facts: PreflightFacts
) -> None:
    forge, log = review_forge(), LogSink()
    setattr(forge, attr, error)
    assert run_preflight(forge, review_facts, log) is None
    warnings = [msg for level, msg in log.lines if level == "warning"]
    assert (
        len(warnings) == 1
        and "Could not check whether this head was already reviewed" in warnings[0]
        and text in warnings[0]
    )


def test_V113_run_not_found(review_facts: PreflightFacts) -> None:
    forge, log = review_forge(), LogSink()
    forge.run = NotFoundError("404 Not Found")
    assert check_head_reviewed(forge, review_facts, log) is None
    assert log.lines == [("info", "Head-reviewed skip not applied: this run was not found [head-reviewed]")]


def test_V139_V140_orchestration(review_facts: PreflightFacts) -> None:
    log = LogSink()
    assert run_preflight(review_forge(), review_facts, log) is not None
    assert "already reviewed" in log.lines[-1][1] and "nothing to do" in log.lines[-1][1]
    forge, log = review_forge(), LogSink()
    forge.reviews = []
    assert run_preflight(forge, review_facts, log) is None
    assert "nothing to do" not in log.text


def test_receipt_check_comes_first(review_facts: PreflightFacts) -> None:
    """Both checks read at once when the head-reviewed pre-checks pass (one round trip), but the
    receipt decides first: its skip wins and the head-reviewed check says nothing."""
    forge = review_forge()
    forge.comments = [comment(RB(RUN, "abc"))]
    log = LogSink()
    skip = run_preflight(forge, review_facts, log)
    assert skip is not None and skip.rule_id == RULE_RECEIPT
    assert "[head-reviewed]" not in log.text and "nothing to do [receipt-lists-my-run]" in log.text


def test_the_head_reviewed_reads_wait_for_no_receipt_when_its_pre_checks_fail(review_facts: PreflightFacts) -> None:
    forge = review_forge()
    forge.comments = [comment(RB(RUN, "abc"))]
    facts = replace(review_facts, stage="code")  # not the review stage: the head-reviewed check does not apply
    skip = run_preflight(forge, facts, LogSink())
    assert skip is not None and skip.rule_id == RULE_RECEIPT
    assert not [c for c in forge.calls if c[0] == "get_run"]


def test_the_event_payload_is_read_once_in_the_context(tmp_path: Path) -> None:
    """The ``GITHUB_EVENT_PATH`` object, or nothing when unset, missing or not an object."""
    path = tmp_path / "event.json"
    path.write_text('{"action": "opened", "pull_request": {"number": 7}}')
    ctx = load_context({"GITHUB_EVENT_PATH": str(path)})
    assert (dict(ctx.event), ctx.event_readable) == ({"action": "opened", "pull_request": {"number": 7}}, True)
    for text in ("[1]", "{not json"):
        path.write_text(text)
        ctx = load_context({"GITHUB_EVENT_PATH": str(path)})
        assert (dict(ctx.event), ctx.event_readable) == ({}, False)
    for where in ("", str(tmp_path / "missing.json")):
        ctx = load_context({"GITHUB_EVENT_PATH": where})
        assert (dict(ctx.event), ctx.event_readable) == ({}, False)


# --- the writer -------------------------------------------------------------------------------


def posted(author: str = R) -> Comment:
    return comment("x", login=author, cid=55)


def test_V60_posts_one_signed_receipt_with_the_job_token(facts: PreflightFacts) -> None:
    forge, log, sign = FakeForge(post_result=posted()), LogSink(), FakeSigner()
    result = post_receipt(forge, facts, Marker((102, 101), "abc"), log, sign)
    assert result.state is PostState.POSTED and result.comment is not None and result.comment.id == 55
    assert len(forge.posted) == 1
    number, body, credential = forge.posted[0]
    assert (number, credential) == (7, "job")
    assert body == (
        f"<!-- fullsend:steer-signed consumed=101,102 head=abc run={RUN} proof={PROOF} -->\n_The run already "
        "working on this item absorbed follow-up run(s) 101, 102, so a run queued for those events exits "
        "without repeating the work._"
    )
    assert sign.audiences == [receipt_audience("org/repo", 7, int(RUN), (101, 102), "abc")]
    assert log.lines == [("done", f"Posted the steer receipt as {R}")]
    assert_no_tokens(log)


def test_a_job_that_cannot_sign_posts_the_unsigned_form_only_where_allowed(facts: PreflightFacts) -> None:
    forge, log = FakeForge(post_result=posted()), LogSink()
    assert post_receipt(forge, facts, Marker((102, 101), "abc"), log).state is PostState.POSTED
    assert forge.posted[0][1] == (
        "<!-- fullsend:steer consumed=101,102 head=abc -->\n_The run already working on this item absorbed "
        "follow-up run(s) 101, 102, so a run queued for those events exits without repeating the work._"
    )
    assert log.lines[0][0] == "info" and "id-token: write" in log.text and "[receipt-unsigned]" in log.text
    forge, log = FakeForge(post_result=posted()), LogSink()
    strict = replace(facts, allow_unsigned_receipts=False)
    assert post_receipt(forge, strict, Marker((101,), "abc"), log).state is PostState.NOT_POSTED
    assert forge.posted == [] and log.lines[0][0] == "warning" and "[receipt-unsigned]" in log.text


def test_a_refused_oidc_request_posts_no_receipt_unless_unsigned_ones_are_allowed(facts: PreflightFacts) -> None:
    def refused(audience: str) -> str:
        raise MintError("the OIDC token request returned HTTP 403: Forbidden")

    forge, log = FakeForge(post_result=posted()), LogSink()
    strict = replace(facts, allow_unsigned_receipts=False)
    assert post_receipt(forge, strict, Marker((101,), "abc"), log, refused).state is PostState.NOT_POSTED
    assert forge.posted == [] and "HTTP 403" in log.text and log.lines[-1][0] == "warning"
    forge, log = FakeForge(post_result=posted()), LogSink()
    assert post_receipt(forge, facts, Marker((101,), "abc"), log, refused).state is PostState.POSTED
    assert forge.posted[0][1].startswith("<!-- fullsend:steer consumed=101 ")
    for bad in ("not.a-token", "a.b.c d"):
        forge, log = FakeForge(post_result=posted()), LogSink()
        post = post_receipt(forge, strict, Marker((101,), "abc"), log, lambda audience, bad=bad: bad)
        assert post.state is PostState.NOT_POSTED and "compact JSON Web Token" in log.text


@pytest.mark.parametrize(
    ("vid", "marker", "change"),
    [
        ("V62-head-only", Marker((), "abc123"), {}),
        ("V63-non-positive", Marker((0, -1), "abc123"), {}),
        ("V65-empty", Marker(), {}),
        ("no-item", Marker((101,), "abc"), {"item_number": 0}),
    ],
)
def test_nothing_absorbed_posts_nothing_silently(vid: str, marker: Marker, change: dict, facts: PreflightFacts) -> None:
    forge, log = FakeForge(post_result=posted()), LogSink()
    assert post_receipt(forge, replace(facts, **change), marker, log).state is PostState.NOT_POSTED
    assert forge.calls == [] and log.lines == []


@pytest.mark.parametrize(
    ("vid", "change"),
    [("V64-not-minted", {"minted": False}), ("V66-job-equals-role", {"job_token": "shared", "role_token": "shared"})],
)
def test_writer_off_without_swap(vid: str, change: dict, facts: PreflightFacts) -> None:
    forge, log = FakeForge(post_result=posted()), LogSink()
    assert post_receipt(forge, replace(facts, **change), Marker((101,), "abc"), log).state is PostState.NOT_POSTED
    assert forge.calls == [] and len(log.lines) == 1 and log.lines[0][0] == "info"


def test_writer_off_for_same_identity(facts: PreflightFacts) -> None:
    forge, log = FakeForge(logins={"job": A, "role": A}, post_result=posted()), LogSink()
    assert post_receipt(forge, facts, Marker((101,), "abc"), log).state is PostState.NOT_POSTED
    assert forge.posted == [] and len(log.lines) == 1 and "both act as" in log.text


@pytest.mark.parametrize(("result", "state"), [(None, PostState.POSTED_URL_UNKNOWN), (Comment(id=0), PostState.POSTED)])
def test_V68_no_comment_object(result: Comment | None, state: PostState, facts: PreflightFacts) -> None:
    log = LogSink()
    post = post_receipt(FakeForge(post_result=result), facts, Marker((101,), "abc"), log, FakeSigner())
    assert post.state is state and post.exists and post.comment is result
    assert log.lines == [("done", "Posted the steer receipt")]


def test_V69_post_403_warns_and_run_goes_on(facts: PreflightFacts) -> None:
    forge, log = FakeForge(post_result=forbidden()), LogSink()
    assert post_receipt(forge, facts, Marker((101,), "abc"), log, FakeSigner()).state is PostState.NOT_POSTED
    assert len(forge.posted) == 1
    assert log.lines[0][0] == "warning" and "queued run will redo this work" in log.text and "403" in log.text


def test_writer_malformed_repo(facts: PreflightFacts) -> None:
    log = LogSink()
    assert (
        post_receipt(
            FakeForge(post_result=posted()), replace(facts, repository="norepo"), Marker((101,), "abc"), log
        ).state
        is PostState.NOT_POSTED
    )
    assert log.lines[0][0] == "warning" and '"norepo"' in log.text


def test_token_values_never_reach_a_log_line(facts: PreflightFacts) -> None:
    forge, log = FakeForge(comments=ForgeError(f"401 Bad credentials for {JOB} / {ROLE}", 401)), LogSink()
    assert run_preflight(forge, facts, log) is None
    assert "401 Bad credentials" in log.text
    assert_no_tokens(log)
    log = LogSink()
    post_receipt(FakeForge(post_result=ForgeError(f"403 {JOB}", 403)), facts, Marker((101,), "abc"), log)
    assert "403" in log.text
    assert_no_tokens(log)
