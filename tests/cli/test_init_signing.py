"""Issue 45: what ``fullsend init`` writes signs receipts and requires signed ones.

Only the stage jobs may request GitHub's OIDC token (``id-token: write``): OIDC tokens carry no
job claim, so any step of any job that can request one could sign a receipt (docs/architecture.md
"Signed receipts", its "Boundaries").  Route never has it; the shim's calling job grants it only as
the ceiling the called stage jobs need (GitHub refuses a called job that asks for more than its
caller grants) and runs no step of its own.  No written workflow sets ``allow_unsigned_receipts``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fullsend.app.commands.init import EXAMPLE_DISPATCH, HOSTED_DISPATCH, InitPlan, parse_stages, render_files

REPO_ROOT = Path(__file__).resolve().parents[2]
REF = "0123456789abcdef0123456789abcdef01234567"
PLANS = [
    InitPlan(parse_stages("all"), ref=REF),
    InitPlan(parse_stages("all"), ref=REF, dispatch="self-contained"),
    InitPlan(("review", "fix"), ref=REF, role_token="mint", dispatch="self-contained"),
    InitPlan(("code",), runtime="codex", ref=REF, role_token="mint"),
]


def _workflows(plan: InitPlan) -> dict[str, dict[str, Any]]:
    files = render_files(plan)
    return {str(p): yaml.safe_load(text) for p, text in files if p.parts[:2] == (".github", "workflows")}


def _dispatches() -> list[tuple[str, dict[str, Any]]]:
    """The shipped dispatch workflows (hosted, example) and every one init writes."""
    found = [(str(rel), yaml.safe_load((REPO_ROOT / rel).read_text())) for rel in (HOSTED_DISPATCH, EXAMPLE_DISPATCH)]
    for plan in PLANS:
        found += [(name, wf) for name, wf in _workflows(plan).items() if name.endswith("fullsend-dispatch.yml")]
    return found


def _signers(workflow: dict[str, Any]) -> set[str]:
    return {key for key, job in workflow["jobs"].items() if (job.get("permissions") or {}).get("id-token") == "write"}


@pytest.mark.parametrize(("name", "workflow"), _dispatches(), ids=lambda v: v if isinstance(v, str) else "")
def test_only_the_stage_jobs_of_a_dispatch_may_sign(name: str, workflow: dict[str, Any]) -> None:
    jobs = workflow["jobs"]
    stages = set(jobs) - {"route"}
    assert "route" in jobs and stages, name
    assert workflow["permissions"] == {}, name  # nothing above the jobs
    assert _signers(workflow) == stages, name
    assert "id-token" not in (jobs["route"].get("permissions") or {}), name
    for key in stages:
        (step,) = [s for s in jobs[key]["steps"] if s.get("id") == "steer"]
        assert step["with"]["receipt_issuer"] == "${{ vars.FULLSEND_RECEIPT_ISSUER }}", (name, key)
        assert "allow_unsigned_receipts" not in step["with"], (name, key)


@pytest.mark.parametrize("plan", PLANS, ids=["hosted-all", "self-contained-all", "self-contained-mint", "hosted-code"])
def test_the_shim_grants_id_token_only_as_the_ceiling_of_the_stage_jobs(plan: InitPlan) -> None:
    shim = _workflows(plan)[".github/workflows/fullsend.yml"]
    (job,) = shim["jobs"].values()
    assert shim["permissions"] == {}
    assert job["permissions"]["id-token"] == "write" and "uses" in job and "steps" not in job
    assert "allow_unsigned_receipts" not in (job.get("with") or {})


def test_the_example_shim_grants_id_token_only_as_the_ceiling_too() -> None:
    shim = yaml.safe_load((REPO_ROOT / "examples" / "fullsend.yml").read_text())
    (job,) = shim["jobs"].values()
    assert shim["permissions"] == {}
    assert job["permissions"]["id-token"] == "write" and "uses" in job and "steps" not in job
