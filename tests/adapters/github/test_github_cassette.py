"""vcrpy over the GitHub adapter (the recorded-cassette tier of docs/architecture.md "Tests"): a recorded interaction replays with no
server at all, and the cassette never holds a credential (the Authorization header is filtered)."""

from __future__ import annotations

from datetime import UTC, datetime

import vcr

from fullsend.adapters.github.forge import GitHubForge
from fullsend.core.model import Repo
from fullsend.simulator.fixtures import JOB_TOKEN, ROLE_TOKEN, add_comment_follow_up, standard_pr_scenario
from fullsend.simulator.server import GitHubSimulator
from tests.adapters.github.test_github_adapter import RecordingClock

RECORDER = vcr.VCR(filter_headers=["authorization"], record_mode="once", match_on=["method", "path", "query"])


def _read_everything(forge: GitHubForge) -> tuple:
    runs = forge.list_workflow_runs("fullsend.yml", datetime(2026, 1, 1, tzinfo=UTC)).runs
    return (
        forge.get_run(runs[-1].id),
        forge.list_run_jobs(runs[-1].id),
        forge.get_issue(7),
        forge.get_pull_request(7),
        forge.list_issue_comments(7),
        [r.id for r in runs],
    )


def test_a_recorded_cassette_replays_offline_and_holds_no_token(tmp_path):
    cassette = tmp_path / "github.yaml"
    with GitHubSimulator() as sim:
        standard_pr_scenario(sim)
        add_comment_follow_up(sim, "/fs-review please re-check the migration")
        api, graphql = sim.api_url, sim.graphql_url
        with RECORDER.use_cassette(str(cassette)):
            recorded = _read_everything(
                GitHubForge(Repo("org", "repo"), api, graphql, JOB_TOKEN, ROLE_TOKEN, RecordingClock())
            )
    text = cassette.read_text()
    assert JOB_TOKEN not in text and ROLE_TOKEN not in text
    assert "workflow_runs" in text
    # The simulator is gone: only the cassette can answer now.
    with RECORDER.use_cassette(str(cassette), record_mode="none"):
        replayed = _read_everything(
            GitHubForge(Repo("org", "repo"), api, graphql, JOB_TOKEN, ROLE_TOKEN, RecordingClock())
        )
    assert replayed == recorded
    assert recorded[-1] and recorded[1] and recorded[2].number == 7
