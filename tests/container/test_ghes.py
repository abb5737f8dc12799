"""Issue 8, GHES: with ``GITHUB_API_URL=http://127.0.0.1:PORT/api/v3`` and
``GITHUB_GRAPHQL_URL=http://127.0.0.1:PORT/api/graphql`` (a GitHub Enterprise Server layout, the
simulator serving under that prefix) the skeleton's end-to-end scenario passes unchanged, and
every request the action makes stays under those two URLs (docs/architecture.md "GitHub access": nothing
hard-codes api.github.com or a path layout)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from fullsend.core.receipt.signed import receipt_claim
from fullsend.core.scalars import format_time
from fullsend.core.wire import OPENING_LINE
from fullsend.simulator.fixtures import add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.support.action_run import run_entrypoint, runner_env

COMMAND = "/fs-review please re-check the migration"


def _fresh(root: Path, name: str) -> Path:
    path = root / name
    path.mkdir()
    return path


def test_the_end_to_end_scenario_passes_on_a_ghes_layout(tmp_path):
    with GitHubSimulator(prefix="/api/v3") as sim:
        assert sim.api_url.endswith("/api/v3") and sim.graphql_url.endswith("/api/graphql")
        assert sim.graphql_url.rsplit(":", 1)[0] == sim.api_url.rsplit(":", 1)[0]
        fix = standard_pr_scenario(sim, created_at=format_time(datetime.now(UTC) - timedelta(seconds=60)))
        added: dict = {}
        sim.on_request(
            sim.match("GET", r"/actions/workflows/fullsend\.yml/runs"),
            lambda s: added.update(zip(("comment", "run"), add_comment_follow_up(s, COMMAND), strict=True)),
        )

        first = _fresh(tmp_path, "first")
        run = run_entrypoint(runner_env(first, sim, fix), first)
        assert run.exit_code == 0, run.stdout + run.stderr
        follow_up_id = added["run"]["id"]
        steers = [m for m in run.agent_messages if m.split("\n", 1)[0] == OPENING_LINE]
        assert len(steers) == 1 and "Instruction from @reviewer: please re-check the migration" in steers[0]
        assert run.outputs["outcome"] == "succeeded"
        assert run.outputs["steers"] == "1"
        assert run.outputs["consumed_run_ids"] == str(follow_up_id)
        assert run.outputs["head_sha"] == "aaa111"
        receipts = [c for c in sim.comments(fix.pr) if c["user"]["login"] == fix.job_login]
        assert len(receipts) == 1
        marker = receipt_claim(receipts[0]["body"])
        assert marker is not None and marker.consumed == (follow_up_id,) and marker.head == "aaa111"
        assert run.outputs["receipt_url"] == receipts[0]["html_url"]
        first_requests = sim.requests

        sim.reset_requests()
        queued = _fresh(tmp_path, "queued")
        skip = run_entrypoint(runner_env(queued, sim, fix, run_id=follow_up_id), queued)
        assert skip.exit_code == 0, skip.stdout + skip.stderr
        assert skip.outputs["outcome"] == "skipped"
        assert skip.outputs["skip_reason"] == "receipt"
        assert skip.agent_messages == []
        assert sim.request_count() <= 4  # the receipt query and its proof beside it: this run, the issuer's keys

        every = first_requests + sim.requests
        # GHES serves the API under /api/v3, GraphQL at /api/graphql and its OIDC issuer at /_services/token
        served = ("/api/v3/", "/_services/token/")
        outside = [r.raw_path for r in every if not (r.raw_path.startswith(served) or r.raw_path == "/api/graphql")]
        assert outside == []
        assert all(r.status not in (0, 404) for r in every), [(r.method, r.raw_path, r.status) for r in every]
