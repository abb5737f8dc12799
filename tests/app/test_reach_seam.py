"""docs/rules.md#token-in-reach: the one test seam opens only for the simulator's own pair."""

from __future__ import annotations

import pytest

from fullsend.app.action.confinement.children import reach_secrets, simulator_seam
from fullsend.simulator.fixtures import JOB_TOKEN


@pytest.mark.parametrize(
    ("api_url", "token", "opens"),
    [
        ("http://127.0.0.1:8765", JOB_TOKEN, True),
        ("http://localhost:41234/api", JOB_TOKEN, True),
        ("http://[::1]:9000", JOB_TOKEN, True),
        ("https://api.github.com", JOB_TOKEN, False),  # a real API with the public token: no seam
        ("http://127.0.0.1:8765", "ghs_not-the-simulators-token-0001", False),  # loopback with another token
        ("http://127.0.0.1.example.com", JOB_TOKEN, False),
        ("", JOB_TOKEN, False),
    ],
)
def test_the_simulator_seam_needs_the_loopback_api_and_the_simulators_own_token(api_url, token, opens):
    assert simulator_seam(api_url, token) is opens


def test_the_scan_looks_for_the_job_token_and_the_oidc_request_token_when_there_is_one():
    assert reach_secrets("ghs_a", {"ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc-b"}) == {
        "job token": "ghs_a",
        "OIDC request token": "oidc-b",
    }
    assert reach_secrets("ghs_a", {}) == {"job token": "ghs_a"}
