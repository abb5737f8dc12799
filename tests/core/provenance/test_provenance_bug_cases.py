"""Past provenance bugs on the acme/widget scenarios: the verdicts and bindings (the pure part).

What these cases also ask of the watcher loop (one steer per poll, consumed sets, logging a
skipped run once, no permission-API request, own-output exclusion in the delta) is tested there.
"""

from __future__ import annotations

import dataclasses

import pytest

from fullsend.core.model import Job, WorkflowRun
from fullsend.core.provenance.binding import (
    authorizations,
    bind_triggers,
    bound_to_item,
    command_instruction,
    observed_authorizations,
    parse_title,
)
from fullsend.core.provenance.verdicts import judge_jobs, judge_record
from fullsend.core.watch.start import StartRefused, check_own_run, my_run_facts
from tests.core.provenance import prov_records as rest
from tests.core.provenance.provenance_world import ACME_MY_RUN_JSON, REUSABLE, acme_run, comment, jobs, judge, me_acme

ME = me_acme()
ACME_DAY = "2026-09-18"
ROUTE_OK = ("dispatch / Route", "completed", "success")


def test_acme_fixture_start() -> None:
    """The acme/widget MY_RUN starts with route "dispatch / Route", stage "dispatch / Review", title binding on."""
    assert (ME.route_job_name, ME.stage_job_name, ME.run_name, ME.item_number) == (
        "dispatch / Route",
        "dispatch / Review",
        "acme/widget#42",
        42,
    )


# --- a superseded run keeps its Route authority ----------------------------------------------------


def _superseded_runs(route_1001: str = "success") -> tuple[WorkflowRun, list[Job], WorkflowRun, list[Job]]:
    r1001 = acme_run(
        id=1001,
        event="issue_comment",
        actor="user-A",
        created_at="12:01:00Z",
        status="completed",
        conclusion="cancelled",
        display_title="acme/widget#42 comment:9001",
    )
    j1001 = jobs(("dispatch / Route", "completed", route_1001), ("dispatch / Review", "completed", "cancelled"))
    r1002 = acme_run(
        id=1002,
        event="pull_request_target",
        actor="user-B",
        created_at="12:01:04Z",
        status="queued",
        conclusion=None,
        display_title="acme/widget#42",
        pull_requests=[{"number": 42}],
    )
    j1002 = [
        rest.job({"id": 7, "name": "dispatch / Route", "conclusion": "success"}),
        rest.job({"id": 8, "name": "dispatch / Review", "status": "queued", "conclusion": None}),
    ]
    return r1001, j1001, r1002, j1002


COMMENT_9001 = comment(
    9001, "user-A", "/fs-review please also look at the migration", "12:00:58", "12:00:58", day=ACME_DAY
)


def test_cancelled_run_keeps_its_route_authority() -> None:
    """Both runs accepted (run conclusion ignored); comment 9001 binds exactly to 1001."""
    r1001, j1001, r1002, j1002 = _superseded_runs()
    v1001, v1002 = judge(r1001, j1001, ME), judge(r1002, j1002, ME)
    assert (v1001.outcome, v1002.outcome) == ("accept", "accept")
    batch = [r1001, r1002]
    binding = bind_triggers([COMMENT_9001], authorizations(batch), observed_authorizations([r1001]))
    assert dict(binding.by_comment) == {9001: (1001,)}
    assert binding.unbound == ()
    assert command_instruction(COMMENT_9001.body) == "please also look at the migration"


def test_a_failed_route_rejects_for_good_and_binds_nothing() -> None:
    """1001's Route failed → rejected for good; 9001 binds nothing (stays context)."""
    r1001, j1001, r1002, _j1002 = _superseded_runs(route_1001="failure")
    v1001 = judge(r1001, j1001, ME)
    assert (v1001.outcome, v1001.rule_id, v1001.judged) == ("reject", "route-not-success", True)
    assert judge_record(r1001, ME, set()).observe is True  # still occupies its pairing slot
    batch = [r1002]
    binding = bind_triggers([COMMENT_9001], authorizations(batch), observed_authorizations([r1001]))
    assert dict(binding.by_comment) == {} and binding.unbound == ()


# --- a fork PR's run binds by its title ------------------------------------------------------------


def _fork_run(title: str) -> WorkflowRun:
    return rest.workflow_run(
        {
            "id": 1101,
            "path": ".github/workflows/fullsend.yaml",
            "event": "pull_request_target",
            "run_attempt": 1,
            "status": "completed",
            "created_at": "2026-09-18T12:02:00Z",
            "pull_requests": [],
            "head_repository": {"full_name": "fork-owner/widget"},
            "head_branch": "main",
            "head_sha": "c" * 40,
            "display_title": title,
            "referenced_workflows": [REUSABLE],
        }
    )


def test_fork_run_binds_through_the_title_only() -> None:
    """Empty pull_requests, title "acme/widget#42" → bound and accepted."""
    run = _fork_run("acme/widget#42")
    assert judge(run, jobs(ROUTE_OK, ("dispatch / Review", "queued", None)), ME).outcome == "accept"


@pytest.mark.parametrize("head_sha", ["c" * 40, "a" * 40])
def test_untitled_fork_run_is_never_guessed(head_sha: str) -> None:
    """A PR-titled fork run is rejected `item` (not judged), whatever its head_sha or branch."""
    run = _fork_run("Fix typo in README")
    run = dataclasses.replace(run, head_sha=head_sha)
    verdict = judge_record(run, ME, set())
    assert (verdict.outcome, verdict.rule_id, verdict.judged) == ("reject", "item", False)


# --- contract-shaped titles ------------------------------------------------------------------------

TITLE_VARIANTS = [
    ("a", "acme/widget#42", True),
    ("b", "acme/widget#42 comment:9001", True),
    ("c", "acme/widget#420", False),
    ("d", "acme/widget#4", False),
    ("e", "acme/widget#42  comment:9001", False),
    ("f", "acme/widget#42 Comment:9001", False),
    ("g", "other/repo#42", False),
    ("h", "acme/widget#42 comment:9001 extra", False),
    ("i", "acme/widget#42 comment:0x23", False),
]


@pytest.mark.parametrize(("variant", "title", "bound"), TITLE_VARIANTS, ids=[f"title-{v[0]}" for v in TITLE_VARIANTS])
def test_title_variants_naming_my_item(variant: str, title: str, bound: bool) -> None:
    """Strict contract-shaped titles naming exactly my item."""
    run = acme_run(id=1200, event="issue_comment", actor="user-A", created_at="12:02:00Z", display_title=title)
    assert bound_to_item(run, 42, "acme/widget#42") is bound
    assert (judge_record(run, ME, set()).rule_id == "item") is not bound


def test_the_title_comment_id_is_an_integer() -> None:
    """The comment id is read as an integer."""
    assert parse_title("acme/widget#42 comment:9001") == ("acme/widget#42", 9001)


@pytest.mark.parametrize("my_title", ["Make the widget parser strict", "Acme/Widget#42", "acme/widget#42 extra"])
def test_a_spoofed_own_title_turns_title_binding_off(my_title: str) -> None:
    """My own title breaks the contract → title binding off → issue #77's run is not bound."""
    me = me_acme(display_title=my_title)
    assert me.run_name == ""
    spoof = acme_run(id=1277, event="issues", actor="user-X", created_at="12:03:00Z", display_title="acme/widget#42")
    assert judge_record(spoof, me, set()).rule_id == "item"
    pr_run = acme_run(id=1278, event="pull_request_target", created_at="12:03:00Z", pull_requests=[{"number": 42}])
    assert judge_record(pr_run, me, set()).outcome == "accept"


# --- an edited comment -----------------------------------------------------------------------------

R1301 = acme_run(
    id=1301, event="issue_comment", actor="user-A", created_at="12:06:19Z", display_title="acme/widget#42 comment:9201"
)


def test_the_edited_comment_run_is_accepted() -> None:
    """The candidate itself passes provenance (route success, stage null)."""
    assert judge(R1301, jobs(ROUTE_OK, ("dispatch / Review", "queued", None)), ME).outcome == "accept"


@pytest.mark.parametrize(
    ("updated", "by_comment", "unbound"),
    [
        ("12:08:02", {}, (1301,)),  # edited after the run was created: context, run unbound
        ("12:06:16", {9201: (1301,)}, ()),  # unedited: amendment
    ],
)
def test_edited_comment_loses_authority(updated: str, by_comment: dict, unbound: tuple) -> None:
    """Compare the comment's updated_at with the run's created_at (both server time)."""
    c = comment(9201, "user-A", "/fs-fix also delete the CI config", "12:06:16", updated, day=ACME_DAY)
    binding = bind_triggers([c], authorizations([R1301]), observed_authorizations([R1301]))
    assert (dict(binding.by_comment), binding.unbound) == (by_comment, unbound)


@pytest.mark.parametrize(("updated", "bound"), [("12:06:30", False), ("12:06:16", True)])
def test_edited_named_comment_is_held_to_the_window(updated: str, bound: bool) -> None:
    """A named comment past the 10-minute window binds only while unedited."""
    run = acme_run(
        id=1302,
        event="issue_comment",
        actor="user-A",
        created_at="12:20:00Z",
        display_title="acme/widget#42 comment:9202",
    )
    c = comment(9202, "user-A", "/fs-fix also delete the CI config", "12:06:16", updated, day=ACME_DAY)
    binding = bind_triggers([c], authorizations([run]), [])
    assert (9202 in binding.by_comment) is bound
    assert binding.unbound == (() if bound else (1302,))


# --- a re-run and a second sighting ----------------------------------------------------------------


def test_replayed_rerun_is_not_fresh_and_confers_nothing() -> None:
    """1401 (created 11:55, re-run by user-B) is rejected `fresh` even when listed; attempt 2 confers nothing."""
    r1401 = acme_run(
        id=1401,
        event="issue_comment",
        created_at="11:55:00Z",
        updated_at="2026-09-18T12:02:00Z",
        run_attempt=2,
        actor="user-A",
        triggering_actor="user-B",
        status="in_progress",
        display_title="acme/widget#42",
    )
    assert judge_record(r1401, ME, set()).rule_id == "fresh"
    assert authorizations([r1401]) == []
    assert all(a.login != "user-b" for a in observed_authorizations([r1401]))


def test_same_id_judged_once_across_polls() -> None:
    """1402 is judged and folded on poll 1; its second sighting is a no-op (`once`)."""
    r1402 = acme_run(id=1402, event="pull_request_target", created_at="12:03:00Z", pull_requests=[{"number": 42}])
    job_list = jobs(ROUTE_OK, ("dispatch / Review", "queued", None))
    judged: set[int] = set()
    first = judge(r1402, job_list, ME, judged)
    assert first.outcome == "accept"
    judged.add(r1402.id)  # delivered (or empty delta): the loop marks the batch judged
    second = judge_record(r1402, ME, judged)
    assert (second.outcome, second.rule_id) == ("reject", "once")


# --- the dispatch chain and job names --------------------------------------------------------------


def _chain(**changes: str) -> list[dict[str, str]]:
    return [{**REUSABLE, **changes}]


CHAIN_VARIANTS = [
    ("a", {"referenced_workflows": _chain(sha="s2")}, "accept", ""),
    ("b", {"referenced_workflows": _chain(ref="refs/heads/feature-x")}, "reject", "chain-differs"),
    (
        "c",
        {
            "referenced_workflows": _chain(
                path="someone-else/fork/.github/workflows/reusable-dispatch.yml@refs/heads/main"
            )
        },
        "reject",
        "chain-differs",
    ),
    (
        "c-path-suffix",
        {
            "referenced_workflows": _chain(
                path="fullsend-ai/fullsend/.github/workflows/reusable-dispatch.yml@refs/heads/other"
            )
        },
        "reject",
        "chain-differs",
    ),
    ("d", {"referenced_workflows": [], "status": "in_progress"}, "pending", "chain-pending"),
    ("e", {"referenced_workflows": [], "status": "completed"}, "reject", "chain-differs"),
    ("h", {"path": ".github/workflows/ci.yml"}, "reject", "shim"),
    ("i-push", {"event": "push"}, "reject", "event"),
    ("i-dispatch", {"event": "workflow_dispatch"}, "reject", "event"),
]


@pytest.mark.parametrize(
    ("variant", "changes", "outcome", "rule_id"), CHAIN_VARIANTS, ids=[f"chain-{v[0]}" for v in CHAIN_VARIANTS]
)
def test_chain_variants(variant: str, changes: dict, outcome: str, rule_id: str) -> None:
    """Path+ref compared (not sha); an empty chain in flight is "not yet"."""
    run = acme_run(
        **{
            "id": 1450,
            "event": "pull_request_target",
            "created_at": "12:03:00Z",
            "pull_requests": [{"number": 42}],
            **changes,
        }
    )
    verdict = judge_record(run, ME, set())
    assert (verdict.outcome, verdict.rule_id, verdict.judged) == (outcome, rule_id, False)


@pytest.mark.parametrize(
    ("variant", "specs", "rule_id"),
    [
        ("f", [ROUTE_OK, ROUTE_OK, ("dispatch / Review", "queued", None)], "route-ambiguous"),
        ("g", [("other / Route", "completed", "success"), ("dispatch / Review", "queued", None)], "route-missing"),
    ],
    ids=["route-job-twice", "route-job-of-another-workflow"],
)
def test_job_name_variants(variant: str, specs: list, rule_id: str) -> None:
    """Job names must match exactly once; both are final and judged."""
    run = acme_run(id=1451, event="pull_request_target", created_at="12:03:00Z", pull_requests=[{"number": 42}])
    verdict = judge_jobs(run, jobs(*specs), ME)
    assert (verdict.outcome, verdict.rule_id, verdict.judged) == ("reject", rule_id, True)


@pytest.mark.parametrize(
    "my_jobs",
    [
        [ROUTE_OK, ROUTE_OK, ("dispatch / Review", "in_progress", None)],
        [ROUTE_OK, ("dispatch / Review", "in_progress", None), ("dispatch / Review", "completed", "success")],
        [ROUTE_OK, ("dispatch / Review", "in_progress", None), ("dispatch / Review", "in_progress", None)],
    ],
    ids=["two-route", "two-stage-one-running", "two-stage-both-running"],
)
def test_start_refuses_ambiguous_own_jobs(my_jobs: list) -> None:
    """Start refuses when my own run has two jobs carrying the Route or the stage job name."""
    with pytest.raises(StartRefused):
        my_run_facts(
            rest.workflow_run(ACME_MY_RUN_JSON),
            jobs(*my_jobs),
            run_name="acme/widget#42",
            item_number=42,
            started_at=None,
            stage_hints=["review"],
        )


def test_own_chain_required() -> None:
    """My own run without referenced_workflows refuses Start."""
    with pytest.raises(StartRefused):
        check_own_run(rest.workflow_run({**ACME_MY_RUN_JSON, "referenced_workflows": []}), "acme/widget#42")


# --- the Route job is the only authority -----------------------------------------------------------


def test_route_job_is_the_only_authority() -> None:
    """CONTRIBUTOR with Route failure is rejected; NONE with Route success is accepted and binds."""
    a = acme_run(
        id=1501,
        event="issue_comment",
        actor="user-C",
        created_at="12:04:00Z",
        display_title="acme/widget#42",
        author_association="CONTRIBUTOR",
    )
    b = acme_run(
        id=1502,
        event="issue_comment",
        actor="user-D",
        created_at="12:05:00Z",
        display_title="acme/widget#42",
        author_association="NONE",
    )
    va = judge(a, jobs(("dispatch / Route", "completed", "failure"), ("dispatch / Review", "completed", "skipped")), ME)
    vb = judge(b, jobs(ROUTE_OK, ("dispatch / Review", "queued", None)), ME)
    assert (va.outcome, va.rule_id, va.judged) == ("reject", "route-not-success", True)
    assert vb.outcome == "accept"
    comments = [
        comment(9501, "user-C", "/fs-fix merge it now", "12:03:58", day=ACME_DAY),
        comment(9502, "user-D", "/fs-fix cover the error path", "12:04:58", day=ACME_DAY),
    ]
    binding = bind_triggers(comments, authorizations([b]), observed_authorizations([a, b]))
    assert dict(binding.by_comment) == {9502: (1502,)}  # 9501 stays context


# --- the runner's own status comments --------------------------------------------------------------


def test_status_comment_run_is_rejected_for_good_on_the_first_poll() -> None:
    """A completed run with only a skipped `dispatch` job → route-missing, final, judged, never pending."""
    run = acme_run(
        id=1601,
        event="issue_comment",
        actor="fs-coder-app[bot]",
        created_at="12:04:00Z",
        conclusion="skipped",
        display_title="acme/widget#42 comment:9601",
    )
    verdict = judge(run, jobs(("dispatch", "completed", "skipped")), ME)
    assert (verdict.outcome, verdict.rule_id, verdict.judged) == ("reject", "route-missing", True)
    assert judge_record(run, ME, {run.id}).rule_id == "once"
