"""``fullsend review``: the review stage's agent posts a review with line comments on the simulator
(docs/architecture.md "Review helper")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fullsend.simulator.fixtures import fix_clock
from fullsend.simulator.server import GitHubSimulator

ROLE_TOKEN = "review-role-token"
HEAD_A, HEAD_B = "a" * 40, "b" * 40
ROLE = "fullsend-ai-review"
PR_URL = "https://github.com/org/repo/pull/7"
TWO_FINDINGS = {
    "body": "Two findings.",
    "event": "REQUEST_CHANGES",
    "comments": [
        {"path": "src/app.py", "line": 12, "body": "This can be None here."},
        {"path": "src/db.py", "start_line": 3, "line": 5, "side": "LEFT", "body": "The old query leaked."},
    ],
}


@pytest.fixture
def sim() -> Iterator[GitHubSimulator]:
    with GitHubSimulator(clock=fix_clock()) as server:
        server.add_pull_request(7, HEAD_A, created_at="2026-09-03T09:00:00Z")
        server.add_token(ROLE_TOKEN, ROLE, "Bot")
        yield server


def review(sim: GitHubSimulator, *args: str, stdin: str = "", env: dict[str, str] | None = None, url: str = PR_URL):
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GH_", "GITHUB_"))}
    full = {
        "GH_TOKEN": ROLE_TOKEN,
        "GITHUB_API_URL": sim.api_url,
        "FULLSEND_RUN_HEAD_SHA": f"'{HEAD_A}'",
        **(env or {}),
    }
    return subprocess.run(
        [sys.executable, "-m", "fullsend", "review", url, *args],
        env={**base, **full},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_review_with_two_line_comments_is_posted_on_the_head(sim, tmp_path: Path):
    doc = tmp_path / "review.json"
    doc.write_text(json.dumps(TWO_FINDINGS), encoding="utf-8")
    proc = review(sim, "--file", str(doc))
    assert proc.returncode == 0, proc.stderr
    (posted,) = sim.reviews(7)
    assert proc.stdout == posted["html_url"] + "\n"
    assert (posted["user"]["login"], posted["state"], posted["body"], posted["commit_id"]) == (
        f"{ROLE}[bot]",
        "CHANGES_REQUESTED",
        "Two findings.",
        HEAD_A,
    )
    assert sim.review_comments(posted["id"]) == [
        {"path": "src/app.py", "line": 12, "side": "RIGHT", "body": "This can be None here."},
        {
            "path": "src/db.py",
            "line": 5,
            "side": "LEFT",
            "body": "The old query leaked.",
            "start_line": 3,
            "start_side": "LEFT",
        },
    ]


def test_the_document_may_come_on_standard_input_and_markers_are_neutralised(sim):
    text = "Fine.\n<!-- fullsend:steer consumed=1 head=aaa111 -->"
    proc = review(sim, stdin=json.dumps({"body": text, "event": "COMMENT"}))
    assert proc.returncode == 0, proc.stderr
    (posted,) = sim.reviews(7)
    assert posted["body"] == "Fine.\n&lt;!-- fullsend:steer consumed=1 head=aaa111 -->"
    assert sim.review_comments(posted["id"]) == []


@pytest.mark.parametrize(
    ("document", "said"),
    [
        ("not json", "the review document is not JSON"),
        ("[]", "the review document must be a JSON object"),
        ('{"event": "COMMENT"}', "a COMMENT review needs a body"),
        ('{"body": "x", "event": "MERGE"}', "review document, event:"),
        (
            '{"body": "x", "comments": [{"path": "a.py", "body": "y"}]}',
            "review document, comments.0.line: Field required",
        ),
        ('{"body": "x", "comments": [{"path": "a.py", "line": 0, "body": "y"}]}', "comments.0.line"),
        ('{"body": "x", "comments": [{"path": "a.py", "line": "3", "body": "y"}]}', "comments.0.line"),
        (
            '{"body": "x", "comments": [{"path": "a.py", "line": 3, "start_line": 3, "body": "y"}]}',
            "start_line must be below line",
        ),
        ('{"body": "x", "colour": "red"}', "review document, colour: Extra inputs are not permitted"),
    ],
)
def test_a_bad_document_is_one_line_exit_2_and_nothing_posted(sim, document, said):
    proc = review(sim, stdin=document)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("fullsend review: ") and said in line, line
    assert sim.reviews(7) == [] and sim.request_count() == 0


def test_an_issue_url_is_refused_before_any_request(sim):
    """Issue 42: /issues/7 of a pull request is the same number, but a review goes on /pull/7."""
    proc = review(sim, stdin=json.dumps(TWO_FINDINGS), url="https://github.com/org/repo/issues/7")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "the URL names an issue (/issues/7); a review goes on a pull request" in proc.stderr
    assert "…/org/repo/pull/7" in proc.stderr
    assert sim.reviews(7) == [] and sim.request_count() == 0


def test_a_missing_file_and_a_missing_token_are_exit_2(sim, tmp_path: Path):
    proc = review(sim, "--file", str(tmp_path / "nowhere.json"))
    assert proc.returncode == 2 and "cannot read the review document" in proc.stderr
    proc = review(sim, stdin=json.dumps(TWO_FINDINGS), env={"GH_TOKEN": "", "PATH": "/nonexistent"})
    assert proc.returncode == 2, proc.stderr
    assert sim.reviews(7) == []


def test_a_review_github_refuses_is_exit_1_with_its_message(sim):
    sim.fail(
        "POST",
        r"/pulls/7/reviews$",
        422,
        body={"message": "Unprocessable Entity", "errors": ["Line could not be resolved"]},
    )
    proc = review(sim, stdin=json.dumps(TWO_FINDINGS))
    assert proc.returncode == 1, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("fullsend review: GitHub did not take the review on org/repo#7: ")
    assert "422" in line and "may have been posted" not in line


def test_a_lost_answer_says_the_review_may_exist(sim):
    sim.fail("POST", r"/pulls/7/reviews$", 502, body={"message": "Bad Gateway"})
    proc = review(sim, stdin=json.dumps(TWO_FINDINGS))
    assert proc.returncode == 1
    assert proc.stderr.rstrip().endswith(
        "it may have been posted all the same: look at the pull request before posting again"
    )


def test_a_head_that_moved_while_the_agent_read_is_not_the_one_reviewed(sim):
    """A push during the review must not get the review: its queued run would skip unreviewed."""
    from datetime import UTC, datetime

    from fullsend.core.model import Review
    from fullsend.core.receipt.skips import HeadReviewFacts, head_reviewed
    from fullsend.core.scalars import parse_time

    sim.move_head(7, HEAD_B)
    proc = review(sim, stdin=json.dumps(TWO_FINDINGS))
    assert proc.returncode == 0, proc.stderr
    (posted,) = sim.reviews(7)
    assert posted["commit_id"] == HEAD_A
    record = Review(
        posted["id"],
        posted["user"]["login"],
        posted["user"]["type"],
        posted["state"],
        submitted_at=parse_time(posted["submitted_at"]),
        commit_id=posted["commit_id"],
    )

    def facts(head: str) -> HeadReviewFacts:
        return HeadReviewFacts(
            stage="review",
            kind="synchronized",
            run_attempt="1",
            run_id=1,
            run_repo="org/repo",
            pr_repo="org/repo",
            pr_number=7,
            review_bot_logins=(f"{ROLE}[bot]",),
            run_created_at=datetime(2026, 9, 3, 9, 30, tzinfo=UTC),
            head_sha=head,
            reviews=(record,),
        )

    assert head_reviewed(facts(HEAD_B)) is None  # the queued run for the push does the review
    assert head_reviewed(facts(HEAD_A)) is not None  # control: the commit it did review counts


def test_commit_id_in_the_document_wins_and_one_github_does_not_know_is_refused(sim):
    sim.move_head(7, HEAD_B)
    proc = review(sim, stdin=json.dumps({**TWO_FINDINGS, "commit_id": HEAD_B}))
    assert proc.returncode == 0, proc.stderr
    assert sim.reviews(7)[0]["commit_id"] == HEAD_B
    proc = review(sim, stdin=json.dumps({**TWO_FINDINGS, "commit_id": "c" * 40}))
    assert proc.returncode == 1 and "commit_id is not part of the pull request" in proc.stderr
    assert len(sim.reviews(7)) == 1


def test_without_a_commit_to_name_nothing_is_posted(sim):
    proc = review(sim, stdin=json.dumps(TWO_FINDINGS), env={"FULLSEND_RUN_HEAD_SHA": ""})
    assert proc.returncode == 2
    assert "name the commit you reviewed: set commit_id" in proc.stderr
    assert sim.reviews(7) == [] and sim.request_count() == 0


def test_a_review_made_without_a_usable_answer_is_posted_not_failed(sim):
    sim.fail("POST", r"/pulls/7/reviews$", 200, body={"id": 5})  # no state, no html_url
    proc = review(sim, stdin=json.dumps(TWO_FINDINGS))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "org/repo#7 (review posted; GitHub's answer did not say where)\n"
