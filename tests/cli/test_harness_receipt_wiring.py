"""The harness ``steer:`` block, as
loaded from a file and merged with the inputs, decides whether the receipt check runs at all —
driven through ``app.action.skip.receipt.check_receipt`` and the GitHub adapter against the simulator."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fullsend.adapters.clock import SystemClock
from fullsend.adapters.github.forge import GitHubForge
from fullsend.app.action.skip.facts import PreflightFacts
from fullsend.app.action.skip.receipt import check_receipt
from fullsend.core.identity import Identity
from fullsend.core.model import Repo
from fullsend.core.receipt.marker import receipt_body
from fullsend.harness import load_harness, with_overrides
from fullsend.simulator.server import GitHubSimulator

JOB, ROLE = "ghs_job_token_v40", "ghs_role_token_v40"
RUN = 33740015232


@pytest.fixture
def sim() -> Iterator[GitHubSimulator]:
    tokens = {JOB: Identity("github-actions[bot]", True), ROLE: Identity("fullsend[bot]", True)}
    with GitHubSimulator(tokens=tokens) as server:
        server.add_pull_request(7, "b" * 40)
        server.add_comment(7, receipt_body([RUN], "abc"), "github-actions[bot]")  # R(33740015232,abc)
        server.reset_requests()
        yield server


def receipt_check(sim: GitHubSimulator, tmp_path: Path, harness_yaml: str, steer_enabled_input: bool | None = None):
    path = tmp_path / "harness.yaml"
    path.write_text(harness_yaml, encoding="utf-8")
    steer = with_overrides(load_harness(path).steer, steer_enabled_input, None, None)
    facts = PreflightFacts(
        stage="triage",
        run_id_raw=str(RUN),
        run_attempt="1",
        repository="org/repo",
        item_number=7,
        job_token=JOB,
        role_token=ROLE,
        minted=True,
        fullsend_dir=str(tmp_path / ".fullsend"),
        steering_enabled=steer.steer_enabled,
        allow_unsigned_receipts=True,  # the harness wiring, on the unsigned form (under its input)
    )
    forge = GitHubForge(Repo("org", "repo"), sim.api_url, sim.graphql_url, JOB, ROLE, SystemClock())
    lines: list[tuple[str, str]] = []
    skip = check_receipt(forge, facts, lambda level, message: lines.append((level, message)))
    return skip, lines


def test_V40_opted_out_harness_never_reads_the_receipt(sim: GitHubSimulator, tmp_path: Path) -> None:
    skip, lines = receipt_check(sim, tmp_path, "steer: {enabled: false}\nprompt: x\n")
    assert skip is None and lines == []
    assert sim.requests == []


def test_V49_harness_without_steer_block_is_default_on(sim: GitHubSimulator, tmp_path: Path) -> None:
    skip, _ = receipt_check(sim, tmp_path, "prompt: x\npre_script: ./pre.sh\n")
    assert skip is not None and skip.rule_id == "receipt-lists-my-run"
    timeline_reads = [r for r in sim.requests if r.path == "/graphql" and "issueOrPullRequest" in r.body.decode()]
    assert len(timeline_reads) == 1  # it read the timeline (GraphQL's receipt view, issue 18)


def test_cap_only_block_still_checks_receipts(sim: GitHubSimulator, tmp_path: Path) -> None:
    skip, _ = receipt_check(sim, tmp_path, "steer: {max_steers: 3}\n")
    assert skip is not None


def test_steer_enabled_input_overrides_the_harness_opt_out(sim: GitHubSimulator, tmp_path: Path) -> None:
    skip, _ = receipt_check(sim, tmp_path, "steer: {enabled: false}\n", steer_enabled_input=True)
    assert skip is not None
