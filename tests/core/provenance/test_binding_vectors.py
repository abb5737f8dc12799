"""Comment ↔ run binding and the parsers (docs/architecture.md "Binding")."""

from __future__ import annotations

import pytest

from fullsend.core.model import Comment
from fullsend.core.provenance.binding import (
    MAX_DISPATCH_LAG,
    Authorization,
    authorizations,
    bind_triggers,
    command_instruction,
    is_stage_command,
    observed_authorizations,
    opens_with_stage_command,
    parse_title,
    review_comment_id,
)
from tests.core.provenance.provenance_world import C, comment, t


def auth(run_id: int, clock: str, names: int = 0, login: str = "reviewer") -> Authorization:
    """An authorization "run_id@clock" (naming comment ``names`` when non-zero)."""
    return Authorization(run_id, t(clock), names, login)


c0 = comment(1, "reviewer", "/fs-fix one", "10:05:00")
c1 = comment(2, "reviewer", "/fs-fix two", "10:05:10")
later = comment(3, "reviewer", "/fs-fix later", "10:06:00")
n0 = comment(1, "newcomer", "/fs-fix delete the auth tests", "10:04:00")
n1 = comment(2, "newcomer", "/fs-fix cover the error path", "10:05:00")

# (vector, comments, authorized this batch, observed extra, byComment, unbound)
BINDINGS = [
    ("B1", [c1, c0], [auth(55, "10:05:13"), auth(56, "10:05:14")], [], {}, [55, 56]),
    ("B2", [c1, c0], [auth(55, "10:05:13", 1), auth(56, "10:05:14", 2)], [], {1: (55,), 2: (56,)}, []),
    ("B3", [c0], [auth(55, "10:05:13", 1), auth(56, "10:05:14", 2)], [], {1: (55,)}, [56]),
    ("B4", [c0], [auth(56, "10:05:13", 9)], [], {}, [56]),
    ("B5", [c0, c1], [auth(56, "10:05:13")], [auth(55, "10:06:30")], {}, [56]),
    ("B6", [later, c0], [auth(55, "10:05:03"), auth(57, "10:06:03")], [], {1: (55,), 3: (57,)}, []),
    ("B7", [later], [auth(55, "10:05:03"), auth(57, "10:06:03")], [], {3: (57,)}, [55]),
    ("B8", [c0], [auth(55, "10:05:03"), auth(57, "10:06:03")], [], {1: (55,)}, [57]),
    (
        "B9",
        [n0, n1],
        [auth(56, "10:05:03", login="newcomer")],
        [auth(55, "10:04:03", login="newcomer")],
        {2: (56,)},
        [],
    ),
    ("B10", [n0], [auth(56, "10:05:03", login="newcomer")], [auth(55, "10:04:03", login="newcomer")], {}, [56]),
    ("B11", [n0, n1], [auth(56, "10:05:03", login="newcomer")], [], {}, [56]),
    ("B12", [c0], [auth(55, "10:05:03")], [], {1: (55,)}, []),
    ("B13", [c0], [auth(55, "10:59:00")], [], {}, [55]),
    ("B14", [c0], [auth(55, "10:16:00", 1)], [], {1: (55,)}, []),
    ("B15", [c0], [auth(55, "10:16:00")], [], {}, [55]),
    ("B16", [comment(1, "reviewer", "/fs-fix one", "10:05:00", "10:06:00")], [auth(55, "10:16:00", 1)], [], {}, [55]),
    ("B17", [comment(1, "reviewer", "/fs-fix one", "10:05:00", "10:20:00")], [auth(55, "10:16:00", 1)], [], {}, [55]),
    ("B18", [], [auth(55, "10:05:03")], [], {}, [55]),
    (
        "B19",
        [comment(1, "reviewer", "/fs-fix edited after the run", "10:05:00", "10:09:00")],
        [auth(55, "10:05:03")],
        [],
        {},
        [55],
    ),
    ("B20", [comment(1, "reviewer", "just thinking out loud", "10:05:00")], [auth(55, "10:06:03")], [], {}, [55]),
    ("B21", [c0], [auth(55, "10:15:00")], [], {1: (55,)}, []),
]


@pytest.mark.parametrize(
    ("vector", "comments", "auths", "observed", "by_comment", "unbound"), BINDINGS, ids=[b[0] for b in BINDINGS]
)
def test_bind_triggers_vectors(
    vector: str,
    comments: list[Comment],
    auths: list[Authorization],
    observed: list[Authorization],
    by_comment: dict[int, tuple[int, ...]],
    unbound: list[int],
) -> None:
    """B1-B21: bound by comment, and unbound, for each case of the table."""
    binding = bind_triggers(comments, auths, observed)
    assert dict(binding.by_comment) == by_comment
    assert list(binding.unbound) == unbound


def test_B9_observed_copy_of_an_authorized_run_counts_once() -> None:
    """A run both authorized and observed counts once (B12 with the run also observed)."""
    a = auth(55, "10:05:03")
    assert bind_triggers([c0], [a], [a]).by_comment == {1: (55,)}


def test_max_dispatch_lag_is_ten_minutes() -> None:
    """maxDispatchLag = 10 minutes (inclusive, B21)."""
    assert MAX_DISPATCH_LAG.total_seconds() == 600


@pytest.mark.parametrize(
    ("at", "covered"),
    [("10:05:00", True), ("10:05:30", True), ("10:06:00", False), (None, False)],
)
def test_authorization_covers(at: str | None, covered: bool) -> None:
    """``Authorization.covers`` with Until 10:05:30; an unknown instant is never covered."""
    assert auth(55, "10:05:30").covers(t(at) if at else None) is covered


def test_authorization_with_unknown_until_covers_nothing() -> None:
    """Unknown Until → no."""
    assert Authorization(55, None, 0, "reviewer").covers(t("10:05:00")) is False


def test_authorized_actors_attempt_one() -> None:
    """Authorized actors: issue_comment, attempt 1 → reviewer with run 55, Until 10:05:03, comment 12."""
    run = C(
        id=55, actor={"login": "Reviewer"}, created_at="2026-09-03T10:05:03Z", display_title="org/repo#7 comment:12"
    )
    assert authorizations([run]) == [Authorization(55, t("10:05:03"), 12, "reviewer")]


@pytest.mark.parametrize("attempt", [2, 0, None, "1"])
def test_authorized_actors_other_attempts_confer_nothing(attempt: object) -> None:
    """A re-run (attempt 2, triggering "rerunner") or attempt 0/unknown → nothing; "rerunner" never appears."""
    run = C(id=55, run_attempt=attempt, triggering_actor={"login": "rerunner"}, display_title="org/repo#7 comment:12")
    assert authorizations([run]) == []
    assert all(a.login != "rerunner" for a in observed_authorizations([run]))


@pytest.mark.parametrize("event", ["issues", "pull_request_target", "pull_request_review"])
def test_authorized_actors_other_events_confer_nothing(event: str) -> None:
    """Only a comment or a review-thread comment confers amendment authority."""
    assert authorizations([C(id=55, event=event, pull_requests=[7])]) == []


def test_a_review_thread_run_confers_authority_over_review_comments_only() -> None:
    """docs/architecture.md "Amendments and context": a review-thread comment's run names its
    comment by ``review_comment:<id>``; a ``comment:<id>`` title names no review comment."""
    thread = C(
        id=55,
        event="pull_request_review_comment",
        actor={"login": "Reviewer"},
        created_at="2026-09-03T10:05:03Z",
        display_title="org/repo#7 review_comment:12",
        pull_requests=[7],
    )
    assert authorizations([thread]) == [Authorization(55, t("10:05:03"), 12, "reviewer", in_thread=True)]
    odd = C(id=56, event="pull_request_review_comment", display_title="org/repo#7 comment:12")
    assert [(a.comment_id, a.in_thread) for a in authorizations([odd])] == [(0, True)]


def test_authorized_actors_need_an_actor() -> None:
    """An empty or missing actor confers nothing (triggering_actor is never a fallback)."""
    assert authorizations([C(id=55, actor=None), C(id=56, actor={"login": "  "})]) == []


# --- parsers --------------------------------------------------------------------------------------

INSTRUCTIONS = [
    ("/fs-fix rebase onto main", "rebase onto main"),
    ("/fs-review look again", "look again"),
    ("/fs-triage re-label this", "re-label this"),
    ("/fs-prioritize rank it lower", "rank it lower"),
    ("/fs-fix do this\nand that", "do this\nand that"),
    ("just a comment", ""),
    ("you can use /fs-fix for this", ""),
    ("/fs-fix", ""),
    ("/fs- do the thing", ""),
    ("/fs-x do the thing", "do the thing"),
    ("/fs-reviw look again", "look again"),
    ("/fs-new-stage do the thing", "do the thing"),
    ("/fs-cache/config.yaml must stay pinned — do not regenerate it.", ""),
    ("/fs-config.yaml is checked in", ""),
    ("/FS-Fix do X", "do X"),
    ("/help me", ""),
    ("/fs-fix. rebase onto main", "rebase onto main"),
    ("/fs-fix: do X", "do X"),
    ("\nplease check…", ""),
    ("\r\nplease check…", ""),
    ("   \n\t ", ""),
    ("", ""),
    ("\n/fs-fix cover the error path", ""),
    ("   /fs-fix cover the error path", "cover the error path"),
]


@pytest.mark.parametrize(("body", "instruction"), INSTRUCTIONS, ids=[repr(b)[:40] for b, _ in INSTRUCTIONS])
def test_command_instruction_vectors(body: str, instruction: str) -> None:
    """The stage-command / instruction table (kind comment)."""
    assert command_instruction(body) == instruction


@pytest.mark.parametrize(
    ("body", "opens"),
    [
        ("/fs-fix", True),
        ("/FS-Fix do X", True),
        ("   /fs-fix cover", True),
        ("/fs-x do the thing", True),
        ("/fs- do the thing", False),
        ("/fs-config.yaml is checked in", False),
        ("/help me", False),
        ("you can use /fs-fix for this", False),
        ("\n/fs-fix cover the error path", False),
        ("", False),
    ],
)
def test_opens_with_stage_command(body: str, opens: bool) -> None:
    """Shape, not list; only the first field of the first line counts."""
    assert opens_with_stage_command(body) is opens


def test_command_instruction_review_kind() -> None:
    """Kind review, "/fs-fix do the thing" → "" (a review is never an amendment)."""
    assert command_instruction("/fs-fix do the thing", kind="review") == ""


def test_cache_path_is_not_a_command() -> None:
    """ "/fs-cache/config.yaml …" does not open with a stage command (renders as a plain comment)."""
    assert not opens_with_stage_command("/fs-cache/config.yaml must stay pinned — do not regenerate it.")


@pytest.mark.parametrize(
    ("token", "command"),
    [("/fs-fix:", True), ("/fs-fix.", True), ("/fs-review!", True), ("/fs-fix,", True), ("/fs-fix/x", False)],
)
def test_is_stage_command(token: str, command: bool) -> None:
    """``is_stage_command``: "<tok> do X" opens with a command exactly when the token is one."""
    assert is_stage_command(token) is command
    assert opens_with_stage_command(f"{token} do X") is command


def test_go_whitespace_rules() -> None:
    """Fields split on Unicode White_Space (NBSP) but not on U+001F, as Go's strings.Fields."""
    assert command_instruction("/fs-fix\u00a0do X") == "do X"
    assert not opens_with_stage_command("/fs-fix\x1fdo X")


TITLES = [
    ("acme/widgets#7 comment:2551234567", ("acme/widgets#7", 2551234567)),
    ("acme/widgets#7", ("acme/widgets#7", 0)),
    ("acme/widgets#7 comment:12", ("acme/widgets#7", 12)),
    ("my-org.dev/my-repo.js#123 comment:98765", ("my-org.dev/my-repo.js#123", 98765)),
    ("acme/widgets#7 comment:2551234567 extra", None),
    ("org/repo#7 comment:", None),
    # a review-thread comment's run binds to the item; its id is no issue comment's
    ("acme/widgets#7 review_comment:1456789012", ("acme/widgets#7", 0)),
    ("acme/widgets#7 review_comment:12 extra", None),
    ("acme/widgets#7 Review_comment:12", None),
]


@pytest.mark.parametrize(("title", "parsed"), TITLES, ids=[t_[0] for t_ in TITLES])
def test_run_name_parsing(title: str, parsed: tuple[str, int] | None) -> None:
    """Run-name parsing (ids need 64-bit integers)."""
    assert parse_title(title) == parsed


@pytest.mark.parametrize(
    "title",
    [
        "org/repo#7\n",
        "org/repo#07",
        "org/repo#0",
        "#7",
        "org/repo#7 comment:01",
        "org/repo#7 comment:9223372036854775808",
        "org /repo#7",
    ],
)
def test_run_name_parsing_rejects(title: str) -> None:
    """Fullmatch only (no trailing newline), no leading zeros, a 64-bit id, no whitespace in the item half."""
    assert parse_title(title) is None


@pytest.mark.parametrize(
    ("title", "named"),
    [
        ("acme/widgets#7 review_comment:1456789012", 1456789012),
        ("acme/widgets#7 comment:1456789012", 0),
        ("acme/widgets#7", 0),
        ("acme/widgets#7 review_comment:0", 0),
        ("acme/widgets#7 review_comment:9223372036854775808", 0),
    ],
)
def test_review_comment_id_names_only_a_review_comment(title: str, named: int) -> None:
    """docs/adopting.md "The run-name contract": ` review_comment:<id>` names a review comment."""
    assert review_comment_id(title) == named


def test_run_name_parsing_largest_id() -> None:
    """The largest 64-bit id still parses."""
    assert parse_title("org/repo#7 comment:9223372036854775807") == ("org/repo#7", 9223372036854775807)
