"""Hypothesis strategies for the provenance properties (built on the FIX fixture)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from fullsend.core.model import Job, WorkflowRun
from tests.core.provenance import prov_records as rest
from tests.core.provenance.provenance_world import MY_ID, REF, candidate_json

ROUTE, STAGE = "dispatch / Route", "dispatch / Review"
ALLOWED = ["issue_comment", "issues", "pull_request_target", "pull_request_review", "pull_request_review_comment"]
STATUSES = ["completed", "in_progress", "queued", "waiting", "requested", "pending", ""]
CONCLUSIONS = [None, "", "success", "failure", "cancelled", "skipped", "neutral", "timed_out", "action_required"]
DECOY_NAMES = [
    "Route",
    "other / Route",
    "dispatch / route",
    "dispatch / Route ",
    "dispatch / Triage",
    "dispatch / Fix",
    "dispatch / review",
    "dispatch",
    "stop-fix",
    "Review",
]

ids = st.integers(min_value=MY_ID + 1, max_value=MY_ID + 10**6)
after_cutoff = st.builds(
    lambda s: f"2026-09-03T{10 + s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}Z",
    st.integers(min_value=1, max_value=7199),
)
before_cutoff = st.builds(
    lambda s: f"2026-09-03T{9 - s // 3600:02d}:{59 - s // 60 % 60:02d}:{59 - s % 60:02d}Z",
    st.integers(min_value=0, max_value=7199),
)
bad_times = st.sampled_from(
    [
        "not a time",
        "2026-09-03T10:05:00",
        "2026-02-30T10:00:00Z",
        "2026-09-03 10:05:00Z",
        "2026-09-03T25:00:00Z",
        "",
        None,
        1693735500,
        ["2026-09-03T10:05:00Z"],
    ]
)

json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=12))
json_junk = st.recursive(
    json_leaf, lambda ch: st.lists(ch, max_size=3) | st.dictionaries(st.text(max_size=6), ch, max_size=3), max_leaves=8
)


@st.composite
def good_binding(draw: Any) -> dict[str, Any]:
    """Fields that bind the run to item 7 (FIX run name "org/repo#7")."""
    if draw(st.booleans()):
        others = draw(st.lists(st.integers(min_value=1, max_value=500).filter(lambda n: n != 7), max_size=2))
        return {"pull_requests": [{"number": n} for n in (7, *others)], "display_title": draw(st.text(max_size=20))}
    suffix = draw(st.one_of(st.just(""), st.integers(min_value=1, max_value=2**63 - 1).map(lambda n: f" comment:{n}")))
    return {"pull_requests": [], "display_title": f"org/repo#7{suffix}"}


@st.composite
def good_run(draw: Any) -> dict[str, Any]:
    """REST JSON of a candidate that passes every run-record check against FIX."""
    fields = {
        "id": draw(ids),
        "event": draw(st.sampled_from(ALLOWED)),
        "status": draw(st.sampled_from(STATUSES)),
        "conclusion": draw(st.sampled_from(CONCLUSIONS)),
        "created_at": draw(after_cutoff),
        "run_attempt": draw(st.integers(min_value=0, max_value=3)),
        "actor": {"login": draw(st.sampled_from(["reviewer", "user-A", "", "fs-app[bot]"]))},
        "referenced_workflows": [{**REF, "sha": draw(st.sampled_from([REF["sha"], "s2", ""]))}],
    }
    return candidate_json(**fields, **draw(good_binding()))


def job(name: str, status: str | None, conclusion: str | None, job_id: int = 0) -> Job:
    return rest.job({"id": job_id, "name": name, "status": status, "conclusion": conclusion})


decoys = st.lists(
    st.builds(job, st.sampled_from(DECOY_NAMES), st.sampled_from(STATUSES), st.sampled_from(CONCLUSIONS)), max_size=3
)


@st.composite
def good_jobs(draw: Any) -> list[Job]:
    """Jobs with one successful Route job and one selected (not skipped) stage job, plus decoys."""
    listed = [
        job(ROUTE, draw(st.sampled_from(STATUSES)), "success"),
        job(STAGE, draw(st.sampled_from(STATUSES)), draw(st.sampled_from([c for c in CONCLUSIONS if c != "skipped"]))),
        *draw(decoys),
    ]
    return draw(st.permutations(listed))


@st.composite
def any_jobs(draw: Any) -> list[Job]:
    """Arbitrary job listings over the exact names and decoys."""
    names = st.sampled_from([ROUTE, STAGE, *DECOY_NAMES])
    return draw(st.lists(st.builds(job, names, st.sampled_from(STATUSES), st.sampled_from(CONCLUSIONS)), max_size=5))


rarely = st.integers(min_value=0, max_value=3).map(lambda n: n == 3)  # 0 is drawn most often


@st.composite
def any_run(draw: Any) -> WorkflowRun:
    """A run whose every fact may be good or bad (for the "accepted implies every fact" property)."""
    data = draw(good_run())
    if draw(rarely):
        data["created_at"] = draw(st.one_of(before_cutoff, bad_times, st.just("2026-09-03T10:00:00Z")))
    if draw(rarely):
        data["referenced_workflows"] = draw(chains)
    if draw(rarely):
        data.update(draw(bad_binding()))
    if draw(rarely):
        data["event"] = draw(st.sampled_from(["push", "pull_request", "workflow_dispatch", "", None]))
    if draw(rarely):
        data["path"] = draw(st.sampled_from([".github/workflows/ci.yml", "", None, ".github/workflows/Fullsend.yml"]))
    if draw(rarely):
        data["id"] = draw(st.sampled_from([MY_ID, 0, -1, None, MY_ID - 1]))
    return rest.workflow_run(data)


chain_entry = st.fixed_dictionaries(
    {
        "path": st.sampled_from(
            [
                REF["path"],
                REF["path"] + "x",
                REF["path"].upper(),
                "evil/repo/.github/workflows/reusable-dispatch.yml@main",
                "",
            ]
        ),
        "ref": st.sampled_from([REF["ref"], "refs/heads/dev", "refs/tags/v1", ""]),
        "sha": st.sampled_from([REF["sha"], "abc"]),
    }
)
chains = st.lists(chain_entry, max_size=3)
bad_chains = chains.filter(lambda c: sorted((e["path"], e["ref"]) for e in c) != [(REF["path"], REF["ref"])])


@st.composite
def bad_binding(draw: Any) -> dict[str, Any]:
    """Fields that do NOT bind the run to item 7 under run name "org/repo#7"."""
    if draw(st.booleans()):
        prs = draw(st.lists(st.integers(min_value=1, max_value=500).filter(lambda n: n != 7), min_size=1, max_size=3))
        return {
            "pull_requests": [{"number": n} for n in prs],
            "display_title": draw(st.sampled_from(["org/repo#7", "org/repo#7 comment:1"])),
        }
    near_miss = st.sampled_from(
        [
            "org/repo#70",
            "org/repo#7 ",
            "org/repo#7  comment:1",
            "Org/repo#7",
            "org/repo#7\n",
            "org/repo#7 comment:0",
            "org/repo#07",
            "other/repo#7",
            "",
            "Fix typo",
        ]
    )
    title = draw(st.one_of(near_miss, st.text(max_size=24).filter(lambda s: not s.startswith("org/repo#7"))))
    return {
        "pull_requests": draw(st.sampled_from([[], None, "7", [{"number": "7"}], [{"number": None}]])),
        "display_title": title,
    }
