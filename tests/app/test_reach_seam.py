"""docs/rules.md#token-in-reach: the one test seam opens only when a test asks for it, for the
simulator's own pair (issue 45: a run started the way a runner starts it never gets it)."""

from __future__ import annotations

import pytest

from fullsend.app.action.confinement.children import reach_secrets, simulator_seam
from fullsend.simulator.fixtures import JOB_TOKEN

HOOKS = {"FULLSEND_TEST_HOOKS": "1"}


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
    assert simulator_seam(api_url, token, HOOKS) is opens


@pytest.mark.parametrize("environ", [{}, {"FULLSEND_TEST_HOOKS": "0"}, {"FULLSEND_TEST_HOOKS": "true"}])
def test_without_the_test_hook_the_simulators_own_pair_gets_no_seam(environ):
    assert simulator_seam("http://127.0.0.1:8765", JOB_TOKEN, environ) is False


def test_the_scan_looks_for_the_job_token_the_oidc_request_token_and_the_runtime_token():
    environ = {"ACTIONS_ID_TOKEN_REQUEST_TOKEN": "oidc-b", "ACTIONS_RUNTIME_TOKEN": "rt-c"}
    assert reach_secrets("ghs_a", environ) == {
        "job token": "ghs_a",
        "OIDC request token": "oidc-b",
        "runtime token": "rt-c",
    }
    assert reach_secrets("ghs_a", {}) == {"job token": "ghs_a"}
