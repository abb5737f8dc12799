"""The silent guards of the receipt check, and the pre-flight running once, before the start
comment and the pre-script (docs/architecture.md "Pre-flight skips")."""

from __future__ import annotations

import ast
import inspect

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.action import lifecycle as run_module
from fullsend.app.action.skip.facts import PreflightFacts
from fullsend.app.action.skip.receipt import check_receipt
from fullsend.core.model import Repo
from fullsend.core.receipt.marker import receipt_body
from fullsend.simulator.fixtures import JOB_LOGIN, JOB_TOKEN, ROLE_TOKEN, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator

QUEUED = 33740015299


def _facts(tmp_path, **changes) -> PreflightFacts:
    base = dict(
        stage="review",
        run_id_raw=str(QUEUED),
        run_attempt="1",
        repository="org/repo",
        item_number=7,
        job_token=JOB_TOKEN,
        role_token=ROLE_TOKEN,
        minted=True,
        fullsend_dir=str(tmp_path),
        in_actions=True,
        allow_unsigned_receipts=True,  # the guards' wiring, on the unsigned form (issue 45: under its input)
    )
    base.update(changes)
    return PreflightFacts(**base)


def _check(tmp_path, **changes):
    lines: list[tuple[str, str]] = []
    with GitHubSimulator() as sim:
        standard_pr_scenario(sim)
        sim.add_comment(7, receipt_body([QUEUED], "aaa111"), JOB_LOGIN)
        sim.reset_requests()
        forge = GitHubForge(Repo("org", "repo"), sim.api_url, sim.graphql_url, JOB_TOKEN, ROLE_TOKEN, SystemClock())
        skip = check_receipt(forge, _facts(tmp_path, **changes), lambda lv, m: lines.append((lv, m)))
        return skip, lines, sim.request_count()


def test_the_genuine_receipt_is_found_when_no_guard_applies(tmp_path):
    skip, _, _ = _check(tmp_path)
    assert skip is not None


def test_41_outside_github_actions_is_silent_and_makes_no_call(tmp_path):
    assert _check(tmp_path, in_actions=False) == (None, [], 0)


def test_42_no_receipt_token_is_silent_and_makes_no_call(tmp_path):
    assert _check(tmp_path, minted=False, role_token="") == (None, [], 0)


def _call_lines(function, name: str) -> list[int]:
    tree = ast.parse(inspect.getsource(function))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    return sorted(c.lineno for c in calls if getattr(c.func, "id", getattr(c.func, "attr", "")) == name)


def test_141_the_preflight_runs_once_before_the_start_comment_and_the_pre_script():
    assert len(_call_lines(run_module._steps, "run_preflight")) == 1  # the steps of run_action, in order
    (preflight,) = _call_lines(run_module._steps, "run_preflight")
    # The start comment and the pre-script (inside ActionRun.execute) are set up in _work, which
    # _steps calls only after the pre-flight (issue 20: a skip never imports that side).
    assert preflight < min(_call_lines(run_module._steps, "_work"))
    assert _call_lines(run_module._steps, "_status_comment") == _call_lines(run_module._steps, "ActionRun") == []
    assert _call_lines(run_module._work, "ActionRun") and _call_lines(run_module._work, "_agent_part")
    assert _call_lines(run_module._agent_part, "_status_comment")
