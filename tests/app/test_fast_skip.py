"""The receipt skip before the application is loaded (docs/architecture.md "Fast skip").

``fast_skip`` runs in-process here against the simulator on 127.0.0.1, with the environment a
runner gives the container: the real pre-flight over the real forge, each world's expected
decision, what a skip writes, and what it hands the lifecycle when it does not skip.  The
subprocess half (what the skip imports) is ``tests/app/test_skip_imports.py``.

Issue 45: a signed receipt's proof (the issuer's keys, this run's record) is read beside the
receipt query, on the fast path too; the unsigned worlds here run under ``allow_unsigned_receipts``.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from fullsend.adapters.gha import Console
from fullsend.app.action.cancel import Cancellation
from fullsend.app.action.skip.fastskip import fast_skip
from fullsend.core.receipt.marker import receipt_body
from fullsend.errors import InputError
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


def _proof_reads_arrived(sim: GitHubSimulator) -> None:
    """Wait until the receipt's proof reads (the issuer's keys, this run) have been answered."""
    for _ in range(600):
        paths = {r.path for r in sim.requests}
        if {"/_services/token/.well-known/jwks", f"/repos/org/repo/actions/runs/{QUEUED_RUN}"} <= paths:
            return
        threading.Event().wait(0.05)
    raise AssertionError("the proof's reads never arrived")


def _fast(env: dict[str, str], cancellation: Cancellation | None = None) -> tuple[object, str]:
    out = io.StringIO()
    result = fast_skip(Console(out), env, cancellation or Cancellation())
    return result, out.getvalue()


Scenario = Callable[[GitHubSimulator], object]
#: (world, whether the pre-flight skips).
SCENARIOS: list[tuple[str, Scenario, bool]] = [
    ("genuine", lambda s: s.add_comment(7, GENUINE, JOB_LOGIN), True),
    ("no-receipt", lambda s: s.add_comment(7, "LGTM", "reviewer", user_type="User"), False),
    ("by-the-role-app", lambda s: s.add_comment(7, GENUINE, ROLE_LOGIN), False),
    ("by-a-human", lambda s: s.add_comment(7, GENUINE, "mallory", user_type="User"), False),
    ("human-named-like-the-bot", lambda s: s.add_comment(7, GENUINE, "github-actions", user_type="User"), False),
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
    ),
    (
        "edited-into-a-receipt",
        lambda s: s.edit_comment(int(s.add_comment(7, "working on it", JOB_LOGIN)["id"]), GENUINE),
        False,
    ),
    ("in-a-code-fence", lambda s: s.add_comment(7, "```\n" + GENUINE + "\n```", JOB_LOGIN), False),
    ("quoted-in-other-text", lambda s: s.add_comment(7, "Looks done:\n" + GENUINE, JOB_LOGIN), False),
    (
        "trailing-updated-at",
        lambda s: s.add_comment(
            7, GENUINE, JOB_LOGIN, created_at="2026-09-25T10:00:00Z", updated_at="2026-09-25T10:00:01Z"
        ),
        True,
    ),
    ("other-run-listed", lambda s: s.add_comment(7, receipt_body([QUEUED_RUN + 1], "aaa111"), JOB_LOGIN), False),
    (
        "third-page",
        lambda s: (
            [s.add_comment(7, f"remark {i}", "reviewer", user_type="User") for i in range(250)],
            s.add_comment(7, GENUINE, JOB_LOGIN),
        ),
        True,
    ),
    # GraphQL cannot answer: the pre-flight reads REST, on the fast path too (it is the same one).
    (
        "graphql-errors",
        lambda s: (s.add_comment(7, GENUINE, JOB_LOGIN), s.graphql_errors(login=JOB_LOGIN)),
        True,
    ),
    (
        "wrong-shape",
        lambda s: (
            s.add_comment(7, GENUINE, JOB_LOGIN),
            s.graphql_errors({"data": {"viewer": {"login": "github-actions"}, "repository": "x"}}, login=JOB_LOGIN),
        ),
        True,
    ),
    (
        "role-viewer-fails",
        lambda s: (s.add_comment(7, GENUINE, JOB_LOGIN), s.fail("POST", "/graphql", 502, login=ROLE_LOGIN)),
        True,
    ),
    (
        "receipt-view-502",
        lambda s: (s.add_comment(7, GENUINE, JOB_LOGIN), s.fail("POST", "/graphql", 502, login=JOB_LOGIN)),
        True,
    ),
    # Issue 45: a signed receipt, its proof read beside the receipt query and held.
    ("signed", lambda s: s.add_comment(7, genuine_receipt(s, [QUEUED_RUN], "aaa111"), JOB_LOGIN), True),
    (
        "signed-for-another-item",
        lambda s: s.add_comment(7, genuine_receipt(s, [QUEUED_RUN], "aaa111", item=8), JOB_LOGIN),
        False,
    ),
]


@pytest.mark.parametrize(("scenario", "skips"), [s[1:] for s in SCENARIOS], ids=[s[0] for s in SCENARIOS])
def test_the_fast_skip_decides_each_world_and_hands_on_its_forge(tmp_path, scenario, skips):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        scenario(sim)
        env = _env(tmp_path, sim, fix)
        result, log = _fast(env)
    assert (result.exit_code == 0) is skips, log
    if not skips:  # nothing said or written: the lifecycle validates, then goes on with the forge
        assert result.exit_code is None and log.count("::add-mask::") == 2 and "::warning" not in log
        assert not Path(env["GITHUB_OUTPUT"]).exists()
        assert result.forge is not None and result.preflight_done


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
    # nothing else was sent but the proof's reads beside them (issue 45): the issuer's keys, this run
    _proof_reads_arrived(sim)
    sent = sorted((r.method, r.path, r.login) for r in sim.requests)
    assert sent == sorted(
        [
            ("POST", "/graphql", JOB_LOGIN),
            ("POST", "/graphql", ROLE_LOGIN),
            ("GET", "/_services/token/.well-known/jwks", ""),
            ("GET", f"/repos/org/repo/actions/runs/{QUEUED_RUN}", JOB_LOGIN),
        ]
    )
    outputs = parse_outputs(Path(env["GITHUB_OUTPUT"]).read_text())
    assert outputs["outcome"] == "skipped" and outputs["skip_reason"] == "receipt" and outputs["steers"] == "0"
    assert "This update was already absorbed by the run in flight (follow-up run 33740015299)" in log
    assert log.rstrip().endswith("Outcome: skipped (receipt)")
    masked = [line for line in log.splitlines() if not line.startswith("::add-mask::")]
    assert not any(fix.job_token in line or fix.role_token in line for line in masked)
    summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text()
    assert "⏭️ skipped" in summary and "`receipt-lists-my-run`" in summary and "/issues/7#issuecomment-" not in summary


def test_a_run_that_works_goes_on_with_the_forge_and_sends_no_read_twice(world):
    sim, _, env = world
    sim.add_comment(7, "LGTM", "reviewer", user_type="User")
    result, _ = _fast(env)
    assert result.exit_code is None and result.forge is not None and result.preflight_done
    _proof_reads_arrived(sim)  # sent beside the receipt query, not waited for (no receipt): let them land
    assert result.relay is not None and result.relay.lines == [  # held for the lifecycle's log
        (
            "info",
            'Head-reviewed skip not applied: event "comment_added" is not one a duplicate review comes from [head-reviewed]',
        )
    ]
    sim.reset_requests()
    assert result.forge.viewer_login("role") == ROLE_LOGIN  # resolved beside the receipt view, kept
    assert sim.requests == []


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
    assert result.forge is not None and not result.preflight_done  # the lifecycle cancels with it


def test_a_manual_rerun_sends_nothing_and_is_left_to_the_full_path(world):
    sim, _, env = world
    sim.add_comment(7, GENUINE, JOB_LOGIN)
    sim.reset_requests()
    result, log = _fast({**env, "GITHUB_RUN_ATTEMPT": "2"})
    assert result.exit_code is None and sim.requests == [] and "re-run" not in log


@pytest.mark.parametrize(
    ("inputs", "named"),
    [
        ({"prompt": ""}, "prompt"),
        ({"runtime": "gpt"}, "runtime"),
        ({"max_steers": "-1"}, "max_steers"),
        ({"item": "007x"}, "item"),
        ({"agent_cli": "/nonexistent/agent"}, "agent_cli"),
        ({"steer_enabled": "yes"}, "steer_enabled"),
        ({"agent_args": "--output-format=json"}, "agent_args"),
        ({"harness": "../h.yml"}, "harness"),
        ({"allow_unsigned_receipts": "yes"}, "allow_unsigned_receipts"),
        ({"receipt_issuer": "http://token.example"}, "receipt_issuer"),
    ],
)
def test_bad_input_is_the_lifecycles_input_error_before_any_request(tmp_path, inputs, named):
    """One input table: the fast skip reads the inputs with ``settings.load_inputs`` and
    ``plan.build_plan``, so bad input raises what the lifecycle raises (exit 2, naming the input)."""
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        sim.add_comment(7, GENUINE, JOB_LOGIN)
        sim.reset_requests()
        with pytest.raises(InputError) as caught:
            _fast(runner_env(tmp_path, sim, fix, run_id=QUEUED_RUN, inputs=inputs))
        assert caught.value.input_name == named and sim.requests == []


@pytest.mark.parametrize(
    ("inputs", "env"),
    [
        ({"mint_url": "https://mint.example", "role": "review"}, {}),  # the mint comes first
        ({}, {"GITHUB_ACTOR": "dependabot[bot]"}),  # a restricted run: its line comes first
    ],
)
def test_a_mint_or_a_restricted_run_sends_nothing_and_hands_on_the_plan(tmp_path, inputs, env):
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        sim.add_comment(7, GENUINE, JOB_LOGIN)
        sim.reset_requests()
        result, log = _fast({**runner_env(tmp_path, sim, fix, run_id=QUEUED_RUN, inputs=inputs), **env})
        assert result.exit_code is None and result.forge is None and sim.requests == []
    assert result.plan is not None and result.plan.item == 7 and "Outcome" not in log


#: The runner's environment, as given: (what it sets, whether the run skips on the genuine receipt).
ENVIRONMENTS: dict[str, tuple[Callable[[GitHubSimulator, object], dict[str, str]], bool]] = {
    "tokens-with-whitespace": (
        lambda s, f: {"INPUT_GITHUB_TOKEN": f.job_token + " \n", "INPUT_ROLE_TOKEN": " " + f.role_token},
        True,
    ),
    "role-token-is-the-job-token": (lambda s, f: {"INPUT_ROLE_TOKEN": f.job_token}, False),  # no swap, no receipt
    "run-id-with-spaces": (lambda s, f: {"GITHUB_RUN_ID": f" {QUEUED_RUN} "}, False),  # no run id
    "run-id-in-other-digits": (
        lambda s, f: {"GITHUB_RUN_ID": str(QUEUED_RUN).translate(str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"))},
        False,
    ),
    "repository-in-other-case": (lambda s, f: {"GITHUB_REPOSITORY": "ORG/Repo"}, True),
    "graphql-url-trailing-slash": (lambda s, f: {"GITHUB_GRAPHQL_URL": s.graphql_url + "/"}, True),
}


@pytest.mark.parametrize("name", list(ENVIRONMENTS))
def test_the_runner_environment_as_given(tmp_path, name):
    given, skips = ENVIRONMENTS[name]
    with GitHubSimulator() as sim:
        fix = standard_pr_scenario(sim)
        add_follow_up_run(sim, run_id=QUEUED_RUN)
        sim.add_comment(7, genuine_receipt(sim, [QUEUED_RUN], "aaa111"), JOB_LOGIN)  # signed (issue 45)
        result, log = _fast({**runner_env(tmp_path, sim, fix, run_id=QUEUED_RUN), **given(sim, fix)})
    assert (result.exit_code == 0) is skips, log
