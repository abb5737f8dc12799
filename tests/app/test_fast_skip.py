"""Issue 33: the receipt skip on the standard library decides as the full pre-flight does.

``fast_skip`` (docs/architecture.md "Fast skip") runs in-process here against the simulator on
127.0.0.1, with the environment a runner gives the container; its verdict is compared with the
full pre-flight's (``run_preflight`` over ``GitHubForge``) on the same world.  It may leave a
decision to the full path, never skip where the full path would not.  The subprocess half (what
the skip imports) is ``tests/app/test_skip_imports.py``.

Issue 45: the fast skip decides the unsigned form (here, under ``allow_unsigned_receipts``); a
signed receipt listing the run is left to the full path, which reads its proof.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.gha import Console
from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.action.cancel import Cancellation
from fullsend.app.action.facts import PreflightFacts
from fullsend.app.action.fastskip import fast_skip
from fullsend.app.action.finish import RunOutcome, outputs_of, render_summary
from fullsend.app.action.outputs import ActionOutcome
from fullsend.app.action.preflight import run_preflight
from fullsend.app.action.skipend import skip_outputs, skip_summary
from fullsend.app.timeline import Timeline
from fullsend.core.model import Repo
from fullsend.core.receipt.marker import receipt_body
from fullsend.core.receipt.skips import RULE_HEAD_REVIEWED, RULE_RECEIPT, Skip
from fullsend.errors import ExitCode
from fullsend.simulator.fixtures import (
    JOB_LOGIN,
    ROLE_LOGIN,
    add_follow_up_run,
    genuine_receipt,
    standard_pr_scenario,
)
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import parse_outputs, runner_env

QUEUED_RUN = 33740015299
GENUINE = receipt_body([QUEUED_RUN], "aaa111")


UNSIGNED_ALLOWED = {"allow_unsigned_receipts": "true"}


def _env(tmp_path: Path, sim: GitHubSimulator, fix) -> dict[str, str]:
    """The queued run's environment, the unsigned form allowed; its run record is in ``sim``."""
    add_follow_up_run(sim, run_id=QUEUED_RUN)
    return runner_env(tmp_path, sim, fix, run_id=QUEUED_RUN, inputs=UNSIGNED_ALLOWED)


@pytest.fixture
def world(tmp_path):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        yield sim, fix, _env(tmp_path, sim, fix)


def _fast(env: dict[str, str], cancellation: Cancellation | None = None) -> tuple[object, str]:
    out = io.StringIO()
    result = fast_skip(Console(out), env, cancellation or Cancellation())
    return result, out.getvalue()


def _full(sim: GitHubSimulator, env: dict[str, str], prefetched=None) -> Skip | None:
    facts = PreflightFacts(
        stage="review",
        run_id_raw=str(QUEUED_RUN),
        run_attempt="1",
        repository="org/repo",
        item_number=7,
        job_token=env["INPUT_GITHUB_TOKEN"],
        role_token=env["INPUT_ROLE_TOKEN"],
        minted=True,
        fullsend_dir=str(Path(env["GITHUB_WORKSPACE"]) / ".fullsend"),
        event_name="issue_comment",
        event_payload={"issue": {"number": 7}},
        in_actions=True,
        receipt_issuer=sim.issuer.url,
        workflow_ref=env["GITHUB_WORKFLOW_REF"],
        allow_unsigned_receipts=True,
    )
    forge = GitHubForge(
        Repo("org", "repo"),
        sim.api_url,
        sim.graphql_url,
        facts.job_token,
        facts.role_token,
        SystemClock(),
        prefetched=prefetched,
    )
    return run_preflight(forge, facts, lambda level, msg: None)


Scenario = Callable[[GitHubSimulator], object]
#: (world, whether the full pre-flight skips, whether the fast skip decides it).
SCENARIOS: list[tuple[str, Scenario, bool, bool]] = [
    ("genuine", lambda s: s.add_comment(7, GENUINE, JOB_LOGIN), True, True),
    ("no-receipt", lambda s: s.add_comment(7, "LGTM", "reviewer", user_type="User"), False, False),
    ("by-the-role-app", lambda s: s.add_comment(7, GENUINE, ROLE_LOGIN), False, False),
    ("by-a-human", lambda s: s.add_comment(7, GENUINE, "mallory", user_type="User"), False, False),
    ("human-named-like-the-bot", lambda s: s.add_comment(7, GENUINE, "github-actions", user_type="User"), False, False),
    (
        "edited",
        lambda s: s.add_comment(
            7,
            GENUINE,
            JOB_LOGIN,
            created_at="2026-09-25T10:00:00Z",
            updated_at="2026-09-25T10:05:00Z",
            last_edited_at="2026-09-25T10:05:00Z",
        ),
        False,
        False,
    ),
    (
        "edited-into-a-receipt",
        lambda s: s.edit_comment(int(s.add_comment(7, "working on it", JOB_LOGIN)["id"]), GENUINE),
        False,
        False,
    ),
    ("in-a-code-fence", lambda s: s.add_comment(7, "```\n" + GENUINE + "\n```", JOB_LOGIN), False, False),
    ("quoted-in-other-text", lambda s: s.add_comment(7, "Looks done:\n" + GENUINE, JOB_LOGIN), False, False),
    (
        "trailing-updated-at",
        lambda s: s.add_comment(
            7, GENUINE, JOB_LOGIN, created_at="2026-09-25T10:00:00Z", updated_at="2026-09-25T10:00:01Z"
        ),
        True,
        True,
    ),
    ("other-run-listed", lambda s: s.add_comment(7, receipt_body([QUEUED_RUN + 1], "aaa111"), JOB_LOGIN), False, False),
    (
        "third-page",
        lambda s: (
            [s.add_comment(7, f"remark {i}", "reviewer", user_type="User") for i in range(250)],
            s.add_comment(7, GENUINE, JOB_LOGIN),
        ),
        True,
        True,
    ),
    # GraphQL cannot answer: the full path reads REST; the fast one leaves it to it.
    (
        "graphql-errors",
        lambda s: (s.add_comment(7, GENUINE, JOB_LOGIN), s.graphql_errors(login=JOB_LOGIN)),
        True,
        False,
    ),
    (
        "wrong-shape",
        lambda s: (
            s.add_comment(7, GENUINE, JOB_LOGIN),
            s.graphql_errors({"data": {"viewer": {"login": "github-actions"}, "repository": "x"}}, login=JOB_LOGIN),
        ),
        True,
        False,
    ),
    (
        "role-viewer-fails",
        lambda s: (s.add_comment(7, GENUINE, JOB_LOGIN), s.fail("POST", "/graphql", 502, login=ROLE_LOGIN)),
        True,
        False,
    ),
    (
        "receipt-view-502",
        lambda s: (s.add_comment(7, GENUINE, JOB_LOGIN), s.fail("POST", "/graphql", 502, login=JOB_LOGIN)),
        True,
        False,
    ),
    # A signed receipt: its proof is the full path's to read (PreflightFacts.proof_reads).
    ("signed", lambda s: s.add_comment(7, genuine_receipt(s, [QUEUED_RUN], "aaa111"), JOB_LOGIN), True, False),
]


@pytest.mark.parametrize(
    ("scenario", "full_skips", "fast_skips"), [s[1:] for s in SCENARIOS], ids=[s[0] for s in SCENARIOS]
)
def test_the_fast_skip_skips_only_where_the_full_preflight_does(tmp_path, scenario, full_skips, fast_skips):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        scenario(sim)
        env = _env(tmp_path, sim, fix)
        result, log = _fast(env)
        assert (result.exit_code == 0) is fast_skips, log
        if not fast_skips:
            assert result.exit_code is None and log.count("::add-mask::") == 2 and "::warning" not in log
            assert not Path(env["GITHUB_OUTPUT"]).exists()  # nothing written: the full path writes it all
    with GitHubSimulator() as sim:  # the same world, fresh (a fault fires once)
        fix = standard_pr_scenario(sim)
        scenario(sim)
        assert (_full(sim, _env(tmp_path, sim, fix)) is not None) is full_skips


def test_a_skip_sends_both_queries_at_once_and_writes_what_the_lifecycle_writes(world):
    sim, fix, env = world
    sim.add_comment(7, GENUINE, JOB_LOGIN)
    role_asked = threading.Event()
    both_in_flight = threading.Event()
    sim.on_request(lambda r: r.path == "/graphql" and r.login == ROLE_LOGIN, lambda s: role_asked.set())

    def hold_the_receipt_view(s: GitHubSimulator) -> None:  # its answer leaves only once the role's came in
        if role_asked.wait(10):
            both_in_flight.set()

    sim.on_request(lambda r: r.path == "/graphql" and r.login == JOB_LOGIN, hold_the_receipt_view)
    result, log = _fast(env)
    assert result.exit_code == 0 and both_in_flight.is_set()
    assert sorted(r.login for r in sim.requests) == sorted([JOB_LOGIN, ROLE_LOGIN])  # nothing else was sent
    # (the fast skip reads no proof: it decides the unsigned form only)
    outputs = parse_outputs(Path(env["GITHUB_OUTPUT"]).read_text())
    assert outputs["outcome"] == "skipped" and outputs["skip_reason"] == "receipt" and outputs["steers"] == "0"
    assert "This update was already absorbed by the run in flight (follow-up run 33740015299)" in log
    assert log.rstrip().endswith("Outcome: skipped (receipt)")
    masked = [line for line in log.splitlines() if not line.startswith("::add-mask::")]
    assert not any(fix.job_token in line or fix.role_token in line for line in masked)
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    assert "⏭️ skipped" in summary and "`receipt-lists-my-run`" in summary and "/issues/7#issuecomment-" not in summary


def test_answers_already_read_are_not_sent_again_by_the_full_preflight(world):
    sim, _, env = world
    sim.add_comment(7, "LGTM", "reviewer", user_type="User")
    result, _ = _fast(env)
    assert result.exit_code is None and set(result.prefetched) == {"job", "role"}
    sim.reset_requests()
    assert _full(sim, env, prefetched=result.prefetched) is None
    assert sim.request_count("POST", "/graphql") == 0  # the receipt view and the role's viewer, reused


def test_a_signal_ends_the_wait_and_leaves_the_run_to_the_full_path(world):
    sim, _, env = world
    sim.add_comment(7, GENUINE, JOB_LOGIN)
    cancellation, released = Cancellation(), threading.Event()
    sim.on_request(
        lambda r: r.path == "/graphql" and r.login == JOB_LOGIN,
        lambda s: (cancellation.cancel("SIGTERM"), released.wait(10)),
    )
    try:
        result, log = _fast(env, cancellation)
    finally:
        released.set()
    assert result.exit_code is None and "Outcome" not in log


def test_a_manual_rerun_sends_nothing_and_is_left_to_the_full_path(world):
    sim, _, env = world
    sim.add_comment(7, GENUINE, JOB_LOGIN)
    sim.reset_requests()
    result, log = _fast({**env, "GITHUB_RUN_ATTEMPT": "2"})
    assert result.exit_code is None and sim.requests == [] and "re-run" not in log


@pytest.mark.parametrize(
    "inputs",
    [
        {"prompt": ""},
        {"runtime": "gpt"},
        {"max_steers": "-1"},
        {"item": "007x"},
        {"agent_cli": "/nonexistent/agent"},
        {"mint_url": "https://mint.example"},
        {"steer_enabled": "yes"},
        {"agent_args": "--output-format=json"},
        {"allow_unsigned_receipts": "yes"},
        {"receipt_issuer": "http://token.example"},
    ],
)
def test_bad_or_unusual_input_sends_nothing_and_is_left_to_the_full_validation(tmp_path, inputs):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        sim.add_comment(7, GENUINE, JOB_LOGIN)
        sim.reset_requests()
        result, _ = _fast(runner_env(tmp_path, sim, fix, run_id=QUEUED_RUN, inputs=inputs))
        assert result.exit_code is None and sim.requests == []


def test_the_skip_summary_and_outputs_are_the_lifecycle_ones():
    at = datetime(2026, 9, 25, 10, 0, 5, tzinfo=UTC)
    for url in ("https://github.example/org/repo/issues/7#issuecomment-5", ""):
        skip = Skip(RULE_RECEIPT, f"receipt comment 5 lists run {QUEUED_RUN}", url)
        timeline = Timeline()
        timeline.add(at, "skip", skip.reason, rule_id=skip.rule_id)
        outcome = RunOutcome(
            ActionOutcome.SKIPPED, ExitCode.OK, skip_reason="receipt", skip_receipt_url=url, duration_s=0.26
        )
        link = "[org/repo#7](https://github.example/org/repo/issues/7)"
        assert skip_summary("review", link, "receipt", skip, at, 0.26) == render_summary(
            outcome, "review", link, timeline
        )
        assert skip_outputs("receipt", 0.26) == outputs_of(outcome)


def test_the_head_reviewed_skip_summary_is_the_lifecycle_one():
    at = datetime(2026, 9, 25, 10, 0, 5, tzinfo=UTC)
    skip = Skip(RULE_HEAD_REVIEWED, "the review App already reviewed aaa111 after this run was created")
    timeline = Timeline()
    timeline.add(at, "skip", skip.reason, rule_id=skip.rule_id)
    outcome = RunOutcome(ActionOutcome.SKIPPED, ExitCode.OK, skip_reason="head-reviewed", duration_s=1.4)
    link = "[org/repo#7](https://github.example/org/repo/issues/7)"
    assert skip_summary("review", link, "head-reviewed", skip, at, 1.4) == render_summary(
        outcome, "review", link, timeline
    )
    assert skip_outputs("head-reviewed", 1.4) == outputs_of(outcome)


def test_the_plain_reader_has_the_choices_and_bounds_of_the_full_validation():
    from typing import get_args

    from fullsend.app.action.plaininputs import BOUNDS, CHOICES
    from fullsend.errors import InputError
    from fullsend.settings import Inputs, load_inputs

    for name, allowed in CHOICES.items():
        assert set(allowed) <= set(get_args(Inputs.model_fields[name].annotation)), name
    assert CHOICES["stage"] == get_args(Inputs.model_fields["stage"].annotation)
    for name, (low, high) in BOUNDS.items():
        for value in (low, high):
            assert getattr(load_inputs({"INPUT_STAGE": "review", f"INPUT_{name.upper()}": str(value)}), name) == value
        for value in (low - 1, high + 1):
            with pytest.raises(InputError):
                load_inputs({"INPUT_STAGE": "review", f"INPUT_{name.upper()}": str(value)})
