"""Provenance, job checks, stage resolution and Start errors (docs/architecture.md "Provenance", "Start")."""

from __future__ import annotations

import pytest

from fullsend.core.model import ReferencedWorkflow, WorkflowRun
from fullsend.core.provenance.binding import bound_to_item, parse_title
from fullsend.core.provenance.verdicts import (
    RULE_IDS,
    MyRun,
    is_follow_up,
    jobs_unreadable,
    judge_jobs,
    judge_record,
    same_chain,
)
from fullsend.core.watch.start import (
    StartRefused,
    check_own_run,
    fresh_after,
    is_route_job_name,
    normalize_self_logins,
    resolve_route_job,
    resolve_stage_job,
)
from tests.core.provenance import prov_records as rest
from tests.core.provenance.provenance_world import ACCEPT_JOBS, MY_ID, MY_RUN_JSON, C, jobs, judge, me_fix, t

ME = me_fix()


def test_fix_start_derivations() -> None:
    """FIX: freshAfter 10:00:00Z, route "dispatch / Route", stage "dispatch / Review", title binding on."""
    assert ME.fresh_after == t("10:00:00")
    assert ME.route_job_name == "dispatch / Route"
    assert ME.stage_job_name == "dispatch / Review"
    assert ME.run_name == "org/repo#7"
    assert ME.run_id == MY_ID


# --- provenance (candidate phase) ---------------------------------------------------------------

EVIL = {"path": "evil/repo/.github/workflows/reusable-dispatch.yml@main", "ref": "refs/heads/main", "sha": "abc"}

# (vector, candidate, expected outcome, rule id); phase-A verdicts never mark the run judged.
PHASE_A = [
    ("P1", C(id=MY_ID, pull_requests=[7]), "reject", "self"),
    ("P2", C(id=2, event="push", pull_requests=[7]), "reject", "event"),
    ("P3", C(id=3, event="workflow_dispatch", pull_requests=[7]), "reject", "event"),
    ("P4", C(id=4, path=".github/workflows/ci.yml", pull_requests=[7]), "reject", "shim"),
    ("P5", C(id=5, created_at="2026-09-03T09:00:00Z", pull_requests=[7]), "reject", "fresh"),
    ("P6", C(id=6, pull_requests=[7], referenced_workflows=[EVIL]), "reject", "chain-differs"),
    ("P7", C(id=8, pull_requests=[99], display_title="org/repo#99"), "reject", "item"),
    ("P8", C(id=100, event="pull_request_target", pull_requests=[7]), "accept", ""),
    ("P10", C(id=9, pull_requests=[7], referenced_workflows=[], status="in_progress"), "pending", "chain-pending"),
    ("P11", C(id=9, pull_requests=[7], referenced_workflows=[], status="completed"), "reject", "chain-differs"),
    ("P12", C(id=55, display_title="org/repo#8"), "reject", "item"),
    ("P13", C(id=56, display_title="org/repo#7", created_at="2026-09-03T10:05:03Z"), "accept", ""),
    ("P15", C(id=57, pull_requests=[8], display_title="org/repo#7"), "reject", "item"),
]


@pytest.mark.parametrize(("vector", "run", "outcome", "rule_id"), PHASE_A, ids=[v[0] for v in PHASE_A])
def test_phase_a_vectors(vector: str, run: WorkflowRun, outcome: str, rule_id: str) -> None:
    """Each run-record check gives the spec's verdict and rule id, and never marks judged."""
    verdict = judge_record(run, ME, frozenset())
    assert (verdict.outcome, verdict.rule_id) == (outcome, rule_id)
    assert verdict.run_id == run.id
    assert verdict.judged is False
    assert rule_id == "" or rule_id in RULE_IDS


def test_P9_once_after_delivery() -> None:
    """P9: P8 after it was delivered is rejected `once` (no job read needed)."""
    verdict = judge_record(C(id=100, event="pull_request_target", pull_requests=[7]), ME, {100})
    assert (verdict.outcome, verdict.rule_id, verdict.check) == ("reject", "once", "once")
    assert verdict.judged is False


def test_P10_P11_chain_finality() -> None:
    """P10 is pending (the poll retries), P11 is final; both checks are named `chain`."""
    p10 = judge_record(C(id=9, pull_requests=[7], referenced_workflows=[], status="in_progress"), ME, set())
    p11 = judge_record(C(id=9, pull_requests=[7], referenced_workflows=[], status="completed"), ME, set())
    assert (p10.check, p10.outcome) == ("chain", "pending")
    assert (p11.check, p11.outcome) == ("chain", "reject")


def test_P12_P13_observed_map() -> None:
    """P12 is not recorded as observed (another item's run); P13 passes and is recorded."""
    assert judge_record(C(id=55, display_title="org/repo#8"), ME, set()).observe is False
    p13 = judge_record(C(id=56, display_title="org/repo#7", created_at="2026-09-03T10:05:03Z"), ME, set())
    assert (p13.outcome, p13.observe) == ("accept", True)


def test_observed_before_once() -> None:
    """An issue_comment run judged before is still recorded before the `once` rejection."""
    verdict = judge_record(C(id=56, display_title="org/repo#7"), ME, {56})
    assert (verdict.rule_id, verdict.observe) == ("once", True)


def test_P14_title_with_comment_id() -> None:
    """P14: "org/repo#7 comment:12" binds item 7 and names comment 12."""
    run = C(id=58, display_title="org/repo#7 comment:12")
    assert bound_to_item(run, 7, "org/repo#7")
    assert parse_title(run.display_title) == ("org/repo#7", 12)
    assert judge_record(run, ME, set()).outcome == "accept"


def test_P16_own_title_empty_switches_title_binding_off() -> None:
    """P16: my own run titled "" → Start succeeds, title binding off, title-only runs rejected `item`."""
    run_name, notes = check_own_run(rest.workflow_run({**MY_RUN_JSON, "display_title": ""}), "org/repo#7")
    assert run_name == "" and len(notes) == 1 and "title" in notes[0].lower()
    me = me_fix(display_title="")
    assert me.run_name == ""
    assert judge_record(C(id=60, display_title="org/repo#7"), me, set()).rule_id == "item"
    assert judge_record(C(id=61, pull_requests=[7]), me, set()).outcome == "accept"


# Freshness: my run created 10:00:00Z, runner StartedAt 10:03:00Z → freshAfter 10:00:00Z.
FRESH = [
    ("F1", MY_ID + 1, "2026-09-03T10:01:00Z", True),
    ("F2", MY_ID + 2, "2026-09-03T10:05:00Z", True),
    ("F3", MY_ID - 5, "2026-09-03T09:59:00Z", False),
    ("F4", MY_ID + 1, "2026-09-03T10:00:00Z", True),
    ("F5", MY_ID - 1, "2026-09-03T10:00:00Z", False),
    ("F6", MY_ID + 3, "not a time", False),
]


@pytest.mark.parametrize(("vector", "run_id", "created", "fresh"), FRESH, ids=[f[0] for f in FRESH])
def test_freshness_vectors(vector: str, run_id: int, created: str, fresh: bool) -> None:
    """F1-F6: strictly after, or the same second with a larger id; unparseable is never fresh."""
    my_run = rest.workflow_run(MY_RUN_JSON)
    me = MyRun(
        MY_ID,
        ME.path,
        ME.referenced_workflows,
        fresh_after(my_run, t("10:03:00")),
        "org/repo#7",
        7,
        ME.route_job_name,
        ME.stage_job_name,
    )
    assert me.fresh_after == t("10:00:00")
    run = C(id=run_id, created_at=created, pull_requests=[7])
    assert is_follow_up(run, me) is fresh
    assert (judge_record(run, me, set()).rule_id == "fresh") is not fresh


def test_F7_fresh_after_falls_back_to_started_at() -> None:
    """F7: my run's created_at is unparseable → freshAfter = StartedAt."""
    run = rest.workflow_run({**MY_RUN_JSON, "created_at": "not a time"})
    assert fresh_after(run, t("10:00:00")) == t("10:00:00")
    assert fresh_after(run, None) is None


def _rw(path: str, ref: str, sha: str) -> ReferencedWorkflow:
    return ReferencedWorkflow(path, ref, sha)


A = _rw("o/r/.github/workflows/reusable-dispatch.yml@main", "refs/heads/main", "abc")
B = _rw("o/r/.github/workflows/other.yml@main", "refs/heads/main", "def")
CHAINS = [
    ("chain-reordered", [B, A], True),
    ("chain-sha-ignored", [A, _rw(B.path, B.ref, "zzz")], True),
    ("chain-other-ref", [A, _rw(B.path, "refs/tags/v0.1.0", B.sha)], False),
    ("chain-foreign-path", [A, _rw("o/r/.github/workflows/evil.yml@main", "refs/heads/main", "x")], False),
    ("chain-shorter", [A], False),
]


@pytest.mark.parametrize(("name", "theirs", "equal"), CHAINS, ids=[c[0] for c in CHAINS])
def test_dispatch_chain_vectors(name: str, theirs: list[ReferencedWorkflow], equal: bool) -> None:
    """Dispatch chain: path+ref multiset equality, sha ignored."""
    assert same_chain((A, B), tuple(theirs)) is equal


def test_empty_chains_never_equal() -> None:
    """The newest: ([], []) → differ."""
    assert same_chain((), ()) is False


@pytest.mark.parametrize(
    ("name", "route_like"),
    [
        ("Route", True),
        ("dispatch / Route", True),
        ("fullsend-dispatch / Route", True),
        ("Reroute", False),
        ("dispatch / Review", False),
    ],
)
def test_route_name_predicate(name: str, route_like: bool) -> None:
    """The route-name predicate."""
    assert is_route_job_name(name) is route_like


def test_work_item_binding_vectors() -> None:
    """Work-item binding: pull_requests decides alone; titles need a matching, non-empty run name."""
    pr_run = C(pull_requests=[7], display_title="whatever")
    assert bound_to_item(pr_run, 7, "") and bound_to_item(pr_run, 7, "org/repo#8")
    assert not bound_to_item(pr_run, 8, "org/repo#8")
    title_run = C(display_title="org/repo#7")
    assert bound_to_item(title_run, 7, "org/repo#7")
    assert not bound_to_item(title_run, 8, "org/repo#8")
    assert not bound_to_item(title_run, 7, "")


# --- job checks (candidate 42, pull_requests [7], completed unless stated) -------------------------

R_OK = ("dispatch / Route", "completed", "success")
# (vector, jobs, status, outcome, rule id); final rejections are judged, pending and accept are not.
JOB_VECTORS = [
    ("J1", [R_OK, ("dispatch / Review", "completed", "skipped")], "completed", "reject", "stage-skipped"),
    (
        "J2",
        [("dispatch / Route", "completed", "failure"), ("dispatch / Review", "completed", "skipped")],
        "completed",
        "reject",
        "route-not-success",
    ),
    ("J3", [R_OK, ("dispatch / Triage", "queued", None)], "completed", "reject", "stage-missing"),
    ("J4", [R_OK, ("dispatch / Review", "queued", None)], "completed", "accept", ""),
    (
        "J5",
        [("stop-fix", "completed", "skipped"), ("dispatch", "completed", "skipped")],
        "completed",
        "reject",
        "route-missing",
    ),
    ("J6", [("dispatch", "in_progress", None)], "in_progress", "pending", "route-pending"),
    ("J7", [R_OK, ("dispatch / Triage", "completed", "success")], "completed", "reject", "stage-missing"),
    ("J8", [R_OK], "in_progress", "pending", "stage-pending"),
    (
        "J9-completed",
        [("dispatch / Route", "in_progress", None), ("dispatch / Review", "queued", None)],
        "completed",
        "pending",
        "route-pending",
    ),
    (
        "J9-in_progress",
        [("dispatch / Route", "in_progress", None), ("dispatch / Review", "queued", None)],
        "in_progress",
        "pending",
        "route-pending",
    ),
    ("J10", [R_OK, ("dispatch / Review", "completed", "cancelled")], "completed", "accept", ""),
    ("J11-completed", [R_OK, ("dispatch / Review", "in_progress", None)], "completed", "accept", ""),
    ("J11-in_progress", [R_OK, ("dispatch / Review", "in_progress", None)], "in_progress", "accept", ""),
    (
        "J12",
        [("Route", "completed", "success"), ("dispatch / Review", "queued", None)],
        "completed",
        "reject",
        "route-missing",
    ),
    ("J13-completed", [R_OK, R_OK, ("dispatch / Review", "queued", None)], "completed", "reject", "route-ambiguous"),
    ("J13-in_progress", [R_OK, R_OK], "in_progress", "reject", "route-ambiguous"),
    (
        "J14-completed",
        [R_OK, ("dispatch / Review", "queued", None), ("dispatch / Review", "queued", None)],
        "completed",
        "reject",
        "stage-ambiguous",
    ),
    (
        "J14-in_progress",
        [R_OK, ("dispatch / Review", "queued", None), ("dispatch / Review", "queued", None)],
        "in_progress",
        "reject",
        "stage-ambiguous",
    ),
]


@pytest.mark.parametrize(
    ("vector", "specs", "status", "outcome", "rule_id"), JOB_VECTORS, ids=[v[0] for v in JOB_VECTORS]
)
def test_job_check_vectors(vector: str, specs: list, status: str, outcome: str, rule_id: str) -> None:
    """J1-J14: verdict, rule id and finality (final rejections join the judged set)."""
    run = C(id=42, pull_requests=[7], status=status)
    assert judge_record(run, ME, set()).outcome == "accept"
    verdict = judge_jobs(run, jobs(*specs), ME)
    assert (verdict.outcome, verdict.rule_id) == (outcome, rule_id)
    assert verdict.judged is (outcome == "reject")
    assert verdict.check == ("" if outcome == "accept" else rule_id.split("-")[0])


def test_J5_J12_detail_names_the_missing_route_job() -> None:
    """J5/J12: the detail says there is no Route job (the shim did not dispatch)."""
    verdict = judge_jobs(C(id=42, pull_requests=[7]), jobs(("Route", "completed", "success")), ME)
    assert "no Route job" in verdict.detail


def test_J13_detail_names_the_duplicated_job() -> None:
    """J13: the detail names the job that appears twice."""
    verdict = judge_jobs(C(id=42, pull_requests=[7]), jobs(R_OK, R_OK), ME)
    assert 'more than one job named "dispatch / Route"' in verdict.detail


def test_J1_detail_says_skipped() -> None:
    """J1: the detail says my stage was skipped."""
    verdict = judge_jobs(C(id=42, pull_requests=[7]), jobs(R_OK, ("dispatch / Review", "completed", "skipped")), ME)
    assert "skipped" in verdict.detail


def test_J8_then_accept_on_a_later_poll() -> None:
    """J8: stage pending while the run is in progress; a later poll with Review in_progress accepts."""
    run = C(id=42, pull_requests=[7], status="in_progress")
    first = judge(run, jobs(R_OK), ME)
    assert (first.outcome, first.judged) == ("pending", False)
    later = judge(run, jobs(R_OK, ("dispatch / Review", "in_progress", None)), ME, set())
    assert later.outcome == "accept"


def test_J9_then_accept_on_a_later_poll() -> None:
    """J9: Route conclusion null is pending; a later Route success accepts."""
    run = C(id=42, pull_requests=[7], status="in_progress")
    assert (
        judge(run, jobs(("dispatch / Route", "in_progress", None), ("dispatch / Review", "queued", None)), ME).rule_id
        == "route-pending"
    )
    assert judge(run, ACCEPT_JOBS, ME).outcome == "accept"


def test_J15_permanent_jobs_error_is_judged_and_never_reread() -> None:
    """J15: a 404 on the jobs endpoint judges the run for good; the next poll stops at `once`."""
    verdict = jobs_unreadable(42, True, "reading the jobs of follow-up run 42 failed: HTTP 404")
    assert (verdict.outcome, verdict.rule_id, verdict.judged) == ("reject", "jobs-unreadable", True)
    judged = {verdict.run_id}
    assert judge_record(C(id=42, pull_requests=[7]), ME, judged).rule_id == "once"


def test_J16_transient_jobs_error_stays_judgeable() -> None:
    """J16: a 500 leaves the run judgeable (pending, not judged); the next poll reads the jobs again."""
    verdict = jobs_unreadable(42, False, "HTTP 500")
    assert (verdict.outcome, verdict.judged) == ("pending", False)
    assert verdict.rule_id in RULE_IDS
    assert judge_record(C(id=42, pull_requests=[7]), ME, set()).outcome == "accept"


def test_run_conclusion_is_never_consulted() -> None:
    """A run concluded cancelled or failure still carries its Route job's authority."""
    for conclusion in ("cancelled", "failure", "skipped", None):
        run = C(id=42, pull_requests=[7], conclusion=conclusion)
        assert judge(run, ACCEPT_JOBS, ME).outcome == "accept"


# --- stage-job resolution (Start) ------------------------------------------------------------------

IP, DONE = "in_progress", "completed"
STAGE_OK = [
    (
        "route-and-skipped-ignored",
        [("dispatch / Route", DONE, "success"), ("dispatch / Review", IP, None), ("dispatch / Fix", DONE, "skipped")],
        [""],
        "dispatch / Review",
    ),
    (
        "hint-fixer",
        [("dispatch / Harness Run (reviewer)", IP, None), ("dispatch / Harness Run (fixer)", IP, None)],
        ["fixer"],
        "dispatch / Harness Run (fixer)",
    ),
    (
        "hint-review",
        [
            ("dispatch / Harness dispatch", IP, None),
            ("dispatch / Route", DONE, "success"),
            ("dispatch / Triage", DONE, "skipped"),
            ("dispatch / Code", DONE, "skipped"),
            ("dispatch / Review", IP, None),
        ],
        ["review", "fullsend-ai-review"],
        "dispatch / Review",
    ),
    (
        "hint-fix",
        [
            ("dispatch / Harness dispatch", IP, None),
            ("dispatch / Route", DONE, "success"),
            ("dispatch / Triage", DONE, "skipped"),
            ("dispatch / Code", DONE, "skipped"),
            ("dispatch / Fix", IP, None),
        ],
        ["fix", "fullsend-ai-coder"],
        "dispatch / Fix",
    ),
    (
        "slug-decides",
        [
            ("dispatch / Harness dispatch", DONE, "success"),
            ("dispatch / Harness run (reviewer)", IP, None),
            ("dispatch / Harness run (fixer)", IP, None),
        ],
        ["harness-run", "fixer"],
        "dispatch / Harness run (fixer)",
    ),
    (
        "hyphen-folds",
        [
            ("dispatch / Harness dispatch", IP, None),
            ("dispatch / Harness run (x)", IP, None),
            ("dispatch / Harness run (y)", DONE, "success"),
        ],
        ["harness-run", "slug-not-in-any-name"],
        "dispatch / Harness run (x)",
    ),
    (
        "second-hint",
        [("dispatch / Harness run (x)", IP, None), ("dispatch / Harness run (y)", IP, None)],
        ["harness-run", "y"],
        "dispatch / Harness run (y)",
    ),
]


@pytest.mark.parametrize(("name", "specs", "hints", "expected"), STAGE_OK, ids=[s[0] for s in STAGE_OK])
def test_stage_job_resolution(name: str, specs: list, hints: list[str], expected: str) -> None:
    """Stage-job resolution cases that resolve."""
    assert resolve_stage_job(jobs(*specs), hints) == expected


STAGE_REFUSED = [
    (
        "no-hint-resolves",
        [("dispatch / Harness run (x)", IP, None), ("dispatch / Harness run (y)", IP, None)],
        ["harness-run", "nope"],
        "cannot tell which",
    ),
    (
        "wrong-stage-hints",
        [("dispatch / Harness dispatch", IP, None), ("dispatch / Review", IP, None)],
        ["fix", "fullsend-ai-coder"],
        "cannot tell which",
    ),
    ("blank-hint", [("dispatch / (a)", IP, None), ("dispatch / (b)", IP, None)], [""], "cannot tell which"),
    ("only-route-done", [("dispatch / Route", DONE, "success")], ["review"], "no in-progress stage job"),
    ("route-never-counts", [("dispatch / Route", IP, None)], ["review"], "no in-progress stage job"),
]


@pytest.mark.parametrize(("name", "specs", "hints", "message"), STAGE_REFUSED, ids=[s[0] for s in STAGE_REFUSED])
def test_stage_job_resolution_refused(name: str, specs: list, hints: list[str], message: str) -> None:
    """Stage-job resolution cases that refuse to start."""
    with pytest.raises(StartRefused, match=message):
        resolve_stage_job(jobs(*specs), hints)


def test_route_job_must_be_unique() -> None:
    """Zero or two route-like jobs refuse Start; one is remembered by its exact name."""
    assert resolve_route_job(jobs(("x / Route", DONE, "success"), ("Review", IP, None))) == "x / Route"
    for specs in (
        [("dispatch / Review", IP, None)],
        [("Route", DONE, "success"), ("dispatch / Route", DONE, "success")],
    ):
        with pytest.raises(StartRefused, match="exactly one Route job"):
            resolve_route_job(jobs(*specs))


def test_start_error_no_referenced_workflows() -> None:
    """Start refuses: my own run references no reusable workflow."""
    with pytest.raises(StartRefused, match="references no reusable workflow"):
        check_own_run(rest.workflow_run({**MY_RUN_JSON, "referenced_workflows": []}), "org/repo#7")


def test_start_error_no_path() -> None:
    """My own run reports no workflow path."""
    with pytest.raises(StartRefused, match="no workflow path"):
        check_own_run(rest.workflow_run({**MY_RUN_JSON, "path": None}), "org/repo#7")


@pytest.mark.parametrize("logins", [None, [], ["", "  "]])
def test_start_error_no_self_logins(logins: list[str] | None) -> None:
    """Start refuses: self logins nil or ["", "  "] → "no self logins"."""
    with pytest.raises(StartRefused, match="no self logins"):
        normalize_self_logins(logins)


def test_self_logins_normalized() -> None:
    """Trimmed, lowercased, blanks dropped, duplicates folded."""
    assert normalize_self_logins(
        [" Fullsend-AI-Review[bot] ", "", "fullsend-ai-review[bot]", "org-review[bot]"]
    ) == frozenset({"fullsend-ai-review[bot]", "org-review[bot]"})


def test_run_name_self_check_keeps_matching_title() -> None:
    """My own title "org/repo#7" (or with a comment suffix) keeps title binding on."""
    assert check_own_run(rest.workflow_run(MY_RUN_JSON), "org/repo#7") == ("org/repo#7", [])
    suffixed = rest.workflow_run({**MY_RUN_JSON, "display_title": "org/repo#7 comment:99"})
    assert check_own_run(suffixed, "org/repo#7")[0] == "org/repo#7"


SHA1, SHA2 = "5e1ec7ed0c0ffee0ddba11ab1e0b5e55ed0fab1e", "0123456789abcdef0123456789abcdef01234567"
HOSTED = "fullsend-ai/steer-action/.github/workflows/dispatch.yml"
HOSTED_CHAINS = [
    ("hosted-same-pin", _rw(f"{HOSTED}@{SHA1}", "", SHA1), True),
    ("hosted-other-pin", _rw(f"{HOSTED}@{SHA2}", "", SHA2), False),
    ("hosted-other-owner", _rw(f"evil/steer-action/.github/workflows/dispatch.yml@{SHA1}", "", SHA1), False),
    ("hosted-by-tag-same-commit", _rw(f"{HOSTED}@v1", "refs/tags/v1", SHA1), False),
    (
        "hosted-upper-case-owner",
        _rw(f"Fullsend-AI/steer-action/.github/workflows/dispatch.yml@{SHA1}", "", SHA1),
        False,
    ),
]


@pytest.mark.parametrize(("name", "theirs", "equal"), HOSTED_CHAINS, ids=[c[0] for c in HOSTED_CHAINS])
def test_hosted_dispatch_chain_vectors(name: str, theirs: ReferencedWorkflow, equal: bool) -> None:
    """docs/rules.md#chain-differs: a call pinned by commit carries the SHA in ``path`` and no
    ``ref``, so only a run of that exact commit, owner and file matches; the text is compared as
    GitHub wrote it (fail closed on any difference, case included)."""
    mine = (_rw(f"{HOSTED}@{SHA1}", "", SHA1),)
    assert same_chain(mine, (theirs,)) is equal
