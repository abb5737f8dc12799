"""Which comments count as receipts (docs/rules.md#receipt-lists-my-run;
only the job token's identity counts; strict parsing)."""

from __future__ import annotations

import pytest

from fullsend.core.receipt.marker import receipt_listing_run
from tests.core.receipt.receipt_forge import RB, A, M, R, comment

STATUS = "<!-- fullsend:agent-status:42 -->\n<!-- fullsend:status:terminal -->\n{}\n🤖 Finished Review · ✅ Success"
SHA = "a" * 40


def receipts_list_run(comments, login, run_id) -> bool:  # type: ignore[no-untyped-def]
    """Whether any receipt lists ``run_id``: ``receipt_listing_run`` found one."""
    return receipt_listing_run(comments, login, run_id) is not None


def test_V16_union_of_whole_body_receipts() -> None:
    comments = [
        comment(RB("1", "aaa"), cid=1),
        comment(STATUS.format(M("999", "bbb")), login="someuser", user_type="User", cid=2),
        comment(RB("2,3", "ccc"), cid=3),
        comment("🤖 no marker here", cid=4),
    ]
    for run in (1, 2, 3):
        assert receipts_list_run(comments, R, run)
    assert not receipts_list_run(comments, R, 999)
    assert receipt_listing_run(comments, R, 1).id == 1  # type: ignore[union-attr]
    assert receipt_listing_run(comments, R, 3).id == 3  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("vid", "c", "login"),
    [
        ("V17-not-human-line", comment(M("1234", "aaa") + "\n_absorbed_"), R),
        ("V19-app-status-body", comment(STATUS.format(M("1234", "aaa")), login=A), R),
        ("V20-app-review-text", comment("## Review\n\nLGTM.\n<!-- fullsend:steer consumed=1234 head= -->", login=A), R),
        ("V21-attacker", comment(STATUS.format(M("1234", "aaa")), login="attacker", user_type="User"), R),
        ("V22-empty-author-empty-login", comment(RB("1234", "aaa"), login="", user_type=""), ""),
    ],
)
def test_not_found(vid: str, c: object, login: str) -> None:
    assert not receipts_list_run([c], login, 1234)  # type: ignore[list-item]


def test_V18_case_insensitive_author() -> None:
    assert receipts_list_run([comment(RB("1234", "aaa"), login="GitHub-Actions[bot]")], R, 1234)


def test_V23_no_comments() -> None:
    assert not receipts_list_run([], R, 1234)


@pytest.mark.parametrize(
    ("vid", "comments", "expected"),
    [
        ("V24-listed", [comment(RB("999,1000", "abc"))], True),
        ("V25-not-listed", [comment(RB("1000", "abc"))], False),
        ("V26-attacker-status", [comment(STATUS.format(M("999", "abc")), login="attacker", user_type="User")], False),
        ("V27-hello", [comment("hello")], False),
        ("V30-app-status", [comment(STATUS.format(M("999", "abc")), login=A)], False),
        ("V31-absorbed", [comment(M("999,1000", "abc") + "\n_absorbed_")], False),
        ("V31b-marker-alone", [comment(M("999", "abc"))], False),
        (
            "V32-edited",
            [comment(RB("999", "abc"), created="2026-09-25T10:00:00Z", updated="2026-09-25T10:05:00Z")],
            False,
        ),
        (
            "V33-unedited",
            [comment(RB("999", "abc"), created="2026-09-25T10:00:00Z", updated="2026-09-25T10:00:00Z")],
            True,
        ),
        ("V33b-union-older-lists", [comment(RB("999", "abc"), cid=1), comment(RB("1000", "def"), cid=2)], True),
        ("updated-missing", [comment(RB("999", "abc"), updated="")], False),
        ("both-times-missing", [comment(RB("999", "abc"), created="", updated="")], False),
        ("same-instant-other-spelling", [comment(RB("999", "abc"), updated="2026-09-25T10:00:00.000Z")], False),
    ],
)
def test_steer_already_handled_pure(vid: str, comments: list, expected: bool) -> None:
    assert receipts_list_run(comments, R, 999) is expected


def test_V35_run_zero_never_handled() -> None:
    assert not receipts_list_run([comment(RB("999", "abc"))], R, 0)


@pytest.mark.parametrize(
    ("vid", "author", "user_type", "login", "expected"),
    [
        ("graphql-login-without-bot-suffix", "github-actions[bot]", "Bot", "github-actions", True),
        ("user-named-like-receipt-login", "github-actions", "User", "github-actions[bot]", False),
        ("pat-job-token-user-login", "user-a", "User", "User-A", True),
        ("look-alike", "github-actions-bot", "User", "github-actions[bot]", False),
    ],
)
def test_identities_not_strings(vid: str, author: str, user_type: str, login: str, expected: bool) -> None:
    # A User account matches only a login that is not spelled as a Bot (docs/rules.md#receipt-lists-my-run).
    assert receipts_list_run([comment(RB("999", "abc"), login=author, user_type=user_type)], login, 999) is expected


JOB_TOKEN_RECEIPT_BODY = RB("1700", SHA)


def test_only_the_job_token_identity_counts() -> None:
    app = comment(JOB_TOKEN_RECEIPT_BODY, login="fs-coder-app[bot]", cid=1)
    human = comment(JOB_TOKEN_RECEIPT_BODY, login="user-A", user_type="User", cid=2)
    genuine = comment(RB("1699,1700", SHA), login="github-actions[bot]", cid=3)
    assert receipt_listing_run([app, human, genuine], R, 1700).id == 3  # type: ignore[union-attr]
    assert not receipts_list_run([app, human], R, 1700)


@pytest.mark.parametrize(
    ("vid", "bodies", "expected"),
    [
        ("no-substring-match", [RB("17001", SHA)], False),
        ("integer-set", [RB("170,1700", SHA)], True),
        ("fenced", ["quoted:\n```\n" + M("1700", SHA) + "\n```"], False),
        ("no-ids", [M("", SHA)], False),
        ("case", [RB("1700", SHA).replace("fullsend:steer", "FULLSEND:STEER")], False),
        ("union", [RB("1699", SHA), RB("1700", SHA)], True),
        ("marker-alone", [M("1700", SHA)], False),
    ],
)
def test_receipt_strict_parsing(vid: str, bodies: list[str], expected: bool) -> None:
    comments = [comment(b, cid=i) for i, b in enumerate(bodies, 1)]
    assert receipts_list_run(comments, R, 1700) is expected


def test_over_limits_is_not_a_receipt() -> None:
    many = ",".join(str(i) for i in range(1, 5001))
    body = (
        M(many, SHA)
        + "\n_The run already working on this item absorbed follow-up run(s) "
        + ", ".join(many.split(","))
        + (", so a run queued for those events exits without repeating the work._")
    )
    assert not receipts_list_run([comment(body)], R, 1700)
    assert not receipts_list_run([comment(RB("1700", SHA) + " " * (200 * 1024))], R, 1700)


def test_an_edited_receipt_does_not_count() -> None:
    edited = comment(RB("1700", SHA), created="2026-09-18T12:00:00Z", updated="2026-09-18T12:00:01Z")
    assert not receipts_list_run([edited], R, 1700)
