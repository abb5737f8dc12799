"""Issue 18 acceptance: for any answer shape the simulator can be made to return, on any endpoint the
action calls, the action exits with its documented codes and outputs, never a traceback, never a
receipt for an unacknowledged run, never two receipts.

Each example runs the real lifecycle in process against the simulator (the scripted agent a real
subprocess; ``tests.support.fault_harness``) with one authorized follow-up waiting, and one shape
fault (``fullsend.simulator.faults``: a field missing, ``null``, of another JSON type, a list for
an object, or the whole body replaced) on one endpoint, once or on every answer.  Then issue 9's
invariant (``check_invariant``) and the checks above.  Each example costs a few seconds, so the
default profile draws a handful; ``HYPOTHESIS_PROFILE=ci`` draws more.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fullsend.app.action.finish import RunOutcome, outputs_of
from fullsend.app.action.outputs import ActionOutcome
from fullsend.errors import ExitCode
from fullsend.simulator.faults import MISSING, replace_body, set_field
from fullsend.simulator.fixtures import FIX_RUN_ID, JOB_LOGIN, ROLE_LOGIN, add_comment_follow_up
from fullsend.simulator.server import GitHubSimulator
from tests.support.fault_harness import check_invariant, new_scenario, receipts, run_in_process, runner_env

EXAMPLES = {"dev": 8, "ci": 24, "slow": 150}.get(os.environ.get("HYPOTHESIS_PROFILE", "dev"), 8)
OUTPUTS = set(outputs_of(RunOutcome(ActionOutcome.FAILED, ExitCode.FAILED)))  # every documented output, in action.yml
COMMAND = "/fs-review please re-check the migration"
_RUNS = itertools.count()

#: (method, path regex, token login, the fields its answer carries that the action reads)
ENDPOINTS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    (
        "GET",
        rf"/actions/runs/{FIX_RUN_ID}$",
        JOB_LOGIN,
        ("id", "path", "event", "created_at", "display_title", "referenced_workflows", "pull_requests", "run_attempt"),
    ),
    ("GET", rf"/actions/runs/{FIX_RUN_ID}/jobs$", JOB_LOGIN, ("jobs", "total_count", "*.name", "*.status", "*.id")),
    (
        "GET",
        r"/actions/workflows/fullsend\.yml/runs$",
        JOB_LOGIN,
        ("workflow_runs", "*.id", "*.created_at", "*.event", "*.pull_requests", "*.actor", "*.display_title"),
    ),
    ("GET", r"/actions/runs/\d+/jobs$", JOB_LOGIN, ("jobs", "*.conclusion", "*.name", "*.run_attempt")),
    ("GET", r"/pulls/7$", ROLE_LOGIN, ("head", "head.sha", "number", "html_url")),
    ("GET", r"/issues/7$", ROLE_LOGIN, ("labels", "title", "number", "pull_request", "created_at")),
    ("GET", r"/issues/7/comments$", ROLE_LOGIN, ("*.id", "*.user", "*.user.type", "*.body", "*.created_at")),
    ("GET", r"/issues/7/comments$", JOB_LOGIN, ("*.id", "*.user", "*.user.login", "*.updated_at", "*.body")),
    ("GET", r"/pulls/7/reviews$", ROLE_LOGIN, ("*.id", "*.user", "*.state", "*.submitted_at")),
    ("POST", r"/issues/7/comments$", ROLE_LOGIN, ("id", "html_url", "user", "created_at")),
    ("POST", r"/issues/7/comments$", JOB_LOGIN, ("id", "html_url", "user", "created_at", "body")),
    ("PATCH", r"/issues/comments/\d+$", ROLE_LOGIN, ("id", "html_url", "updated_at")),
    ("POST", r"^/graphql$", JOB_LOGIN, ("data", "data.viewer", "data.viewer.login", "data.repository", "errors")),
    ("POST", r"^/graphql$", ROLE_LOGIN, ("data", "data.viewer", "data.viewer.login", "errors")),
)

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


@dataclass(frozen=True)
class Shape:
    """One shape fault: where, what, how often.  ``value`` is ``MISSING`` for a dropped field."""

    method: str
    path: str
    login: str
    field: str  # "" = the whole body is replaced by ``value``
    value: Any
    every: bool

    def arm(self, sim: GitHubSimulator) -> None:
        transform = replace_body(self.value) if not self.field else set_field(self.field, self.value)
        sim.mutate(self.method, self.path, transform, times=None if self.every else 1, login=self.login)


@st.composite
def shapes(draw: st.DrawFn) -> Shape:
    method, path, login, fields = draw(st.sampled_from(ENDPOINTS))
    field = draw(st.sampled_from(("", *fields)))
    wrong = st.sampled_from([MISSING, None, [], {}, "x", 0, -1, True, 2**53, [{}]]) | JSON
    value = draw(wrong if field else st.sampled_from([[], {}, "x", None, 5, [{}], {"data": "x"}]) | JSON)
    return Shape(method, path, login, field, value, draw(st.booleans()))


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(shape=shapes())
def test_no_answer_shape_crashes_the_action_or_forges_a_receipt(shape: Shape, tmp_path: Path) -> None:
    tmp = tmp_path / f"example-{next(_RUNS)}"
    with GitHubSimulator() as sim:
        fix = new_scenario(sim)
        follow_up = int(add_comment_follow_up(sim, COMMAND)[1]["id"])
        shape.arm(sim)
        result = run_in_process(runner_env(tmp, sim, fix, fix.my_run_id), tmp)
        assert "Traceback" not in result.console, result.console
        assert result.exit_code in (0, 1), result.console
        assert set(result.outputs) == OUTPUTS and result.outputs["outcome"] in ("succeeded", "failed", "skipped")
        posted = receipts(sim, fix)
        assert len(posted.comments) <= 1, "two receipts"
        assert posted.run_ids <= result.acked_run_ids(), "a receipt for an unacknowledged run"
        check_invariant(result, sim, fix, [follow_up], tmp)
