"""Hypothesis properties of provenance and binding (issue 3 acceptance; docs/architecture.md "Provenance")."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import tests.core.provenance.provenance_strategies as S
from fullsend.core.model import Job, WorkflowRun
from fullsend.core.provenance.binding import (
    authorizations,
    bind_triggers,
    bound_to_item,
    command_instruction,
    observed_authorizations,
    parse_title,
)
from fullsend.core.provenance.verdicts import (
    RULE_IDS,
    MyRun,
    Verdict,
    is_follow_up,
    jobs_unreadable,
    judge_jobs,
    judge_record,
    order_listing,
    same_chain,
)
from fullsend.core.watch.start import StartRefused, check_own_run, resolve_route_job, resolve_stage_job
from tests.core.provenance import prov_records as rest
from tests.core.provenance.provenance_world import MY_ID, judge, me_fix

ME = me_fix()
FAST = settings(max_examples=150, deadline=None)


def _break_route(draw: Any, listed: list[Job]) -> list[Job]:
    """Take away "the one Route job concluded success" in one of the ways the spec names."""
    rest = [j for j in listed if j.name != S.ROUTE]
    how = draw(st.sampled_from(["missing", "conclusion", "duplicate", "renamed"]))
    if how == "missing":
        return rest
    if how == "conclusion":
        bad = draw(st.sampled_from([c for c in S.CONCLUSIONS if c != "success"] + ["Success", "SUCCESS"]))
        return [*rest, S.job(S.ROUTE, "completed", bad)]
    if how == "duplicate":
        return [*listed, S.job(S.ROUTE, "completed", "success")]
    return [*rest, S.job(draw(st.sampled_from(["Route", "other / Route", "dispatch / route"])), "completed", "success")]


@FAST
@given(S.good_run(), S.good_jobs())
def test_good_run_is_accepted(data: dict[str, Any], listed: list[Job]) -> None:
    """Sanity for the next property: a run with every required fact is accepted."""
    assert judge(rest.workflow_run(data), listed, ME).outcome == "accept"


@FAST
@given(S.good_run(), S.good_jobs(), st.sampled_from(["route", "chain", "binding", "freshness"]), st.data())
def test_missing_any_one_fact_is_never_accepted(data: dict[str, Any], listed: list[Job], fact: str, d: Any) -> None:
    """A run lacking Route success, a matching chain, the binding or freshness is never accepted."""
    if fact == "route":
        listed = _break_route(d.draw, listed)
    elif fact == "chain":
        data["referenced_workflows"] = d.draw(S.bad_chains)
    elif fact == "binding":
        data.update(d.draw(S.bad_binding()))
    else:
        when = d.draw(st.one_of(S.before_cutoff, S.bad_times, st.just("2026-09-03T10:00:00Z")))
        data["created_at"] = when
        if when == "2026-09-03T10:00:00Z":
            data["id"] = d.draw(st.integers(min_value=1, max_value=MY_ID - 1))
    verdict = judge(rest.workflow_run(data), listed, ME)
    assert verdict.outcome != "accept"
    assert verdict.rule_id in RULE_IDS


@FAST
@given(S.any_run(), st.one_of(S.any_jobs(), S.good_jobs()))
def test_accepted_implies_every_fact(run: WorkflowRun, listed: list[Job]) -> None:
    """Whenever a run is accepted, every fact of checks 1-6 holds (the contrapositive, over arbitrary runs)."""
    verdict = judge(run, listed, ME)
    if verdict.outcome != "accept":
        return
    route = [j for j in listed if j.name == S.ROUTE]
    stage = [j for j in listed if j.name == S.STAGE]
    assert run.id > 0 and run.id != MY_ID and run.path == ME.path and run.event in S.ALLOWED
    assert is_follow_up(run, ME) and bound_to_item(run, 7, "org/repo#7")
    assert same_chain(ME.referenced_workflows, run.referenced_workflows)
    assert len(route) == 1 and route[0].conclusion == "success"
    assert len(stage) == 1 and stage[0].conclusion != "skipped"


def _poll(
    listing: Sequence[WorkflowRun], jobs_by_id: dict[int, list[Job]], judged: AbstractSet[int]
) -> dict[int, Verdict]:
    """One poll's verdicts by run id, as the watcher loop judges a listing."""
    verdicts = {}
    for run in order_listing(listing):
        verdict = judge_record(run, ME, judged)
        verdicts[run.id] = judge_jobs(run, jobs_by_id[run.id], ME) if verdict.outcome == "accept" else verdict
    return verdicts


listings = st.lists(st.tuples(S.any_run(), S.any_jobs()), max_size=8, unique_by=lambda p: p[0].id)


@FAST
@given(listings, st.data())
def test_judging_is_deterministic_and_order_independent(pairs: list[tuple[WorkflowRun, list[Job]]], d: Any) -> None:
    """For a fixed listing, the verdicts and the batch order do not depend on the listing's order."""
    listing = [run for run, _ in pairs]
    jobs_by_id = {run.id: listed for run, listed in pairs}
    judged = set(d.draw(st.lists(st.sampled_from([r.id for r in listing] or [1]), max_size=3)))
    shuffled = d.draw(st.permutations(listing))
    first = _poll(listing, jobs_by_id, judged)
    assert first == _poll(listing, jobs_by_id, judged)
    assert first == _poll(shuffled, jobs_by_id, judged)
    assert [r.id for r in order_listing(listing)] == [r.id for r in order_listing(shuffled)]


@FAST
@given(st.lists(S.any_run(), max_size=10))
def test_order_listing_dedupes_and_sorts(runs: list[WorkflowRun]) -> None:
    """A listing whose pages overlapped keeps every id exactly once, oldest first, ties by id."""
    ordered = order_listing(runs + runs[: len(runs) // 2])
    assert sorted(r.id for r in ordered) == sorted({r.id for r in runs})
    keys = [((0, None) if r.created_at is None else (1, r.created_at), r.id) for r in ordered]
    assert keys == sorted(keys)


# A job read per (run, poll): a listing, or a transient / permanent error.
job_reads = st.one_of(S.any_jobs(), S.good_jobs(), st.sampled_from(["transient", "permanent"]))


@FAST
@given(
    st.lists(
        st.tuples(S.any_run(), st.lists(job_reads, min_size=4, max_size=4)),
        min_size=1,
        max_size=6,
        unique_by=lambda p: p[0].id,
    ),
    st.data(),
)
def test_a_run_id_is_judged_at_most_once_across_polls(pool: list, d: Any) -> None:
    """Across polls (a run listed again, jobs changing, errors), each id joins the judged set once
    and its jobs are never read after it was judged."""
    judged: set[int] = set()
    judged_count: Counter[int] = Counter()
    for poll in range(4):
        listing = d.draw(st.lists(st.sampled_from(pool), max_size=2 * len(pool)))
        batch = []
        for run in order_listing(run for run, _ in listing):
            verdict = judge_record(run, ME, judged)
            assert not verdict.judged
            if verdict.outcome != "accept":
                continue
            assert run.id not in judged  # jobs are never read again once judged
            read = dict(pool)[run][poll]
            verdict = (
                jobs_unreadable(run.id, read == "permanent", "x")
                if isinstance(read, str)
                else judge_jobs(run, read, ME)
            )
            if verdict.judged:
                judged.add(run.id)
                judged_count[run.id] += 1
            elif verdict.outcome == "accept":
                batch.append(run.id)
        if d.draw(st.booleans()):  # delivered, or an empty delta: the whole batch is judged
            judged.update(batch)
            judged_count.update(batch)
    assert all(n == 1 for n in judged_count.values())


ANY_KEYS = [
    "id",
    "path",
    "event",
    "status",
    "conclusion",
    "created_at",
    "run_attempt",
    "display_title",
    "actor",
    "triggering_actor",
    "pull_requests",
    "referenced_workflows",
    "name",
    "html_url",
    "head_sha",
]


@st.composite
def junk_run(draw: Any) -> object:
    """REST JSON with missing fields, wrong types and unparseable times (or not a dict at all)."""
    if draw(st.integers(min_value=0, max_value=9)) == 0:
        return draw(S.json_junk)
    data = draw(S.good_run())
    for key in draw(st.lists(st.sampled_from(ANY_KEYS), max_size=5)):
        choice = draw(st.integers(min_value=0, max_value=2))
        if choice == 0:
            data.pop(key, None)
        else:
            data[key] = draw(S.bad_times if key == "created_at" and choice == 1 else S.json_junk)
    return data


junk_jobs = st.lists(
    st.one_of(
        S.json_junk,
        st.fixed_dictionaries(
            {
                "name": st.one_of(st.sampled_from([S.ROUTE, S.STAGE]), S.json_junk),
                "status": S.json_junk,
                "conclusion": st.one_of(st.just("success"), S.json_junk),
            }
        ),
    ),
    max_size=4,
)
# Comment items are dicts here, as every item of a comment listing is.
junk_comment = st.one_of(
    st.dictionaries(st.text(max_size=6), S.json_junk, max_size=3),
    st.fixed_dictionaries(
        {
            "id": S.json_junk,
            "body": st.one_of(st.text(max_size=30), S.json_junk),
            "user": st.one_of(st.fixed_dictionaries({"login": S.json_junk}), S.json_junk),
            "created_at": st.one_of(S.bad_times, st.just("2026-09-03T10:04:00Z")),
            "updated_at": S.bad_times,
        }
    ),
)


@FAST
@given(st.lists(junk_run(), min_size=1, max_size=4), junk_jobs, st.lists(junk_comment, max_size=4))
def test_bad_forge_input_never_raises(runs_json: list, jobs_json: list, comments_json: list) -> None:
    """Missing fields, wrong types and unparseable times are a named reject or pending, never an exception."""
    runs = [rest.workflow_run(r) for r in runs_json]  # type: ignore[arg-type]
    listed = [rest.job(j) for j in jobs_json]  # type: ignore[arg-type]
    for run in runs:
        verdict = judge(run, listed, ME)
        assert verdict.outcome in ("accept", "reject", "pending")
        assert (verdict.rule_id == "") is (verdict.outcome == "accept")
        assert verdict.outcome == "accept" or verdict.rule_id in RULE_IDS
        assert verdict.log_line()
        parse_title(run.display_title)
    comments = [rest.comment(c) for c in comments_json]  # type: ignore[arg-type]
    bind_triggers(comments, authorizations(runs), observed_authorizations(runs))
    for c in comments:
        command_instruction(c.body)
    for run in runs:
        try:
            check_own_run(run, "org/repo#7")
        except StartRefused:
            pass
    for resolve in (resolve_route_job, lambda js: resolve_stage_job(js, ["review", ""])):
        try:
            resolve(listed)
        except StartRefused:
            pass


@FAST
@given(st.lists(junk_comment, max_size=6), st.lists(S.any_run(), max_size=6))
def test_binding_only_binds_authorized_runs(comments_json: list, runs: list[WorkflowRun]) -> None:
    """Bound and unbound runs partition the batch's authorized runs; observed-only runs never bind."""
    comments = [rest.comment(c) for c in comments_json]  # type: ignore[arg-type]
    half = len(runs) // 2
    auths = authorizations(runs[:half])
    binding = bind_triggers(comments, auths, observed_authorizations(runs))
    bound = {rid for ids in binding.by_comment.values() for rid in ids}
    assert bound | set(binding.unbound) == {a.run_id for a in auths}
    assert not bound & set(binding.unbound)
    assert set(binding.by_comment) <= {c.id for c in comments}


def test_verdict_log_lines_name_the_rule() -> None:
    """Log lines carry the check, the rule id, and say "rejected" for a final rejection (S19)."""
    reject = Verdict(5, "reject", "event", "event", 'event "push" does not update a work item')
    pending = jobs_unreadable(9, False, "HTTP 500")
    assert "rejected" in reject.log_line() and "[event]" in reject.log_line()
    assert "[jobs-pending]" in pending.log_line() and "again" in pending.log_line()
    assert isinstance(MyRun, type)
