"""Which issuer signs receipts and where its keys are (``fullsend.core.receipt.proof.issuer``):
each server kind GitHub documents, from configuration only (docs/rules.md "Receipt proof")."""

from __future__ import annotations

import pytest

from fullsend.core.receipt.proof.issuer import default_issuer, keys_url, resolve_issuer, server_for_api


@pytest.mark.parametrize(
    ("server_url", "issuer"),
    [
        ("https://github.com", "https://token.actions.githubusercontent.com"),
        ("https://GitHub.com/", "https://token.actions.githubusercontent.com"),
        ("", "https://token.actions.githubusercontent.com"),
        ("https://octocorp.ghe.com", "https://token.actions.octocorp.ghe.com"),
        ("https://ghes.example.com", "https://ghes.example.com/_services/token"),
        ("https://user@ghes.example.com:8443", "https://ghes.example.com:8443/_services/token"),
        ("http://[::1", "https://token.actions.githubusercontent.com"),  # unreadable: github.com's
    ],
)
def test_the_issuer_the_server_implies(server_url, issuer):
    assert default_issuer(server_url) == issuer


@pytest.mark.parametrize(
    ("api_url", "server"),
    [
        ("https://api.github.com", "https://github.com"),
        ("https://api.octocorp.ghe.com", "https://octocorp.ghe.com"),
        ("https://ghes.example.com/api/v3", "https://ghes.example.com"),
        ("http://127.0.0.1:8765", "http://127.0.0.1:8765"),
    ],
)
def test_the_server_an_api_base_belongs_to(api_url, server):
    assert server_for_api(api_url) == server


def test_a_configured_issuer_wins_and_its_keys_are_under_it():
    assert resolve_issuer("https://issuer.example.com/", "https://github.com") == "https://issuer.example.com"
    assert resolve_issuer("  ", "https://github.com") == "https://token.actions.githubusercontent.com"
    assert keys_url("https://token.actions.githubusercontent.com") == (
        "https://token.actions.githubusercontent.com/.well-known/jwks"
    )
